package baremetalhost

import (
	"errors"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// TestPassOutcome runs one step and checks how the pass ends: the
// handler's outcome and when the host is looked at again. A failed step's
// wait doubles from 2 s with status.errorCount and stops at MaxBackoff
// (a minute in unitHost); a state change goes on at once; a settled host
// polls its power; a stalled or detached host waits for a change.
func TestPassOutcome(t *testing.T) {
	bmcDown := map[string]error{"PowerState": errors.New("connection refused")}
	image := func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.Online = true
		h.Spec.Image = &metal3v1alpha1.Image{URL: "http://images.test/a.img"}
		h.Status.Provisioning.Image = *h.Spec.Image
	}
	failedBefore := func(n int) func(*metal3v1alpha1.BareMetalHost) {
		return func(h *metal3v1alpha1.BareMetalHost) { image(h); h.Status.ErrorCount = n }
	}
	tests := []struct {
		name       string
		state      metal3v1alpha1.ProvisioningState
		fail       map[string]error
		mutate     func(*metal3v1alpha1.BareMetalHost)
		wantKind   operatorkit.OutcomeKind
		wantReason string
		wantAfter  time.Duration
		wantErrors int
	}{
		{name: "settled: power polled", state: metal3v1alpha1.StateProvisioned, mutate: image,
			wantKind: operatorkit.Succeeded, wantAfter: time.Minute},
		{name: "state changed: next handler soon", state: metal3v1alpha1.StateRegistering,
			wantKind: operatorkit.Succeeded, wantAfter: nextStateDelay},
		{name: "first failure", state: metal3v1alpha1.StateProvisioned, fail: bmcDown, mutate: image,
			wantKind: operatorkit.Failed, wantReason: "PowerManagementError", wantAfter: 2 * time.Second, wantErrors: 1},
		{name: "fourth failure", state: metal3v1alpha1.StateProvisioned, fail: bmcDown, mutate: failedBefore(3),
			wantKind: operatorkit.Failed, wantReason: "PowerManagementError", wantAfter: 16 * time.Second, wantErrors: 4},
		{name: "many failures: capped", state: metal3v1alpha1.StateProvisioned, fail: bmcDown, mutate: failedBefore(10),
			wantKind: operatorkit.Failed, wantReason: "PowerManagementError", wantAfter: time.Minute, wantErrors: 11},
		{name: "unknown state: stalled", state: "bogus",
			wantKind: operatorkit.Stalled, wantReason: "UnknownState"},
		{name: "detached: nothing to do", state: metal3v1alpha1.StateProvisioned,
			mutate: func(h *metal3v1alpha1.BareMetalHost) {
				image(h)
				h.Annotations = map[string]string{metal3v1alpha1.DetachedAnnotation: ""}
			},
			wantKind: operatorkit.Succeeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := unitHost(t, tt.state, provisioner.PowerOn, tt.fail, tt.mutate)
			o := operatorkit.OutcomeOf(s.run(false), "")
			if o.Kind != tt.wantKind || o.Reason != tt.wantReason {
				t.Errorf("outcome %s %q (%v), want %s %q", o.Kind, o.Reason, o.Err, tt.wantKind, tt.wantReason)
			}
			if got := s.requeue(o); got.RequeueAfter != tt.wantAfter {
				t.Errorf("requeue after %s, want %s", got.RequeueAfter, tt.wantAfter)
			}
			if s.host.Status.ErrorCount != tt.wantErrors {
				t.Errorf("status.errorCount %d, want %d", s.host.Status.ErrorCount, tt.wantErrors)
			}
		})
	}
}
