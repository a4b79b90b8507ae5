package schedule

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

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
	reasonNoMatch      = "no longer matching the labelSelector"
)

// Schedule decides the cluster's hosts. hosts is every BareMetalHost the
// cluster may see; it is not changed.
//
// It runs in stages, each a method of one scheduler: index the hosts, keep
// the cluster's own hosts for every role (promoting standbys where actives
// are missing), place new candidates role by role, then order the plan.
func Schedule(req Request, hosts []Host) (Plan, error) {
	s := newScheduler(req, hosts)
	// The cluster's own hosts go first, every role: they claim their
	// topology domains before any new host is looked at, so a new host of
	// one role never displaces a kept host of another.
	for _, rs := range s.roles {
		s.keepOwn(rs)
	}
	for _, rs := range s.roles {
		if err := s.placeNew(rs); err != nil {
			return Plan{}, err
		}
	}
	return s.finish(req.Roles), nil
}

// scheduler is one Schedule call's working state.
type scheduler struct {
	// mine are the hosts labelled for the cluster, others the rest; both
	// in name order.
	mine, others []*Host
	roles        []*roleState
	// domains: topology key → value → the host of the cluster there. The
	// topology rule is checked against every host given so far, of any role.
	domains map[string]map[string]string
	used    map[*Host]bool
	plan    Plan
}

// roleState is one role's view: its selector, what it has been given so
// far and why the hosts it did not get were left out.
type roleState struct {
	Role
	sel               labels.Selector
	actives, standbys int
	excluded          map[string][]string
	matched           int
}

// exclude records why h was left out of the role.
func (rs *roleState) exclude(reason string, h *Host) {
	rs.excluded[reason] = append(rs.excluded[reason], h.Key())
}

// newScheduler indexes the hosts: the cluster's own and the others, each by
// name, and a state per role in the request's order.
func newScheduler(req Request, hosts []Host) *scheduler {
	s := &scheduler{
		mine:    make([]*Host, 0),
		others:  make([]*Host, 0, len(hosts)),
		domains: map[string]map[string]string{},
		used:    map[*Host]bool{},
	}
	for i := range hosts {
		h := &hosts[i]
		if ours(h, req) {
			s.mine = append(s.mine, h)
		} else {
			s.others = append(s.others, h)
		}
	}
	slices.SortFunc(s.mine, compareHosts)
	slices.SortFunc(s.others, compareHosts)
	s.roles = make([]*roleState, len(req.Roles))
	for i, role := range req.Roles {
		sel := role.Selector
		if sel == nil {
			sel = labels.Everything()
		}
		s.roles[i] = &roleState{Role: role, sel: sel, excluded: map[string][]string{}}
	}
	return s
}

// fits says whether h may be given to the role now, and if not, why.
func (s *scheduler) fits(rs *roleState, h *Host) (string, bool) {
	if h.Unusable != "" {
		return reasonUnusable + " (" + h.Unusable + ")", false
	}
	if !rs.sel.Matches(labels.Set(h.Labels)) {
		return reasonNoMatch, false
	}
	if rs.TopologyKey != "" {
		v, ok := h.Labels[rs.TopologyKey]
		if !ok {
			return reasonNoTopology, false
		}
		if _, ok := s.domains[rs.TopologyKey][v]; ok {
			return reasonDomainUsed, false
		}
	}
	return "", true
}

// give adds h to the plan for the role and claims its topology domain.
func (s *scheduler) give(rs *roleState, h *Host, standby bool) {
	s.used[h] = true
	if key := rs.TopologyKey; key != "" {
		if s.domains[key] == nil {
			s.domains[key] = map[string]string{}
		}
		s.domains[key][h.Labels[key]] = h.Key()
	}
	s.plan.Picks = append(s.plan.Picks, Pick{Host: h, Role: rs.Role.Role, Standby: standby})
	if standby {
		rs.standbys++
	} else {
		rs.actives++
	}
}

// keepOwn gives the role back the cluster's hosts of that role that still
// fit: kept actives, then standbys promoted to fill the actives, then
// standbys. A host that no longer fits is left for release.
func (s *scheduler) keepOwn(rs *roleState) {
	var keptActive, keptStandby []*Host
	for _, h := range s.mine {
		if h.Labels[sipv1.NodeTypeLabel] != string(rs.Role.Role) {
			continue
		}
		if rs.sel.Matches(labels.Set(h.Labels)) {
			rs.matched++
		}
		if h.Labels[sipv1.StandbyLabel] == "true" {
			keptStandby = append(keptStandby, h)
		} else {
			keptActive = append(keptActive, h)
		}
	}
	keep := func(h *Host, standby bool) {
		if reason, ok := s.fits(rs, h); !ok {
			rs.exclude("of the cluster, released: "+reason, h)
			return
		}
		s.give(rs, h, standby)
	}
	for _, h := range keptActive {
		if rs.actives < rs.Active {
			keep(h, false)
		}
	}
	// Promotion: a standby fills a missing active before a new host does.
	for _, h := range keptStandby {
		if rs.actives < rs.Active {
			keep(h, false)
		}
	}
	for _, h := range keptStandby {
		if !s.used[h] && rs.standbys < rs.Standby {
			keep(h, true)
		}
	}
}

// placeNew fills what the role still lacks from the other hosts, in name
// order, actives first. It fails when the role cannot get all its hosts.
func (s *scheduler) placeNew(rs *roleState) error {
	needActive, needStandby := rs.Active-rs.actives, rs.Standby-rs.standbys
	for _, h := range s.others {
		if !rs.sel.Matches(labels.Set(h.Labels)) {
			continue
		}
		rs.matched++
		switch {
		case s.used[h]:
			rs.exclude(reasonOtherRole, h)
			continue
		case h.Labels[sipv1.ClusterNameLabel] != "" || h.Labels[sipv1.ClusterNamespaceLabel] != "":
			rs.exclude(reasonClaimed, h)
			continue
		}
		if needActive <= 0 && needStandby <= 0 {
			rs.exclude(reasonCountReached, h)
			continue
		}
		if reason, ok := s.fits(rs, h); !ok {
			rs.exclude(reason, h)
			continue
		}
		if needActive > 0 {
			s.give(rs, h, false)
			needActive--
		} else {
			s.give(rs, h, true)
			needStandby--
		}
	}
	if needActive > 0 || needStandby > 0 {
		// "Not needed" is no reason when the role is short.
		delete(rs.excluded, reasonCountReached)
		want := rs.Active + rs.Standby
		return &UnschedulableError{Role: rs.Role.Role, Wanted: want, Got: rs.actives + rs.standbys, Matched: rs.matched, Excluded: rs.excluded}
	}
	return nil
}

// finish puts the picks in a stable order (role, actives first, name) and
// releases the cluster's hosts that were not kept.
func (s *scheduler) finish(roles []Role) Plan {
	order := map[sipv1.BMHRole]int{}
	for i, r := range roles {
		order[r.Role] = i
	}
	slices.SortStableFunc(s.plan.Picks, func(a, b Pick) int {
		if d := order[a.Role] - order[b.Role]; d != 0 {
			return d
		}
		if a.Standby != b.Standby {
			if a.Standby {
				return 1
			}
			return -1
		}
		return compareHosts(a.Host, b.Host)
	})
	for _, h := range s.mine {
		if !s.used[h] {
			s.plan.Release = append(s.plan.Release, h)
		}
	}
	return s.plan
}

// compareHosts orders hosts by namespace, then name: Key order, without
// building the keys (a sort of 10,000 hosts spent most of its time there).
func compareHosts(a, b *Host) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
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
	if msgs := validation.IsValidLabelValue(c.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Sprintf("metadata.name %q: the hosts carry it as a label value: %s", c.Name, strings.Join(msgs, "; ")))
	}
	if len(c.Spec.Nodes) == 0 {
		errs = append(errs, fmt.Sprintf("spec.nodes: no role: want %s, %s or both", sipv1.RoleControlPlane, sipv1.RoleWorker))
	}
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
		// Bounded, so that active+standby cannot overflow.
		for _, n := range []struct {
			field string
			v     int
		}{{"active", r.Active}, {"standby", r.Standby}} {
			switch {
			case n.v < 0:
				errs = append(errs, fmt.Sprintf("%s.count.%s: %d is negative", path, n.field, n.v))
			case n.v > sipv1.MaxNodeCount:
				errs = append(errs, fmt.Sprintf("%s.count.%s: %d is more than %d", path, n.field, n.v, sipv1.MaxNodeCount))
			}
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
