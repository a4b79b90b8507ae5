package schedule

import (
	"errors"
	"fmt"
	"testing"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

// FuzzSchedule builds hosts and counts from the fuzzer's bytes and checks
// what must hold of every plan: counts met exactly, each host at most once,
// only usable matching hosts of no other cluster, one host per topology
// value, releases only of the cluster's own hosts, and a second pass over
// the labelled hosts changes nothing.
func FuzzSchedule(f *testing.F) {
	f.Add([]byte{3, 1, 2, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{1, 0, 1, 0, 0xff, 0x80, 0x40, 0x20, 0x10})
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		cp := role(sipv1.RoleControlPlane, "cp", "rack", int(data[0]%4), int(data[1]%3))
		wk := role(sipv1.RoleWorker, "w", "rack", int(data[2]%6), int(data[3]%3))
		if data[3]&0x80 != 0 {
			wk.TopologyKey = "server"
		}
		var hosts []Host
		for i, b := range data[4:] {
			flavor := "w"
			if b&1 == 1 {
				flavor = "cp"
			}
			h := host(fmt.Sprintf("h%03d", i), fmt.Sprintf("r%d", b>>1&7), flavor, "server", fmt.Sprintf("s%d", i))
			switch b >> 4 & 3 {
			case 1:
				h = member(h, sipv1.Roles[b>>6&1], b&0x80 != 0)
			case 2:
				h.Labels[sipv1.ClusterNamespaceLabel], h.Labels[sipv1.ClusterNameLabel] = "other", "c2"
			}
			if b%11 == 0 {
				h.Unusable = "in error"
			}
			if b%13 == 0 {
				delete(h.Labels, "rack")
			}
			hosts = append(hosts, h)
		}
		req := Request{Namespace: ns, Name: name, Roles: []Role{cp, wk}}
		p, err := Schedule(req, hosts)
		var ue *UnschedulableError
		if errors.As(err, &ue) {
			if ue.Got >= ue.Wanted {
				t.Fatalf("unschedulable with %d of %d", ue.Got, ue.Wanted)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		domains := map[string]string{}
		for _, r := range req.Roles {
			a, s := p.Role(r.Role)
			if len(a) != r.Active || len(s) != r.Standby {
				t.Fatalf("%s: %d active, %d standby; want %d, %d", r.Role, len(a), len(s), r.Active, r.Standby)
			}
		}
		for _, pk := range p.Picks {
			h := pk.Host
			if seen[h.Key()] {
				t.Fatalf("%s picked twice", h.Key())
			}
			seen[h.Key()] = true
			if h.Unusable != "" || h.Labels[sipv1.ClusterNameLabel] == "c2" {
				t.Fatalf("%s picked: unusable %q labels %v", h.Key(), h.Unusable, h.Labels)
			}
			var r Role
			for _, x := range req.Roles {
				if x.Role == pk.Role {
					r = x
				}
			}
			if !r.Selector.Matches(labelSet(h.Labels)) {
				t.Fatalf("%s does not match %s", h.Key(), r.Selector)
			}
			v, ok := h.Labels[r.TopologyKey]
			if !ok {
				t.Fatalf("%s has no %s", h.Key(), r.TopologyKey)
			}
			if other, dup := domains[r.TopologyKey+"="+v]; dup {
				t.Fatalf("%s and %s share %s=%s", other, h.Key(), r.TopologyKey, v)
			}
			domains[r.TopologyKey+"="+v] = h.Key()
		}
		for _, h := range p.Release {
			if seen[h.Key()] || !ours(h, req) {
				t.Fatalf("released %s: picked %v labels %v", h.Key(), seen[h.Key()], h.Labels)
			}
		}
		p2, err := Schedule(req, apply(hosts, p))
		p.Release = nil
		if err != nil || summary(p2) != summary(p) || len(p2.Release) != 0 {
			t.Fatalf("second pass: %v\n%s\n%s", err, summary(p), summary(p2))
		}
	})
}
