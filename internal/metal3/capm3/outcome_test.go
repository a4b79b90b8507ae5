package capm3

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// cond is a condition as "Status/Reason", "" when absent.
func cond(list []metav1.Condition, t string) string {
	c := apimeta.FindStatusCondition(list, t)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

// TestMachineOutcome: how each outcome of a pass shows in a Metal3Machine's
// conditions, for a machine not yet ready and for one that is.
func TestMachineOutcome(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "baremetalhosts"}, "h", errors.New("changed"))
	for _, tc := range []struct {
		name      string
		err       error
		ready     bool
		wantReady string
		wantStep  string // HostProvisioned
	}{
		{"succeeded", nil, false, "", ""},
		{"waiting on a step", operatorkit.WaitOn(infrav1.HostProvisionedCondition, infrav1.HostProvisioningReason, 0, "provisioning"), false,
			"False/" + infrav1.HostProvisioningReason, "False/" + infrav1.HostProvisioningReason},
		{"waiting on a step, ready", operatorkit.WaitOn(infrav1.HostProvisionedCondition, infrav1.HostErrorReason, 0, "error"), true,
			"True/" + infrav1.ProvisionedReason, "False/" + infrav1.HostErrorReason},
		{"waiting on Ready", operatorkit.WaitOn(infrav1.ReadyCondition, infrav1.WaitingForBootstrapDataReason, 0, "no data"), false,
			"False/" + infrav1.WaitingForBootstrapDataReason, ""},
		{"stalled", operatorkit.Stallf("InvalidConfiguration", "bad spec"), false, "False/InvalidConfiguration", ""},
		{"failed", errors.New("boom"), false, "False/ReconcileError", ""},
		{"failed, ready", errors.New("boom"), true, "True/" + infrav1.ProvisionedReason, ""},
		{"conflict", conflict, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &infrav1.Metal3Machine{}
			m.Status.Ready = tc.ready
			if tc.ready {
				m.Status.Conditions = []metav1.Condition{{Type: infrav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: infrav1.ProvisionedReason}}
			}
			setOutcome(m, operatorkit.OutcomeOf(tc.err, "ReconcileError"))
			if got := cond(m.Status.Conditions, infrav1.ReadyCondition); got != tc.wantReady {
				t.Errorf("Ready = %q, want %q", got, tc.wantReady)
			}
			if got := cond(m.Status.Conditions, infrav1.HostProvisionedCondition); got != tc.wantStep {
				t.Errorf("HostProvisioned = %q, want %q", got, tc.wantStep)
			}
			if m.Status.Phase == "" {
				t.Error("no phase")
			}
		})
	}
}

// TestClusterOutcome: a wait shows in Ready and requeues when asked; a
// stall marks the Metal3Cluster failed and waits for a change; a failure
// is returned and leaves the status alone.
func TestClusterOutcome(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name        string
		err         error
		wantReady   string
		wantFailure bool
		wantRequeue bool
		wantErr     error
	}{
		{"succeeded", nil, "", false, false, nil},
		{"waiting", operatorkit.Wait(infrav1.WaitingForMachinesDeletedReason, waitPoll, "machines remain"), "False/" + infrav1.WaitingForMachinesDeletedReason, false, true, nil},
		{"stalled", operatorkit.Stallf(infrav1.InvalidSpecReason, "bad endpoint"), "False/" + infrav1.InvalidSpecReason, true, false, nil},
		{"failed", boom, "", false, false, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m3c := &infrav1.Metal3Cluster{}
			m3c.Status.Ready = true
			res, err := settleCluster(context.Background(), m3c, reconcile.Result{}, tc.err)
			if err != tc.wantErr { //nolint:errorlint // the error passed in must come back as it is, not wrapped
				t.Errorf("error = %v, want %v", err, tc.wantErr)
			}
			if (res.RequeueAfter != 0) != tc.wantRequeue {
				t.Errorf("requeue after %s, want a requeue: %v", res.RequeueAfter, tc.wantRequeue)
			}
			if got := cond(m3c.Status.Conditions, infrav1.ReadyCondition); got != tc.wantReady {
				t.Errorf("Ready = %q, want %q", got, tc.wantReady)
			}
			if failed := m3c.Status.FailureReason != nil; failed != tc.wantFailure || failed == m3c.Status.Ready {
				t.Errorf("failureReason %v, ready %v; want failed: %v", m3c.Status.FailureReason, m3c.Status.Ready, tc.wantFailure)
			}
		})
	}
}
