package schedule

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

const (
	ns   = "tenant"
	name = "c1"
)

// host builds a host in namespace "hosts": rack label, flavor label, extra labels k=v.
func host(n, rack, flavor string, kv ...string) Host {
	l := map[string]string{"flavor": flavor}
	if rack != "" {
		l["rack"] = rack
	}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return Host{Namespace: "hosts", Name: n, Labels: l}
}

// member labels a host as the cluster's (ours) with role and standby.
func member(h Host, role sipv1.BMHRole, standby bool) Host {
	h.Labels[sipv1.ClusterNamespaceLabel] = ns
	h.Labels[sipv1.ClusterNameLabel] = name
	h.Labels[sipv1.NodeTypeLabel] = string(role)
	if standby {
		h.Labels[sipv1.StandbyLabel] = "true"
	}
	return h
}

func unusable(h Host, why string) Host { h.Unusable = why; return h }

func role(r sipv1.BMHRole, flavor, key string, active, standby int) Role {
	return Role{Role: r, Selector: labels.SelectorFromSet(labels.Set{"flavor": flavor}), TopologyKey: key, Active: active, Standby: standby}
}

// summary renders a plan as "role:active=a,b standby=c | ... release=x".
func summary(p Plan) string {
	var parts []string
	for _, r := range sipv1.Roles {
		a, s := p.Role(r)
		if len(a)+len(s) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s:active=%s standby=%s", r, names(a), names(s)))
	}
	parts = append(parts, "release="+names(p.Release))
	return strings.Join(parts, " | ")
}

func names(hs []*Host) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Name)
	}
	return strings.Join(out, ",")
}

func TestSchedule(t *testing.T) {
	cp := role(sipv1.RoleControlPlane, "cp", "rack", 3, 0)
	tests := []struct {
		name    string
		roles   []Role
		hosts   []Host
		want    string
		wantErr []string // substrings of the Unschedulable message
	}{
		{
			name:  "one host per rack",
			roles: []Role{cp},
			hosts: []Host{host("a1", "r1", "cp"), host("a2", "r1", "cp"), host("b1", "r2", "cp"), host("c1", "r3", "cp"), host("d1", "r4", "cp")},
			want:  "ControlPlane:active=a1,b1,c1 standby= | release=",
		},
		{
			name:    "not enough racks",
			roles:   []Role{cp},
			hosts:   []Host{host("a1", "r1", "cp"), host("a2", "r1", "cp"), host("b1", "r2", "cp"), host("w1", "r3", "worker")},
			wantErr: []string{"ControlPlane: 3 hosts wanted, 2 could be given (3 matched the labelSelector)", "1 in a topology domain the cluster already uses (hosts/a2)"},
		},
		{
			name:  "standby after active",
			roles: []Role{role(sipv1.RoleControlPlane, "cp", "rack", 2, 1)},
			hosts: []Host{host("a", "r1", "cp"), host("b", "r2", "cp"), host("c", "r3", "cp"), host("d", "r4", "cp")},
			want:  "ControlPlane:active=a,b standby=c | release=",
		},
		{
			name:  "both roles share the rack rule",
			roles: []Role{role(sipv1.RoleControlPlane, "cp", "rack", 1, 0), role(sipv1.RoleWorker, "w", "rack", 2, 0)},
			hosts: []Host{host("cp1", "r1", "cp"), host("w1", "r1", "w"), host("w2", "r2", "w"), host("w3", "r3", "w")},
			want:  "ControlPlane:active=cp1 standby= | Worker:active=w2,w3 standby= | release=",
		},
		{
			name:  "roles with different keys do not constrain each other",
			roles: []Role{role(sipv1.RoleControlPlane, "cp", "rack", 1, 0), role(sipv1.RoleWorker, "w", "server", 2, 0)},
			hosts: []Host{host("cp1", "r1", "cp", "server", "s1"), host("w1", "r1", "w", "server", "s2"), host("w2", "r1", "w", "server", "s3")},
			want:  "ControlPlane:active=cp1 standby= | Worker:active=w1,w2 standby= | release=",
		},
		{
			name:  "pre-labelled hosts count first",
			roles: []Role{role(sipv1.RoleControlPlane, "cp", "rack", 2, 0)},
			hosts: []Host{host("a", "r1", "cp"), host("b", "r2", "cp"), member(host("z", "r3", "cp"), sipv1.RoleControlPlane, false)},
			want:  "ControlPlane:active=a,z standby= | release=",
		},
		{
			name:    "hosts of another cluster are left alone",
			roles:   []Role{role(sipv1.RoleControlPlane, "cp", "rack", 2, 0)},
			hosts:   []Host{host("a", "r1", "cp"), host("b", "r2", "cp", sipv1.ClusterNamespaceLabel, "other", sipv1.ClusterNameLabel, "c2")},
			wantErr: []string{"2 hosts wanted, 1 could be given", "1 claimed by another SIPCluster (hosts/b)"},
		},
		{
			name:    "unusable hosts are not picked",
			roles:   []Role{role(sipv1.RoleControlPlane, "cp", "rack", 2, 0)},
			hosts:   []Host{host("a", "r1", "cp"), unusable(host("b", "r2", "cp"), "in error")},
			wantErr: []string{"1 not usable (in error) (hosts/b)"},
		},
		{
			name:    "a host without the topology label is not picked",
			roles:   []Role{role(sipv1.RoleControlPlane, "cp", "rack", 2, 0)},
			hosts:   []Host{host("a", "r1", "cp"), host("b", "", "cp")},
			wantErr: []string{"1 without the topology label (hosts/b)"},
		},
		{
			name:  "no topology key: any hosts",
			roles: []Role{role(sipv1.RoleWorker, "w", "", 2, 0)},
			hosts: []Host{host("a", "r1", "w"), host("b", "r1", "w")},
			want:  "Worker:active=a,b standby= | release=",
		},
		{
			name:  "failed active: the standby is promoted and a new standby found",
			roles: []Role{role(sipv1.RoleControlPlane, "cp", "rack", 2, 1)},
			hosts: []Host{
				unusable(member(host("a", "r1", "cp"), sipv1.RoleControlPlane, false), "powered off"),
				member(host("b", "r2", "cp"), sipv1.RoleControlPlane, false),
				member(host("c", "r3", "cp"), sipv1.RoleControlPlane, true),
				host("d", "r4", "cp"),
			},
			want: "ControlPlane:active=b,c standby=d | release=a",
		},
		{
			name:  "a deleted active (gone from the list) is replaced by the standby",
			roles: []Role{role(sipv1.RoleControlPlane, "cp", "rack", 2, 1)},
			hosts: []Host{
				member(host("b", "r2", "cp"), sipv1.RoleControlPlane, false),
				member(host("c", "r3", "cp"), sipv1.RoleControlPlane, true),
				host("d", "r4", "cp"),
			},
			want: "ControlPlane:active=b,c standby=d | release=",
		},
		{
			name:  "scale down releases the last actives, keeps the standby",
			roles: []Role{role(sipv1.RoleWorker, "w", "rack", 2, 1)},
			hosts: []Host{
				member(host("a", "r1", "w"), sipv1.RoleWorker, false),
				member(host("b", "r2", "w"), sipv1.RoleWorker, false),
				member(host("c", "r3", "w"), sipv1.RoleWorker, false),
				member(host("d", "r4", "w"), sipv1.RoleWorker, true),
			},
			want: "Worker:active=a,b standby=d | release=c",
		},
		{
			name:  "scale to zero releases everything",
			roles: []Role{role(sipv1.RoleWorker, "w", "rack", 0, 0)},
			hosts: []Host{member(host("a", "r1", "w"), sipv1.RoleWorker, false), member(host("d", "r4", "w"), sipv1.RoleWorker, true)},
			want:  "release=a,d",
		},
		{
			name:  "a member whose labels no longer match is released",
			roles: []Role{role(sipv1.RoleWorker, "w", "rack", 1, 0)},
			hosts: []Host{member(host("a", "r1", "gpu"), sipv1.RoleWorker, false), host("b", "r2", "w")},
			want:  "Worker:active=b standby= | release=a",
		},
		{
			name:  "two members in one rack: one is released",
			roles: []Role{role(sipv1.RoleWorker, "w", "rack", 2, 0)},
			hosts: []Host{member(host("a", "r1", "w"), sipv1.RoleWorker, false), member(host("b", "r1", "w"), sipv1.RoleWorker, false), host("c", "r2", "w")},
			want:  "Worker:active=a,c standby= | release=b",
		},
		{
			name:  "a kept worker keeps its rack against a new control-plane host",
			roles: []Role{role(sipv1.RoleControlPlane, "cp", "rack", 1, 0), role(sipv1.RoleWorker, "w", "rack", 1, 0)},
			hosts: []Host{host("cp-a", "r1", "cp"), host("cp-b", "r2", "cp"), member(host("w", "r1", "w"), sipv1.RoleWorker, false)},
			want:  "ControlPlane:active=cp-b standby= | Worker:active=w standby= | release=",
		},
		{
			name:    "a kept host that failed is named with its reason",
			roles:   []Role{role(sipv1.RoleWorker, "w", "rack", 2, 0)},
			hosts:   []Host{unusable(member(host("a", "r1", "w"), sipv1.RoleWorker, false), "powered off"), member(host("b", "r2", "w"), sipv1.RoleWorker, false)},
			wantErr: []string{"Worker: 2 hosts wanted, 1 could be given (2 matched the labelSelector)", "1 of the cluster, released: not usable (powered off) (hosts/a)"},
		},
		{
			name:    "a host given to the control plane is not also a worker",
			roles:   []Role{role(sipv1.RoleControlPlane, "any", "", 1, 0), role(sipv1.RoleWorker, "any", "", 1, 0)},
			hosts:   []Host{host("a", "r1", "any")},
			wantErr: []string{"Worker: 1 hosts wanted, 0 could be given (1 matched the labelSelector); 1 already given to the cluster's other role (hosts/a)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hosts := slices.Clone(tc.hosts)
			p, err := Schedule(Request{Namespace: ns, Name: name, Roles: tc.roles}, hosts)
			if tc.wantErr != nil {
				var ue *UnschedulableError
				if !errors.As(err, &ue) {
					t.Fatalf("got plan %q, err %v; want Unschedulable", summary(p), err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("message %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(p); got != tc.want {
				t.Errorf("plan\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestScheduleIsStable: scheduling again with the plan's labels applied
// keeps every host where it is.
func TestScheduleIsStable(t *testing.T) {
	var hosts []Host
	for i := range 60 {
		f := "w"
		if i%7 == 0 {
			f = "cp"
		}
		hosts = append(hosts, host(fmt.Sprintf("h%02d", i), fmt.Sprintf("r%d", i%20), f))
	}
	req := Request{Namespace: ns, Name: name, Roles: []Role{role(sipv1.RoleControlPlane, "cp", "rack", 3, 1), role(sipv1.RoleWorker, "w", "rack", 10, 2)}}
	p, err := Schedule(req, hosts)
	if err != nil {
		t.Fatal(err)
	}
	first := summary(p)
	labelled := apply(hosts, p)
	p2, err := Schedule(req, labelled)
	if err != nil {
		t.Fatal(err)
	}
	if got := summary(p2); got != first {
		t.Errorf("second pass moved hosts:\n%s\n%s", first, got)
	}
}

// apply returns hosts with the plan's labels, as the controller writes them.
func apply(hosts []Host, p Plan) []Host {
	out := make([]Host, len(hosts))
	idx := map[string]int{}
	for i, h := range hosts {
		out[i] = Host{Namespace: h.Namespace, Name: h.Name, Unusable: h.Unusable, Labels: map[string]string{}}
		for k, v := range h.Labels {
			out[i].Labels[k] = v
		}
		idx[h.Key()] = i
	}
	for _, h := range p.Release {
		l := out[idx[h.Key()]].Labels
		for _, k := range []string{sipv1.ClusterNamespaceLabel, sipv1.ClusterNameLabel, sipv1.NodeTypeLabel, sipv1.StandbyLabel} {
			delete(l, k)
		}
	}
	for _, pk := range p.Picks {
		out[idx[pk.Host.Key()]] = member(out[idx[pk.Host.Key()]], pk.Role, pk.Standby)
		if !pk.Standby {
			delete(out[idx[pk.Host.Key()]].Labels, sipv1.StandbyLabel)
		}
	}
	return out
}

func TestNewRequest(t *testing.T) {
	sel := metav1.LabelSelector{MatchLabels: map[string]string{"flavor": "cp"}}
	tests := []struct {
		name  string
		nodes map[sipv1.BMHRole]sipv1.NodeSet
		want  string
	}{
		{"valid", map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleControlPlane: {LabelSelector: sel, TopologyKey: "rack", Count: &sipv1.NodeCount{Active: 1}}}, ""},
		{"unknown role", map[sipv1.BMHRole]sipv1.NodeSet{"Master": {LabelSelector: sel}}, "spec.nodes.Master: unknown role"},
		{"empty selector", map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleWorker: {}}, "spec.nodes.Worker.labelSelector: empty"},
		{"negative active", map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleWorker: {LabelSelector: sel, Count: &sipv1.NodeCount{Active: -1}}}, "spec.nodes.Worker.count.active: -1 is negative"},
		{"negative standby", map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleWorker: {LabelSelector: sel, Count: &sipv1.NodeCount{Standby: -2}}}, "spec.nodes.Worker.count.standby: -2 is negative"},
		{"no role", nil, "spec.nodes: no role"},
		{"empty nodes", map[sipv1.BMHRole]sipv1.NodeSet{}, "spec.nodes: no role"},
		{"active 2^63-1", map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleWorker: {LabelSelector: sel, Count: &sipv1.NodeCount{Active: math.MaxInt64, Standby: 1}}}, "spec.nodes.Worker.count.active: 9223372036854775807 is more than 1000"},
		{"standby 2^63-1", map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleWorker: {LabelSelector: sel, Count: &sipv1.NodeCount{Active: 1, Standby: math.MaxInt64}}}, "spec.nodes.Worker.count.standby: 9223372036854775807 is more than 1000"},
		{"count at the limit", map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleWorker: {LabelSelector: sel, Count: &sipv1.NodeCount{Active: sipv1.MaxNodeCount, Standby: sipv1.MaxNodeCount}}}, ""},
		{"bad selector", map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleWorker: {LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}}}, "spec.nodes.Worker.labelSelector: "},
		{"bad topology key", map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleWorker: {LabelSelector: sel, TopologyKey: "not a key"}}, `spec.nodes.Worker.topologyKey: "not a key"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewRequest(&sipv1.SIPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: sipv1.SIPClusterSpec{Nodes: tc.nodes}})
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func labelSet(m map[string]string) labels.Set { return labels.Set(m) }
