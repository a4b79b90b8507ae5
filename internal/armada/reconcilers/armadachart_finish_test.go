package reconcilers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// TestFinish covers how a chart's pass outcome becomes its status, its
// requeue and its status write, with a fake client: one row per outcome.
func TestFinish(t *testing.T) {
	const secret = "s3cr3t-token"
	ready := []metav1.Condition{{Type: armadav1.ReadyCondition, Status: metav1.ConditionTrue, Reason: ReasonSucceeded, Message: "release web is deployed", ObservedGeneration: 2}}
	deployed := armadav1.ArmadaChartStatus{ObservedGeneration: 2, TargetState: armadav1.TargetStateDeployed, State: armadav1.StateDeployed,
		Satisfied: true, ReleaseName: "web", HelmRevision: 1, Conditions: ready}
	for _, tc := range []struct {
		name string
		// status is the chart's status as the pass read it; step changes
		// it as the pass's steps would.
		status armadav1.ArmadaChartStatus
		step   func(*armadav1.ArmadaChartStatus)
		err    error

		wantResult  ctrl.Result
		wantWrite   bool
		wantState   armadav1.State
		wantReady   metav1.ConditionStatus
		wantReason  string
		wantCond    string // a condition that must be True (Reconciling, Stalled), "" for none
		wantMsg     string // in the Ready message ("" skips)
		wantRetry   string // in the Reconciling message ("" skips)
		wantFailure int64
	}{
		{name: "succeeded is Ready and satisfied",
			status:    armadav1.ArmadaChartStatus{TargetState: armadav1.TargetStateDeployed, ReleaseName: "web"},
			step:      func(s *armadav1.ArmadaChartStatus) { s.State, s.HelmRevision = armadav1.StateDeployed, 1 },
			wantWrite: true, wantState: armadav1.StateDeployed, wantReady: metav1.ConditionTrue, wantReason: ReasonSucceeded, wantMsg: "release web is deployed"},
		{name: "a pass that changes nothing writes nothing",
			status: deployed, wantState: armadav1.StateDeployed, wantReady: metav1.ConditionTrue, wantReason: ReasonSucceeded},
		{name: "waiting polls",
			status:     armadav1.ArmadaChartStatus{TargetState: armadav1.TargetStateDeployed, ReleaseName: "web"},
			step:       func(s *armadav1.ArmadaChartStatus) { s.State = armadav1.StateRunning },
			err:        operatorkit.Wait(ReasonWaiting, 0, "Deployment web: 0/1 ready"),
			wantResult: ctrl.Result{RequeueAfter: 5 * time.Second}, wantWrite: true, wantState: armadav1.StateRunning,
			wantReady: metav1.ConditionFalse, wantReason: ReasonWaiting, wantCond: armadav1.ReconcilingCondition, wantMsg: "0/1 ready"},
		{name: "fetching a new chart's archive is pending",
			status:     armadav1.ArmadaChartStatus{TargetState: armadav1.TargetStateDeployed, ReleaseName: "web"},
			err:        &operatorkit.WaitingError{Reason: ReasonFetchingSource, Message: "spec.source: fetching", After: time.Minute},
			wantResult: ctrl.Result{RequeueAfter: time.Minute}, wantWrite: true, wantState: armadav1.StatePending,
			wantReady: metav1.ConditionFalse, wantReason: ReasonFetchingSource, wantCond: armadav1.ReconcilingCondition},
		{name: "fetching a deployed chart's archive again keeps it Ready",
			status:     deployed,
			step:       func(s *armadav1.ArmadaChartStatus) { s.State = armadav1.StateRunning },
			err:        &operatorkit.WaitingError{Reason: ReasonFetchingSource, Message: "spec.source: fetching", After: time.Minute},
			wantResult: ctrl.Result{RequeueAfter: time.Minute}, wantState: armadav1.StateDeployed, wantReady: metav1.ConditionTrue, wantReason: ReasonSucceeded},
		{name: "stalled is an error state, not requeued, scrubbed",
			status:    armadav1.ArmadaChartStatus{TargetState: armadav1.TargetStateDeployed, ReleaseName: "web"},
			err:       operatorkit.Stallf(ReasonInvalidValues, "spec.values: bad value %s", secret),
			wantWrite: true, wantState: armadav1.StateError, wantReady: metav1.ConditionFalse, wantReason: ReasonInvalidValues,
			wantCond: armadav1.StalledCondition, wantMsg: "bad value ***"},
		{name: "stalled protected keeps its failed state",
			status:    armadav1.ArmadaChartStatus{TargetState: armadav1.TargetStateDeployed, ReleaseName: "web"},
			step:      func(s *armadav1.ArmadaChartStatus) { s.State = armadav1.StateFailed },
			err:       operatorkit.Stallf(ReasonProtected, "revision 2 failed"),
			wantWrite: true, wantState: armadav1.StateFailed, wantReady: metav1.ConditionFalse, wantReason: ReasonProtected, wantCond: armadav1.StalledCondition},
		{name: "failed backs off by its failure count",
			status:     armadav1.ArmadaChartStatus{TargetState: armadav1.TargetStateDeployed, ReleaseName: "web", Failures: 2},
			step:       func(s *armadav1.ArmadaChartStatus) { s.State = armadav1.StateFailed },
			err:        operatorkit.Fail(ReasonTestFailed, errors.New("spec.test: "+secret+" failed")),
			wantResult: ctrl.Result{RequeueAfter: 8 * time.Second}, wantWrite: true, wantState: armadav1.StateFailed,
			wantReady: metav1.ConditionFalse, wantReason: ReasonTestFailed, wantCond: armadav1.ReconcilingCondition,
			wantMsg: "spec.test: *** failed", wantRetry: "retrying in 8s after failure 3", wantFailure: 3},
		{name: "a plain error is Failed",
			status:     armadav1.ArmadaChartStatus{TargetState: armadav1.TargetStateDeployed, ReleaseName: "web"},
			err:        errors.New("the API server went away"),
			wantResult: ctrl.Result{RequeueAfter: 2 * time.Second}, wantWrite: true,
			wantReady: metav1.ConditionFalse, wantReason: ReasonFailed, wantCond: armadav1.ReconcilingCondition, wantFailure: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Namespace: "site", Name: "web", Generation: 2}, Status: tc.status}
			var writes int
			cl := finishClient(t, &writes, stored)
			obj := &armadav1.ArmadaChart{}
			if err := cl.Get(context.Background(), client.ObjectKeyFromObject(stored), obj); err != nil {
				t.Fatal(err)
			}
			snap := operatorkit.SnapshotStatus(obj)
			if tc.step != nil {
				tc.step(&obj.Status)
			}
			r := &ArmadaChartReconciler{Client: cl, PollInterval: 5 * time.Second, RetryInterval: 2 * time.Second, MaxRetryInterval: time.Minute, Now: time.Now}
			res, err := r.finish(context.Background(), obj, snap, tc.err, newScrubber(map[string]any{"token": secret}))
			if err != nil {
				t.Fatalf("finish returned %v; outcomes are not errors", err)
			}
			if res != tc.wantResult {
				t.Errorf("result %+v, want %+v", res, tc.wantResult)
			}
			if (writes > 0) != tc.wantWrite {
				t.Errorf("%d status writes, want a write: %t", writes, tc.wantWrite)
			}
			got := &armadav1.ArmadaChart{}
			if err := cl.Get(context.Background(), client.ObjectKeyFromObject(stored), got); err != nil {
				t.Fatal(err)
			}
			// The next pass finds this version in the cache (readChart).
			if rv := r.writtenVersion(client.ObjectKeyFromObject(stored)); rv != got.ResourceVersion {
				t.Errorf("version recorded as written %q, stored %q", rv, got.ResourceVersion)
			}
			st := got.Status
			if st.ObservedGeneration != 2 || st.State != tc.wantState || st.Failures != tc.wantFailure {
				t.Errorf("stored status: observedGeneration %d, state %q, failures %d; want 2, %q, %d", st.ObservedGeneration, st.State, st.Failures, tc.wantState, tc.wantFailure)
			}
			rc := apimeta.FindStatusCondition(st.Conditions, armadav1.ReadyCondition)
			if rc == nil || rc.Status != tc.wantReady || rc.Reason != tc.wantReason || !strings.Contains(rc.Message, tc.wantMsg) || strings.Contains(rc.Message, secret) {
				t.Errorf("Ready %+v, want %s %s containing %q and no secret", rc, tc.wantReady, tc.wantReason, tc.wantMsg)
			}
			for _, c := range []string{armadav1.ReconcilingCondition, armadav1.StalledCondition} {
				if want := c == tc.wantCond; apimeta.IsStatusConditionTrue(st.Conditions, c) != want {
					t.Errorf("%s True: %t, want %t (conditions %+v)", c, !want, want, st.Conditions)
				}
			}
			if tc.wantRetry != "" {
				if c := apimeta.FindStatusCondition(st.Conditions, armadav1.ReconcilingCondition); c == nil || !strings.Contains(c.Message, tc.wantRetry) {
					t.Errorf("Reconciling %+v, want a message containing %q", c, tc.wantRetry)
				}
			}
			if st.Satisfied != (tc.wantReady == metav1.ConditionTrue) {
				t.Errorf("satisfied %t with Ready %s", st.Satisfied, tc.wantReady)
			}
		})
	}
}

// TestFinishConflict checks that a status write losing to a newer version
// of the chart is retried soon from that version, not reported as an error.
func TestFinishConflict(t *testing.T) {
	stored := &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Namespace: "site", Name: "web", Generation: 1}}
	var writes int
	cl := finishClient(t, &writes, stored)
	obj := &armadav1.ArmadaChart{}
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(stored), obj); err != nil {
		t.Fatal(err)
	}
	snap := operatorkit.SnapshotStatus(obj)
	// Someone else writes the chart after the pass read it.
	newer := obj.DeepCopy()
	newer.Annotations = map[string]string{"touched": "yes"}
	if err := cl.Update(context.Background(), newer); err != nil {
		t.Fatal(err)
	}
	r := &ArmadaChartReconciler{Client: cl, PollInterval: time.Second, RetryInterval: time.Second, MaxRetryInterval: time.Minute, Now: time.Now}
	res, err := r.finish(context.Background(), obj, snap, operatorkit.Wait(ReasonWaiting, 0, "waiting"), nil)
	if err != nil || res != (ctrl.Result{RequeueAfter: operatorkit.ConflictRetry}) {
		t.Fatalf("finish after a conflict: %+v, %v; want RequeueAfter %s and no error", res, err, operatorkit.ConflictRetry)
	}
	if rv := r.writtenVersion(client.ObjectKeyFromObject(stored)); rv != "" {
		t.Errorf("a lost status write recorded version %q as written; the next pass must read the API server", rv)
	}
}

// TestReadChart checks where a pass reads its chart: the cache, unless a
// pass of this process left the chart at a version the cache does not
// hold, or the cache lacks the chart; then the API server.
func TestReadChart(t *testing.T) {
	key := client.ObjectKey{Namespace: "site", Name: "web"}
	chart := func(from string) *armadav1.ArmadaChart {
		return &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Status: armadav1.ArmadaChartStatus{ReleaseName: from}}
	}
	var writes int
	cache, api := finishClient(t, &writes, chart("cache")), finishClient(t, &writes, chart("api"))
	cached := &armadav1.ArmadaChart{}
	if err := cache.Get(context.Background(), key, cached); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		written   string
		apiReader bool
		missing   bool
		want      string
	}{
		{name: "no pass yet reads the cache", apiReader: true, want: "cache"},
		{name: "the cache at the written version is read", written: cached.ResourceVersion, apiReader: true, want: "cache"},
		{name: "a cache behind the written version is not", written: cached.ResourceVersion + "1", apiReader: true, want: "api"},
		{name: "without an API reader the client is read", want: "cache"},
		{name: "a chart the cache lacks is read from the API server", apiReader: true, missing: true, want: "api"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &ArmadaChartReconciler{Client: cache}
			if tc.missing {
				r.Client = finishClient(t, &writes)
			}
			if tc.apiReader {
				r.APIReader = api
			}
			if tc.written != "" {
				r.setWritten(key, &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: tc.written}})
			}
			got := &armadav1.ArmadaChart{}
			if err := r.readChart(context.Background(), key, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.ReleaseName != tc.want {
				t.Errorf("read from %q, want %q", got.Status.ReleaseName, tc.want)
			}
		})
	}
}

// finishClient is a fake client over objs that counts status writes.
func finishClient(t *testing.T, writes *int, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := armadav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(objs...).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			*writes++
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		}}).Build()
}
