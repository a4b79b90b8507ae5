package reconcilers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/yaml"

	airshipv1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/apply"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

func TestEffectiveTarget(t *testing.T) {
	for _, tc := range []struct {
		name       string
		annotation string
		spec       armadav1.TargetState
		want       armadav1.TargetState
		wantErr    string
	}{
		{name: "spec unset", want: armadav1.TargetStateDeployed},
		{name: "spec only", spec: armadav1.TargetStateUninstalled, want: armadav1.TargetStateUninstalled},
		{name: "annotation over spec", annotation: "deployed", spec: armadav1.TargetStateUninitialized, want: armadav1.TargetStateDeployed},
		{name: "annotation uninstalled", annotation: "uninstalled", spec: armadav1.TargetStateDeployed, want: armadav1.TargetStateUninstalled},
		{name: "invalid annotation", annotation: "Deployed", spec: armadav1.TargetStateDeployed,
			wantErr: `metadata.annotations[armada.airshipit.org/target-state]: "Deployed" is not one of uninitialized, deployed, uninstalled`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &metav1.ObjectMeta{}
			if tc.annotation != "" {
				o.Annotations = map[string]string{TargetStateAnnotation: tc.annotation}
			}
			got, err := effectiveTarget(o, tc.spec)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// countingClient is a fake client over objs that counts the patches it is
// sent.
func countingClient(t *testing.T, patches *int, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := armadav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(objs...).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			*patches++
			return c.Patch(ctx, obj, p, opts...)
		}}).Build()
}

// TestEnablePass covers one pass of a group over its charts with a fake
// client: what it patches, and what it decides.
func TestEnablePass(t *testing.T) {
	const ns = "site"
	chart := func(name string, annotations map[string]string) *armadav1.ArmadaChart {
		return &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
			Spec: armadav1.ArmadaChartSpec{Release: name, TargetState: armadav1.TargetStateUninitialized}}
	}
	group := &armadav1.ArmadaChartGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", UID: "g-uid"}}
	for _, tc := range []struct {
		name        string
		names       []string
		target      armadav1.TargetState
		sequenced   bool
		wantPatches int // first pass
		wantOutcome operatorkit.OutcomeKind
		wantReason  string
		wantMsg     string
		wantTargets map[string]string // annotation per chart after the pass
	}{
		{name: "parallel enables every chart", names: []string{"a", "b"}, target: armadav1.TargetStateDeployed,
			wantPatches: 4, wantOutcome: operatorkit.Waiting, wantReason: ReasonChartsPending, wantMsg: "waiting for ArmadaChart a, b",
			wantTargets: map[string]string{"a": "deployed", "b": "deployed"}},
		{name: "sequenced enables the first chart only", names: []string{"a", "b"}, target: armadav1.TargetStateDeployed, sequenced: true,
			wantPatches: 3, wantOutcome: operatorkit.Waiting, wantReason: ReasonChartsPending, wantMsg: "waiting for ArmadaChart a",
			wantTargets: map[string]string{"a": "deployed", "b": ""}},
		{name: "uninitialized leaves the charts alone", names: []string{"a", "b"}, target: armadav1.TargetStateUninitialized,
			wantPatches: 2, wantOutcome: operatorkit.Succeeded, wantReason: ReasonUninitialized,
			wantTargets: map[string]string{"a": "", "b": ""}},
		{name: "listed twice stalls before any patch", names: []string{"a", "b", "a"}, target: armadav1.TargetStateDeployed,
			wantPatches: 0, wantOutcome: operatorkit.Stalled, wantReason: ReasonListedTwice, wantMsg: `spec.chart_group[2]: "a" is listed twice (also at [0])`,
			wantTargets: map[string]string{"a": "", "b": ""}},
		{name: "missing stalls before any patch", names: []string{"a", "ghost"}, target: armadav1.TargetStateDeployed,
			wantPatches: 0, wantOutcome: operatorkit.Stalled, wantReason: ReasonChartMissing, wantMsg: "spec.chart_group[1]: ArmadaChart site/ghost not found",
			wantTargets: map[string]string{"a": "", "b": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var patches int
			cl := countingClient(t, &patches, group.DeepCopy(), chart("a", nil), chart("b", map[string]string{TestChartsAnnotation: "true"}))
			e := enablement{owner: group.DeepCopy(), names: tc.names, target: tc.target, sequenced: tc.sequenced,
				annotations: map[string]string{ReleasePrefixAnnotation: "site", TestChartsAnnotation: ""}}
			res, err := charts.enable(context.Background(), cl, nil, e)
			if err != nil {
				t.Fatal(err)
			}
			if res.outcome != tc.wantOutcome || res.reason != tc.wantReason || !strings.Contains(res.msg, tc.wantMsg) {
				t.Fatalf("decided %v %s %q; want %v %s containing %q", res.outcome, res.reason, res.msg, tc.wantOutcome, tc.wantReason, tc.wantMsg)
			}
			if patches != tc.wantPatches {
				t.Errorf("first pass sent %d patches, want %d", patches, tc.wantPatches)
			}
			for name, want := range tc.wantTargets {
				var c armadav1.ArmadaChart
				if err := cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &c); err != nil {
					t.Fatal(err)
				}
				if got := c.Annotations[TargetStateAnnotation]; got != want {
					t.Errorf("chart %s: %s = %q, want %q", name, TargetStateAnnotation, got, want)
				}
				if c.Spec.TargetState != armadav1.TargetStateUninitialized {
					t.Errorf("chart %s: spec.target_state changed to %q", name, c.Spec.TargetState)
				}
				if tc.wantPatches > 0 {
					if c.Annotations[ReleasePrefixAnnotation] != "site" || c.Annotations[TestChartsAnnotation] != "" || metav1.GetControllerOf(&c) == nil {
						t.Errorf("chart %s not adopted: annotations %v, controller %v", name, c.Annotations, metav1.GetControllerOf(&c))
					}
				}
			}
			// A second pass over unchanged members sends nothing.
			patches = 0
			if _, err := charts.enable(context.Background(), cl, nil, e); err != nil {
				t.Fatal(err)
			}
			if patches != 0 {
				t.Errorf("second pass sent %d patches, want 0", patches)
			}
		})
	}
}

// siteDocuments are a manifest's documents as a site holds them: charts and
// group uninitialized, for the manifest to enable. target is the
// manifest's target_state ("" leaves it out).
func siteDocuments(t *testing.T, ns, target string) []*unstructured.Unstructured {
	t.Helper()
	chart := func(name string) string {
		return fmt.Sprintf(`apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  release: %[1]s
  namespace: %[2]s
  source: {type: dir, location: %[3]s}
  values: {replicas: 1}
  wait: {timeout: 60}
  target_state: uninitialized
`, name, ns, chartDir(t, "small"))
	}
	manifest := fmt.Sprintf(`apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaManifest
metadata: {name: site, namespace: %s}
spec:
  release_prefix: site
  chart_groups: [g]
`, ns)
	if target != "" {
		manifest += "  target_state: " + target + "\n"
	}
	docs := []string{chart("first"), chart("second"), fmt.Sprintf(`apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChartGroup
metadata: {name: g, namespace: %s}
spec:
  sequenced: true
  chart_group: [first, second]
  target_state: uninitialized
`, ns), manifest}
	out := make([]*unstructured.Unstructured, len(docs))
	for i, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatal(err)
		}
		out[i] = u
	}
	return out
}

// TestReappliedDocumentsShowNoDrift applies a manifest's documents as a
// phase does (internal/apply: server-side apply, inventory, wait), lets the
// operator enable the group and its charts, and applies the same documents
// again: nothing is configured and nothing drifts, because enabling records
// the owner's target in an annotation and leaves spec.target_state as the
// documents wrote it. Then the site uninstalls the manifest: the apply's
// wait ends only when every release is gone.
func TestReappliedDocumentsShowNoDrift(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "reapply")
	a, err := apply.New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	// As the example site's executor: kstatus counts a custom resource
	// nobody reconciled yet as Current, so the wait is for the manifest's
	// Ready (kstatus also needs its observedGeneration to be current).
	opts := apply.Options{Inventory: ns, WaitTimeout: 3 * time.Minute, Conditions: []airshipv1.Condition{{
		TypeMeta: metav1.TypeMeta{APIVersion: armadav1.GroupVersion.String(), Kind: "ArmadaManifest"},
		JSONPath: `{.status.conditions[?(@.type=="Ready")].status}`, Value: "True",
	}}}
	res, err := a.Apply(ctx, siteDocuments(t, ns, ""), opts)
	if err != nil {
		dumpCharts(t, ns)
		t.Fatal(err)
	}
	if res.Count("created") != 4 || !res.Ready {
		t.Fatalf("first apply: %+v", res)
	}
	for _, name := range []string{"first", "second"} {
		var c armadav1.ArmadaChart
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &c); err != nil {
			t.Fatal(err)
		}
		if c.Spec.TargetState != armadav1.TargetStateUninitialized || c.Annotations[TargetStateAnnotation] != "deployed" ||
			c.Status.TargetState != armadav1.TargetStateDeployed || c.Status.State != armadav1.StateDeployed {
			t.Fatalf("chart %s: spec.target_state %q, annotation %q, status %s/%s", name, c.Spec.TargetState, c.Annotations[TargetStateAnnotation], c.Status.TargetState, c.Status.State)
		}
	}
	var g armadav1.ArmadaChartGroup
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "g"}, &g); err != nil {
		t.Fatal(err)
	}
	if g.Spec.TargetState != armadav1.TargetStateUninitialized || g.Annotations[TargetStateAnnotation] != "deployed" || g.Status.TargetState != armadav1.TargetStateDeployed || !g.Status.Satisfied {
		t.Fatalf("group: spec.target_state %q, annotation %q, status %+v", g.Spec.TargetState, g.Annotations[TargetStateAnnotation], g.Status)
	}

	res, err = a.Apply(ctx, siteDocuments(t, ns, ""), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count("unchanged") != 4 {
		t.Errorf("second apply changed objects: %+v", res.Changes)
	}
	states, _, err := a.Status(ctx, ns, siteDocuments(t, ns, ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 4 {
		t.Fatalf("status of %d objects, want 4: %+v", len(states), states)
	}
	for _, s := range states {
		if !s.Applied || !s.Ready || s.Drifted {
			t.Errorf("%s: applied %v ready %v drifted %v: %s", s.Object, s.Applied, s.Ready, s.Drifted, s.Message)
		}
	}

	// The site asks for the releases to go. The manifest is Ready for its
	// new generation only once its group acted on the new target, which
	// it does only once both charts did.
	res, err = a.Apply(ctx, siteDocuments(t, ns, "uninstalled"), opts)
	if err != nil {
		dumpCharts(t, ns)
		t.Fatal(err)
	}
	if res.Count("configured") != 1 || res.Count("unchanged") != 3 || !res.Ready {
		t.Fatalf("uninstalling apply: %+v", res)
	}
	var m armadav1.ArmadaManifest
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "site"}, &m); err != nil {
		t.Fatal(err)
	}
	if r := apimeta.FindStatusCondition(m.Status.Conditions, armadav1.ReadyCondition); !m.Status.Satisfied || r == nil || r.ObservedGeneration != m.Generation {
		t.Fatalf("manifest after uninstalling: %+v", m.Status)
	}
	hc := helm.New(env.Config, nil)
	for _, name := range []string{"first", "second"} {
		if last, err := hc.Last(ns, "site-"+name); err != nil {
			t.Fatal(err)
		} else if last != nil {
			t.Errorf("release site-%s still there when the manifest was Ready: revision %d %s", name, last.Version, last.Info.Status)
		}
		var c armadav1.ArmadaChart
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &c); err != nil {
			t.Fatal(err)
		}
		if c.Annotations[TargetStateAnnotation] != "uninstalled" || c.Status.State != armadav1.StateUninstalled || c.Spec.TargetState != armadav1.TargetStateUninitialized {
			t.Errorf("chart %s: annotation %q, state %s, spec.target_state %q", name, c.Annotations[TargetStateAnnotation], c.Status.State, c.Spec.TargetState)
		}
	}
}

// TestInvalidTargetStateAnnotationStalls checks that a hand-written
// target-state annotation the operator cannot read stalls the chart, or
// the group, with a message naming the annotation.
func TestInvalidTargetStateAnnotationStalls(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "badtarget")
	c := newChart(ns, "c", "c", chartDir(t, "small"))
	c.Annotations = map[string]string{TargetStateAnnotation: "installed"}
	g := &armadav1.ArmadaChartGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g", Annotations: map[string]string{TargetStateAnnotation: "on"}},
		Spec: armadav1.ArmadaChartGroupSpec{ChartGroup: []string{}}}
	for _, o := range []client.Object{c, g} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	const field = "metadata.annotations[armada.airshipit.org/target-state]"
	got := waitFor(t, client.ObjectKeyFromObject(c), 60*time.Second, "stalled on the annotation", stalledWith(ReasonInvalidTargetState))
	if msg := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.StalledCondition).Message; !strings.Contains(msg, field) || !strings.Contains(msg, `"installed"`) || !strings.Contains(msg, "ArmadaChart "+ns+"/c") {
		t.Errorf("chart Stalled message %q does not name the chart, the annotation and its value", msg)
	}
	waitObj(t, g, 60*time.Second, "group stalled on the annotation", func() bool {
		s := apimeta.FindStatusCondition(g.Status.Conditions, armadav1.StalledCondition)
		return s != nil && s.Status == metav1.ConditionTrue && s.Reason == ReasonInvalidTargetState && s.ObservedGeneration == g.Generation
	})
	if msg := apimeta.FindStatusCondition(g.Status.Conditions, armadav1.StalledCondition).Message; !strings.Contains(msg, field) || !strings.Contains(msg, "ArmadaChartGroup "+ns+"/g") {
		t.Errorf("group Stalled message %q does not name the group and the annotation", msg)
	}
}

// TestReconcileOwner covers the pass groups and manifests share, with a
// fake client: a Stalled warning or a Satisfied event once per transition,
// no status write when nothing changed, and a status write that conflicts
// retried soon rather than reported.
func TestReconcileOwner(t *testing.T) {
	const ns = "site"
	for _, tc := range []struct {
		name       string
		charts     []string
		conflict   bool
		wantResult ctrl.Result
		wantEvents []string // first pass; a second pass records none
		wantWrites int      // first pass; a second pass writes none
	}{
		{name: "stalled warns once", charts: []string{"ghost"},
			wantEvents: []string{"Warning " + ReasonChartMissing}, wantWrites: 1},
		{name: "satisfied is announced once", charts: nil,
			wantEvents: []string{"Normal " + ReasonSatisfied}, wantWrites: 1},
		{name: "a conflicting status write is retried soon", charts: []string{"ghost"}, conflict: true,
			wantResult: ctrl.Result{RequeueAfter: operatorkit.ConflictRetry}, wantEvents: []string{"Warning " + ReasonChartMissing}, wantWrites: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &armadav1.ArmadaChartGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"}, Spec: armadav1.ArmadaChartGroupSpec{ChartGroup: tc.charts}}
			s := runtime.NewScheme()
			if err := armadav1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			var writes int
			cl := fake.NewClientBuilder().WithScheme(s).WithObjects(g).WithStatusSubresource(g).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
					writes++
					if tc.conflict {
						return apierrors.NewConflict(schema.GroupResource{Group: armadav1.GroupVersion.Group, Resource: "armadachartgroups"}, obj.GetName(), errors.New("changed"))
					}
					return c.SubResource(sub).Patch(ctx, obj, p, opts...)
				}}).Build()
			rec := events.NewFakeRecorder(10)
			r := &ArmadaChartGroupReconciler{Client: cl, Recorder: rec}
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(g)}
			res, err := r.Reconcile(context.Background(), req)
			if err != nil || res != tc.wantResult {
				t.Fatalf("first pass: %+v, %v; want %+v, no error", res, err, tc.wantResult)
			}
			if got := recorded(rec); !slices.Equal(got, tc.wantEvents) {
				t.Errorf("first pass recorded %q, want %q", got, tc.wantEvents)
			}
			if writes != tc.wantWrites {
				t.Errorf("first pass wrote status %d times, want %d", writes, tc.wantWrites)
			}
			if tc.conflict {
				return
			}
			writes = 0
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if got := recorded(rec); len(got) != 0 || writes != 0 {
				t.Errorf("second pass recorded %q and wrote status %d times, want nothing", got, writes)
			}
		})
	}
}

// recorded drains rec into "<type> <reason>" strings.
func recorded(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			f := strings.Fields(e)
			out = append(out, strings.Join(f[:min(2, len(f))], " "))
		default:
			return out
		}
	}
}
