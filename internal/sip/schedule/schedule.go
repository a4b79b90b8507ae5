package schedule

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

// Host is a BareMetalHost as the scheduler sees it.
type Host struct {
	Namespace, Name string
	Labels          map[string]string
	// Unusable says why the host cannot be given to a cluster (in error,
	// being deprovisioned or deleted, detached, powered off); empty when
	// it can.
	Unusable string
}

// Key is the host's namespace/name.
func (h *Host) Key() string { return h.Namespace + "/" + h.Name }

// Role is what one role of the cluster asks for.
type Role struct {
	Role        sipv1.BMHRole
	Selector    labels.Selector
	TopologyKey string
	Active      int
	Standby     int
}

// Request is what a SIPCluster asks for.
type Request struct {
	// Namespace and Name of the SIPCluster.
	Namespace, Name string
	// Roles in the order they are scheduled.
	Roles []Role
}

// Pick is a host given to the cluster.
type Pick struct {
	Host    *Host
	Role    sipv1.BMHRole
	Standby bool
}

// Plan is the cluster's hosts after scheduling.
type Plan struct {
	// Picks are every host of the cluster, role by role, actives before
	// standbys, each in name order.
	Picks []Pick
	// Release are hosts labelled for the cluster that it no longer has.
	Release []*Host
}

// Role returns the picks of one role.
func (p Plan) Role(r sipv1.BMHRole) (active, standby []*Host) {
	for _, pk := range p.Picks {
		if pk.Role != r {
			continue
		}
		if pk.Standby {
			standby = append(standby, pk.Host)
		} else {
			active = append(active, pk.Host)
		}
	}
	return active, standby
}

// UnschedulableError says why a role could not get its hosts.
type UnschedulableError struct {
	Role             sipv1.BMHRole
	Wanted, Got      int
	Matched          int
	Excluded         map[string][]string // reason → host keys, sorted
	ExcludedExamples int                 // how many keys per reason the message shows
}

func (e *UnschedulableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d hosts wanted, %d could be given (%d matched the labelSelector)", e.Role, e.Wanted, e.Got, e.Matched)
	reasons := make([]string, 0, len(e.Excluded))
	for r := range e.Excluded {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	n := e.ExcludedExamples
	if n <= 0 {
		n = 3
	}
	for _, r := range reasons {
		keys := e.Excluded[r]
		shown := keys[:min(n, len(keys))]
		fmt.Fprintf(&b, "; %d %s (%s", len(keys), r, strings.Join(shown, ", "))
		if len(keys) > len(shown) {
			fmt.Fprintf(&b, ", ...")
		}
		b.WriteString(")")
	}
	return b.String()
}

// Reasons a host was left out, as UnschedulableError.Excluded keys.
const (
	reasonClaimed      = "claimed by another SIPCluster"
	reasonUnusable     = "not usable"
	reasonNoTopology   = "without the topology label"
	reasonDomainUsed   = "in a topology domain the cluster already uses"
	reasonOtherRole    = "already given to the cluster's other role"
	reasonCountReached = "not needed"
)

// Schedule decides the cluster's hosts. hosts is every BareMetalHost the
// cluster may see; it is not changed.
func Schedule(req Request, hosts []Host) (Plan, error) {
	// The cluster's current hosts, and the others by name.
	mine := make([]*Host, 0)
	others := make([]*Host, 0, len(hosts))
	for i := range hosts {
		h := &hosts[i]
		if ours(h, req) {
			mine = append(mine, h)
		} else {
			others = append(others, h)
		}
	}
	byName := func(s []*Host) {
		sort.Slice(s, func(i, j int) bool { return s[i].Key() < s[j].Key() })
	}
	byName(mine)
	byName(others)

	// domains: topology key → value → the host of the cluster there.
	domains := map[string]map[string]string{}
	taken := func(key, value string) (string, bool) {
		h, ok := domains[key][value]
		return h, ok
	}
	take := func(key, value, host string) {
		if key == "" {
			return
		}
		if domains[key] == nil {
			domains[key] = map[string]string{}
		}
		domains[key][value] = host
	}
	used := map[*Host]bool{}
	var plan Plan

	for _, role := range req.Roles {
		sel := role.Selector
		if sel == nil {
			sel = labels.Everything()
		}
		fits := func(h *Host) (string, bool) {
			if h.Unusable != "" {
				return reasonUnusable, false
			}
			if !sel.Matches(labels.Set(h.Labels)) {
				return "", false
			}
			if role.TopologyKey != "" {
				v, ok := h.Labels[role.TopologyKey]
				if !ok {
					return reasonNoTopology, false
				}
				if _, ok := taken(role.TopologyKey, v); ok {
					return reasonDomainUsed, false
				}
			}
			return "", true
		}
		give := func(h *Host, standby bool) {
			used[h] = true
			if role.TopologyKey != "" {
				take(role.TopologyKey, h.Labels[role.TopologyKey], h.Key())
			}
			plan.Picks = append(plan.Picks, Pick{Host: h, Role: role.Role, Standby: standby})
		}

		// Kept hosts of this role: actives, then standbys promoted to fill
		// the actives, then standbys. Each is checked as it is given, so
		// two kept hosts never share a topology domain.
		var keptActive, keptStandby []*Host
		for _, h := range mine {
			if used[h] || h.Labels[sipv1.NodeTypeLabel] != string(role.Role) {
				continue
			}
			if h.Labels[sipv1.StandbyLabel] == "true" {
				keptStandby = append(keptStandby, h)
			} else {
				keptActive = append(keptActive, h)
			}
		}
		var actives, standbys []*Host
		keep := func(h *Host, standby bool) {
			if _, ok := fits(h); !ok {
				return
			}
			give(h, standby)
			if standby {
				standbys = append(standbys, h)
			} else {
				actives = append(actives, h)
			}
		}
		for _, h := range keptActive {
			if len(actives) < role.Active {
				keep(h, false)
			}
		}
		for _, h := range keptStandby {
			if len(actives) < role.Active {
				keep(h, false)
			}
		}
		for _, h := range keptStandby {
			if !used[h] && len(standbys) < role.Standby {
				keep(h, true)
			}
		}
		needActive, needStandby := role.Active-len(actives), role.Standby-len(standbys)

		matched := 0
		excluded := map[string][]string{}
		exclude := func(reason string, h *Host) { excluded[reason] = append(excluded[reason], h.Key()) }
		for _, h := range others {
			if !sel.Matches(labels.Set(h.Labels)) {
				continue
			}
			matched++
			switch {
			case used[h]:
				exclude(reasonOtherRole, h)
				continue
			case h.Labels[sipv1.ClusterNameLabel] != "" || h.Labels[sipv1.ClusterNamespaceLabel] != "":
				exclude(reasonClaimed, h)
				continue
			}
			if needActive == 0 && needStandby == 0 {
				exclude(reasonCountReached, h)
				continue
			}
			if reason, ok := fits(h); !ok {
				if h.Unusable != "" {
					reason = reasonUnusable + " (" + h.Unusable + ")"
				}
				exclude(reason, h)
				continue
			}
			if needActive > 0 {
				give(h, false)
				needActive--
			} else {
				give(h, true)
				needStandby--
			}
		}
		for _, h := range mine {
			if used[h] || !sel.Matches(labels.Set(h.Labels)) {
				continue
			}
			if h.Labels[sipv1.NodeTypeLabel] == string(role.Role) {
				matched++
			}
		}
		if needActive > 0 || needStandby > 0 {
			delete(excluded, reasonCountReached)
			want := role.Active + role.Standby
			return Plan{}, &UnschedulableError{Role: role.Role, Wanted: want, Got: want - needActive - needStandby, Matched: matched, Excluded: excluded}
		}
	}

	// Picks in a stable order: role, actives first, name.
	order := map[sipv1.BMHRole]int{}
	for i, r := range req.Roles {
		order[r.Role] = i
	}
	slices.SortStableFunc(plan.Picks, func(a, b Pick) int {
		if d := order[a.Role] - order[b.Role]; d != 0 {
			return d
		}
		if a.Standby != b.Standby {
			if a.Standby {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Host.Key(), b.Host.Key())
	})
	for _, h := range mine {
		if !used[h] {
			plan.Release = append(plan.Release, h)
		}
	}
	return plan, nil
}

// ours reports whether the host is labelled for the cluster.
func ours(h *Host, req Request) bool {
	return h.Labels[sipv1.ClusterNameLabel] == req.Name && h.Labels[sipv1.ClusterNamespaceLabel] == req.Namespace && req.Name != ""
}

// NewRequest turns a SIPCluster's spec.nodes into a Request, checking
// every field; the error names each bad one by its path.
func NewRequest(c *sipv1.SIPCluster) (Request, error) {
	req := Request{Namespace: c.Namespace, Name: c.Name}
	var errs []string
	for role := range c.Spec.Nodes {
		if !slices.Contains(sipv1.Roles, role) {
			errs = append(errs, fmt.Sprintf("spec.nodes.%s: unknown role (want %s or %s)", role, sipv1.RoleControlPlane, sipv1.RoleWorker))
		}
	}
	for _, role := range sipv1.Roles {
		ns, ok := c.Spec.Nodes[role]
		if !ok {
			continue
		}
		path := "spec.nodes." + string(role)
		if len(ns.LabelSelector.MatchLabels) == 0 && len(ns.LabelSelector.MatchExpressions) == 0 {
			errs = append(errs, path+".labelSelector: empty: it would pick any host")
		}
		sel, err := metav1.LabelSelectorAsSelector(&ns.LabelSelector)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s.labelSelector: %v", path, err))
		}
		r := Role{Role: role, Selector: sel, TopologyKey: ns.TopologyKey}
		if ns.Count != nil {
			r.Active, r.Standby = ns.Count.Active, ns.Count.Standby
		}
		if r.Active < 0 {
			errs = append(errs, fmt.Sprintf("%s.count.active: %d is negative", path, r.Active))
		}
		if r.Standby < 0 {
			errs = append(errs, fmt.Sprintf("%s.count.standby: %d is negative", path, r.Standby))
		}
		if ns.TopologyKey != "" {
			if msgs := validateLabelKey(ns.TopologyKey); len(msgs) > 0 {
				errs = append(errs, fmt.Sprintf("%s.topologyKey: %q: %s", path, ns.TopologyKey, strings.Join(msgs, "; ")))
			}
		}
		req.Roles = append(req.Roles, r)
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return Request{}, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return req, nil
}
