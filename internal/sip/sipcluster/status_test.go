package sipcluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// TestReadyOf: what each outcome says in Ready, and the outcomes that
// leave it alone.
func TestReadyOf(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		done   string
		want   string // "Status/Reason: message", or "" for Ready left alone
		stalls bool
	}{
		{name: "pass done", done: "2 hosts labelled, 1 services available", want: "True/ReconciliationSucceeded: 2 hosts labelled, 1 services available"},
		{name: "decommissioned", want: ""},
		{name: "plain error", err: errors.New("listing BareMetalHosts: timeout"), want: ""},
		{name: "invalid spec", err: operatorkit.Stall(sipv1.ReasonTypeInvalidSpec, errors.New("spec.nodes: no role")), want: "False/InvalidSpec: spec.nodes: no role", stalls: true},
		{name: "unschedulable", err: operatorkit.Wait(sipv1.ReasonTypeUnschedulable, 0, "ControlPlane: 2 hosts wanted"), want: "False/Unschedulable: ControlPlane: 2 hosts wanted"},
		{name: "progressing", err: operatorkit.Wait(sipv1.ReasonTypeProgressing, servicesPoll, "waiting for services"), want: "False/Progressing: waiting for services"},
		{name: "labels failed", err: operatorkit.Fail(sipv1.ReasonTypeUnableToApplyLabels, errors.New("labelling BareMetalHost a/b: boom")), want: "False/UnableToApplyLabels: labelling BareMetalHost a/b: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, reason, msg, ok := readyOf(operatorkit.OutcomeOf(tc.err, ""), tc.done)
			got := ""
			if ok {
				got = string(status) + "/" + reason + ": " + msg
			}
			if got != tc.want {
				t.Fatalf("Ready %q, want %q", got, tc.want)
			}
			if !ok {
				return
			}
			c := &sipv1.SIPCluster{}
			setReady(c, status, reason, msg)
			if s := apimeta.IsStatusConditionTrue(c.Status.Conditions, sipv1.ConditionTypeStalled); s != tc.stalls {
				t.Errorf("Stalled %v, want %v", s, tc.stalls)
			}
		})
	}
}

// TestNext: when each outcome looks at the cluster again.
func TestNext(t *testing.T) {
	r := &SIPClusterReconciler{Resync: time.Minute}
	fail := operatorkit.Fail(sipv1.ReasonTypeUnableToApplyLabels, errors.New("boom"))
	tests := []struct {
		name     string
		err      error
		deleting bool
		want     time.Duration
		wantErr  error
	}{
		{name: "succeeded", want: time.Minute},
		{name: "services becoming available", err: operatorkit.Wait(sipv1.ReasonTypeProgressing, servicesPoll, "x"), want: servicesPoll},
		{name: "unschedulable", err: operatorkit.Wait(sipv1.ReasonTypeUnschedulable, 0, "x"), want: time.Minute},
		{name: "invalid spec", err: operatorkit.Stall(sipv1.ReasonTypeInvalidSpec, errors.New("x")), want: time.Minute},
		{name: "failed: backoff", err: fail, wantErr: fail},
		{name: "decommissioned", deleting: true},
		{name: "decommission failed", deleting: true, err: fail, wantErr: fail},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &sipv1.SIPCluster{}
			if tc.deleting {
				c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			}
			res, err := r.next(c, operatorkit.OutcomeOf(tc.err, ""))
			if res.RequeueAfter != tc.want || !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("next = %v, %v; want RequeueAfter %s, error %v", res, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestReconcileWritesOnceAndRecordsTransitions: passes over a cluster
// that cannot change write its status once and record one event; a new
// outcome writes and records again. The finalizer's write before the
// first pass does not make the status write conflict.
func TestReconcileWritesOnceAndRecordsTransitions(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{sipv1.AddToScheme, metal3v1alpha1.AddToScheme, corev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := &sipv1.SIPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "c1", Generation: 1},
		Spec: sipv1.SIPClusterSpec{Nodes: map[sipv1.BMHRole]sipv1.NodeSet{
			sipv1.RoleControlPlane: {LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"role": "cp"}}, Count: &sipv1.NodeCount{Active: 1}},
		}},
	}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(c).WithStatusSubresource(c).Build()
	rec := events.NewFakeRecorder(10)
	r := &SIPClusterReconciler{Client: cl, APIReader: cl, Recorder: rec, Resync: time.Minute}
	ctx := context.Background()
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(c)}

	pass := func(wantReason string, wantEvents int) *sipv1.SIPCluster {
		t.Helper()
		res, err := r.Reconcile(ctx, req)
		if err != nil || res.RequeueAfter != time.Minute {
			t.Fatalf("Reconcile = %v, %v; want the resync and no error", res, err)
		}
		got := &sipv1.SIPCluster{}
		if err := cl.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		if ready := apimeta.FindStatusCondition(got.Status.Conditions, sipv1.ConditionTypeReady); ready == nil || ready.Reason != wantReason {
			t.Fatalf("Ready %+v, want reason %s", ready, wantReason)
		}
		if n := len(rec.Events); n != wantEvents {
			t.Fatalf("%d events waiting, want %d", n, wantEvents)
		}
		for range wantEvents {
			if e := <-rec.Events; !strings.Contains(e, wantReason) {
				t.Errorf("event %q, want reason %s", e, wantReason)
			}
		}
		return got
	}

	// No host: Unschedulable, written with the finalizer added first.
	first := pass(sipv1.ReasonTypeUnschedulable, 1)
	if !controllerutil.ContainsFinalizer(first, sipv1.Finalizer) {
		t.Errorf("finalizers %v", first.Finalizers)
	}
	if first.Status.ObservedGeneration != first.Generation {
		t.Errorf("observedGeneration %d, generation %d", first.Status.ObservedGeneration, first.Generation)
	}
	// Again: nothing new, nothing written, no event.
	if again := pass(sipv1.ReasonTypeUnschedulable, 0); again.ResourceVersion != first.ResourceVersion {
		t.Errorf("resourceVersion %s -> %s: an unchanged status was written", first.ResourceVersion, again.ResourceVersion)
	}
	// Invalid now: Stalled, one event.
	first.Spec.Nodes[sipv1.RoleControlPlane].Count.Active = -1
	if err := cl.Update(ctx, first); err != nil {
		t.Fatal(err)
	}
	stalled := pass(sipv1.ReasonTypeInvalidSpec, 1)
	if !apimeta.IsStatusConditionTrue(stalled.Status.Conditions, sipv1.ConditionTypeStalled) {
		t.Errorf("conditions %+v, want Stalled", stalled.Status.Conditions)
	}
	pass(sipv1.ReasonTypeInvalidSpec, 0)
}
