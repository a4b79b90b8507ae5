package capm3

import (
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
)

func bmh(name string, mutate ...func(*metal3v1alpha1.BareMetalHost)) metal3v1alpha1.BareMetalHost {
	h := metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"rack": "r1"}}}
	h.Status.Provisioning.State = metal3v1alpha1.StateAvailable
	for _, m := range mutate {
		m(&h)
	}
	return h
}

func TestChooseHost(t *testing.T) {
	m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "uid-1"}}
	other := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m2"}}
	consumed := func(h *metal3v1alpha1.BareMetalHost) { h.Spec.ConsumerRef = consumerRef(other) }
	state := func(s metal3v1alpha1.ProvisioningState) func(*metal3v1alpha1.BareMetalHost) {
		return func(h *metal3v1alpha1.BareMetalHost) { h.Status.Provisioning.State = s }
	}
	rack := func(r string) func(*metal3v1alpha1.BareMetalHost) {
		return func(h *metal3v1alpha1.BareMetalHost) { h.Labels["rack"] = r }
	}
	reusable := func(set string) func(*metal3v1alpha1.BareMetalHost) {
		return func(h *metal3v1alpha1.BareMetalHost) {
			h.Labels[NodeReuseLabel] = set
			h.Spec.ConsumerRef = reuseConsumer(types.NamespacedName{Namespace: "ns", Name: "c1"})
		}
	}
	r1, _ := HostSelector(infrav1.HostSelector{MatchLabels: map[string]string{"rack": "r1"}})
	tests := []struct {
		name     string
		hosts    []metal3v1alpha1.BareMetalHost
		selector labels.Selector
		reuse    string
		reserved string
		want     string
		again    bool
		reused   bool
		why      string
	}{
		{name: "the only available host", hosts: []metal3v1alpha1.BareMetalHost{bmh("a")}, want: "a"},
		{name: "consumed, provisioning, error, paused, detached, deleting are skipped",
			hosts: []metal3v1alpha1.BareMetalHost{
				bmh("a", consumed), bmh("b", state(metal3v1alpha1.StateProvisioning)),
				bmh("c", func(h *metal3v1alpha1.BareMetalHost) { h.Status.ErrorType = metal3v1alpha1.RegistrationError }),
				bmh("d", func(h *metal3v1alpha1.BareMetalHost) {
					h.Annotations = map[string]string{metal3v1alpha1.PausedAnnotation: ""}
				}),
				bmh("e", func(h *metal3v1alpha1.BareMetalHost) {
					h.Annotations = map[string]string{metal3v1alpha1.DetachedAnnotation: ""}
				}),
				bmh("f", func(h *metal3v1alpha1.BareMetalHost) { now := metav1.Now(); h.DeletionTimestamp = &now }),
				bmh("g", state(metal3v1alpha1.StateReady)),
			}, want: "g"},
		{name: "none left says why", hosts: []metal3v1alpha1.BareMetalHost{bmh("a", consumed), bmh("b", rack("r2")), bmh("c", state(metal3v1alpha1.StateInspecting))},
			selector: r1, why: "3 hosts, 1 not matching hostSelector, 1 consumed, 1 not available or ready, 0 in error"},
		{name: "a host already ours comes first", hosts: []metal3v1alpha1.BareMetalHost{bmh("a"), bmh("b", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.ConsumerRef = consumerRef(m) })},
			want: "b", again: true},
		{name: "selector", hosts: []metal3v1alpha1.BareMetalHost{bmh("a", rack("r2")), bmh("b")}, selector: r1, want: "b"},
		{name: "a host reserved by another worker is skipped", hosts: []metal3v1alpha1.BareMetalHost{bmh("a"), bmh("b")}, reserved: "a", want: "b"},
		{name: "node reuse: the set's released host first", hosts: []metal3v1alpha1.BareMetalHost{bmh("a"), bmh("b", reusable("md-1"))}, reuse: "md-1", want: "b", reused: true},
		{name: "node reuse: another set's host is not taken", hosts: []metal3v1alpha1.BareMetalHost{bmh("a", reusable("md-2")), bmh("b")}, reuse: "md-1", want: "b"},
		{name: "node reuse: a kept host is not taken without reuse", hosts: []metal3v1alpha1.BareMetalHost{bmh("a", reusable("md-1"))}, why: "1 consumed"},
		{name: "hosts remediation gave up on are skipped, under either annotation",
			hosts: []metal3v1alpha1.BareMetalHost{
				bmh("a", func(h *metal3v1alpha1.BareMetalHost) {
					h.Annotations = map[string]string{infrav1.UnhealthyAnnotation: "capm3/UnhealthyNode"}
				}),
				bmh("b", func(h *metal3v1alpha1.BareMetalHost) {
					h.Annotations = map[string]string{infrav1.UnhealthyAnnotationDeprecated: ""}
				}),
			}, why: "2 marked unhealthy"},
		{name: "a healthy host beside an unhealthy one", hosts: []metal3v1alpha1.BareMetalHost{
			bmh("a", func(h *metal3v1alpha1.BareMetalHost) {
				h.Annotations = map[string]string{infrav1.UnhealthyAnnotation: ""}
			}), bmh("b")}, want: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := tt.selector
			if sel == nil {
				sel = labels.Everything()
			}
			ch := chooseHost(tt.hosts, chooseRequest{machine: m, selector: sel, cluster: types.NamespacedName{Namespace: "ns", Name: "c1"}, reuse: tt.reuse,
				reserved: func(h types.NamespacedName) bool { return h.Name == tt.reserved }})
			got := ""
			if ch.Host != nil {
				got = ch.Host.Name
			}
			if got != tt.want || ch.Again != tt.again || ch.Reused != tt.reused || !strings.Contains(ch.Why, tt.why) {
				t.Errorf("chose %q again=%v reused=%v why %q; want %q again=%v reused=%v why containing %q", got, ch.Again, ch.Reused, ch.Why, tt.want, tt.again, tt.reused, tt.why)
			}
		})
	}
}

// TestChooseHostSpreads: machines created together start from different
// hosts, so they do not all race for one.
func TestChooseHostSpreads(t *testing.T) {
	var hosts []metal3v1alpha1.BareMetalHost
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		hosts = append(hosts, bmh(n))
	}
	chosen := map[string]int{}
	for i := range 64 {
		m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m", UID: types.UID(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('0'+i%10)))}}
		ch := chooseHost(hosts, chooseRequest{machine: m, selector: labels.Everything()})
		chosen[ch.Host.Name]++
	}
	if len(chosen) < 6 {
		t.Errorf("64 machines started from only %d of 8 hosts: %v", len(chosen), chosen)
	}
}

func TestReservations(t *testing.T) {
	var r reservations
	now := time.Unix(1000, 0)
	h := types.NamespacedName{Namespace: "ns", Name: "a"}
	if !r.reserve(h, "m1", now) || r.reserve(h, "m2", now) || !r.reserve(h, "m1", now) {
		t.Fatal("a reservation is not exclusive to its machine")
	}
	if !r.heldByOther(h, "m2", now) || r.heldByOther(h, "m1", now) {
		t.Error("heldByOther")
	}
	if r.heldByOther(h, "m2", now.Add(reservationTTL)) || !r.reserve(h, "m2", now.Add(reservationTTL)) {
		t.Error("a reservation outlived its TTL")
	}
	r.release(h)
	if r.heldByOther(h, "m1", now) {
		t.Error("released reservation still held")
	}
}

func TestHostSelector(t *testing.T) {
	tests := []struct {
		name    string
		sel     infrav1.HostSelector
		labels  map[string]string
		match   bool
		wantErr string
	}{
		{"empty matches all", infrav1.HostSelector{}, map[string]string{"x": "y"}, true, ""},
		{"labels", infrav1.HostSelector{MatchLabels: map[string]string{"rack": "r1"}}, map[string]string{"rack": "r1"}, true, ""},
		{"upper-case operator", infrav1.HostSelector{MatchExpressions: []infrav1.HostSelectorRequirement{{Key: "rack", Operator: "In", Values: []string{"r1", "r2"}}}}, map[string]string{"rack": "r2"}, true, ""},
		{"notin", infrav1.HostSelector{MatchExpressions: []infrav1.HostSelectorRequirement{{Key: "rack", Operator: "notin", Values: []string{"r1"}}}}, map[string]string{"rack": "r1"}, false, ""},
		{"bad operator names the field", infrav1.HostSelector{MatchExpressions: []infrav1.HostSelectorRequirement{{Key: "rack", Operator: "near", Values: []string{"r1"}}}}, nil, false, `spec.hostSelector.matchExpressions[0].operator: "near" is not one of`},
		{"metav1 NotIn", expr(infrav1.HostSelectorRequirement{Key: "rack", Operator: "NotIn", Values: []string{"r1"}}), map[string]string{"rack": "r2"}, true, ""},
		{"metav1 NotIn, excluded", expr(infrav1.HostSelectorRequirement{Key: "rack", Operator: "NotIn", Values: []string{"r1"}}), map[string]string{"rack": "r1"}, false, ""},
		{"metav1 Exists", expr(infrav1.HostSelectorRequirement{Key: "gpu", Operator: "Exists"}), map[string]string{"gpu": ""}, true, ""},
		{"metav1 Exists, absent", expr(infrav1.HostSelectorRequirement{Key: "gpu", Operator: "Exists"}), map[string]string{"rack": "r1"}, false, ""},
		{"absence is !", expr(infrav1.HostSelectorRequirement{Key: "retired", Operator: "!"}), map[string]string{"rack": "r1"}, true, ""},
		{"absence is !, present", expr(infrav1.HostSelectorRequirement{Key: "retired", Operator: "!"}), map[string]string{"retired": "yes"}, false, ""},
		{"gt", expr(infrav1.HostSelectorRequirement{Key: "cores", Operator: "gt", Values: []string{"16"}}), map[string]string{"cores": "32"}, true, ""},
		{"metav1 DoesNotExist is refused, upstream too", expr(infrav1.HostSelectorRequirement{Key: "rack", Operator: "In", Values: []string{"r1"}}, infrav1.HostSelectorRequirement{Key: "retired", Operator: "DoesNotExist"}), nil, false,
			`spec.hostSelector.matchExpressions[1].operator: "DoesNotExist" is not one of in, notin, =, ==, !=, exists, !, gt, lt (in any case); a label's absence is "!"`},
		{"empty operator", expr(infrav1.HostSelectorRequirement{Key: "rack"}), nil, false, `spec.hostSelector.matchExpressions[0].operator: "" is not one of`},
		{"values the operator does not take name the expression", expr(infrav1.HostSelectorRequirement{Key: "gpu", Operator: "exists", Values: []string{"x"}}), nil, false, "spec.hostSelector.matchExpressions[0]: "},
		{"bad label names the field", infrav1.HostSelector{MatchLabels: map[string]string{"bad key!": "x"}}, nil, false, "spec.hostSelector.matchLabels[bad key!]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := HostSelector(tt.sel)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(labels.Set(tt.labels)); got != tt.match {
				t.Errorf("matches %v = %v", tt.labels, got)
			}
		})
	}
}

// expr is a hostSelector of matchExpressions es.
func expr(es ...infrav1.HostSelectorRequirement) infrav1.HostSelector {
	return infrav1.HostSelector{MatchExpressions: es}
}

func TestParseAPIEndpoint(t *testing.T) {
	tests := []struct {
		in   string
		want infrav1.APIEndpoint
		err  string
	}{
		{"https://192.168.111.249:6443", infrav1.APIEndpoint{Host: "192.168.111.249", Port: 6443}, ""},
		{"https://api.example.test", infrav1.APIEndpoint{Host: "api.example.test", Port: 6443}, ""},
		{"https://[fd00::1]:443", infrav1.APIEndpoint{Host: "fd00::1", Port: 443}, ""},
		{"192.168.111.249:6443", infrav1.APIEndpoint{}, "is not a URL"},
		{"https://h:99999", infrav1.APIEndpoint{}, "is not a TCP port"},
	}
	for _, tt := range tests {
		got, err := ParseAPIEndpoint(tt.in)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) || got != tt.want {
			t.Errorf("ParseAPIEndpoint(%q) = %+v, %v; want %+v, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestProviderIDNames(t *testing.T) {
	h := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "node-1", UID: "8e16"}}
	m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	for id, want := range map[string]bool{
		"metal3://8e16": true, "metal3://ns/node-1/m1": true, "metal3://ns/node-1/m2": false, "kwok://8e16": false, "metal3://": false,
		// A moved host has a new uid; the machine's annotation names it.
		"metal3://uid-before-the-move": true,
	} {
		if got := providerIDNames(id, h, m); got != want {
			t.Errorf("providerIDNames(%q) = %v", id, got)
		}
	}
	if legacyUID("metal3://8e16") != "8e16" || legacyUID("metal3://ns/node-1/m1") != "" {
		t.Error("legacyUID")
	}
	if ProviderID(h) != "metal3://8e16" {
		t.Errorf("ProviderID = %q", ProviderID(h))
	}
}
