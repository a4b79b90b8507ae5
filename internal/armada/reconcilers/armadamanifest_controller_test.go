package reconcilers

import (
	"context"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chartv2loader "helm.sh/helm/v4/pkg/chart/v2/loader"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
)

// eventTimes returns, per ArmadaChart name, when the first event with
// reason was emitted (microsecond resolution).
func eventTimes(t *testing.T, ns, reason string) map[string]time.Time {
	t.Helper()
	var l eventsv1.EventList
	if err := env.Client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, e := range l.Items {
		if e.Regarding.Kind != "ArmadaChart" || e.Reason != reason {
			continue
		}
		if old, ok := out[e.Regarding.Name]; !ok || e.EventTime.Time.Before(old) {
			out[e.Regarding.Name] = e.EventTime.Time
		}
	}
	return out
}

// waitObj polls obj (by its namespace and name) until cond holds.
func waitObj(t *testing.T, obj client.Object, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(), nil
	}); err != nil {
		dumpCharts(t, obj.GetNamespace())
		t.Fatalf("%T %s: waiting until %s: %v", obj, client.ObjectKeyFromObject(obj), what, err)
	}
}

// decided reports whether a reconciler recorded, for generation gen, a
// Ready condition with reason.
func decided(gen, observed int64, conds []metav1.Condition, reason string) bool {
	r := apimeta.FindStatusCondition(conds, armadav1.ReadyCondition)
	return observed == gen && r != nil && r.ObservedGeneration == gen && r.Status == metav1.ConditionTrue && r.Reason == reason
}

// TestManifestOrdersGroupsAndCharts deploys a manifest of two groups: the
// first sequenced (each chart installed only after the previous one is
// satisfied), the second in parallel, and only after the first is done. The
// order is read from event timestamps.
func TestManifestOrdersGroupsAndCharts(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "amf")
	mk := func(name string) {
		c := newChart(ns, name, name, chartDir(t, "small"))
		c.Spec.Values = values(t, `{"replicas": 2}`)
		c.Spec.TargetState = armadav1.TargetStateUninitialized
		if err := env.Client.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	seq, par := []string{"s1", "s2", "s3"}, []string{"p1", "p2", "p3"}
	for _, n := range append(append([]string{}, seq...), par...) {
		mk(n)
	}
	groups := []*armadav1.ArmadaChartGroup{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "infra"}, Spec: armadav1.ArmadaChartGroupSpec{ChartGroup: seq, Sequenced: true, TargetState: armadav1.TargetStateUninitialized}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "apps"}, Spec: armadav1.ArmadaChartGroupSpec{ChartGroup: par, TargetState: armadav1.TargetStateUninitialized}},
	}
	for _, g := range groups {
		if err := env.Client.Create(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing is installed while the charts wait for their group. The
	// groups record that they leave their charts alone (after adopting
	// them, before any enabling), and each chart that it left its release
	// alone for its current spec, whose target_state is still
	// uninitialized: the decisions that would have installed are made.
	for _, g := range groups {
		waitObj(t, g, 90*time.Second, "group decided to leave its charts alone", func() bool {
			return decided(g.Generation, g.Status.ObservedGeneration, g.Status.Conditions, ReasonUninitialized)
		})
	}
	hc := helm.New(env.Config, nil)
	for _, n := range append(append([]string{}, seq...), par...) {
		c := &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}}
		waitObj(t, c, 90*time.Second, "chart decided to leave its release alone", func() bool {
			return decided(c.Generation, c.Status.ObservedGeneration, c.Status.Conditions, ReasonUninitialized)
		})
		if c.Spec.TargetState != armadav1.TargetStateUninitialized || metav1.GetControllerOf(c) == nil {
			t.Fatalf("chart %s before the manifest: target_state %q, controller %v", n, c.Spec.TargetState, metav1.GetControllerOf(c))
		}
		if last, err := hc.Last(ns, n); err != nil {
			t.Fatal(err)
		} else if last != nil {
			t.Fatalf("release %s exists before the manifest: revision %d %s", n, last.Version, last.Info.Status)
		}
	}

	amf := &armadav1.ArmadaManifest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site"},
		Spec:       armadav1.ArmadaManifestSpec{ReleasePrefix: "site", ChartGroups: []string{"infra", "apps"}},
	}
	if err := env.Client.Create(ctx, amf); err != nil {
		t.Fatal(err)
	}
	var got armadav1.ArmadaManifest
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(amf), &got); err != nil {
			return false, err
		}
		return got.Status.Satisfied, nil
	}); err != nil {
		dumpCharts(t, ns)
		t.Fatalf("manifest not satisfied: %v; status %+v", err, got.Status)
	}
	if got.Status.Summary != "2/2" || apimeta.IsStatusConditionTrue(got.Status.Conditions, armadav1.ReadyCondition) != true {
		t.Fatalf("manifest status %+v", got.Status)
	}

	var c armadav1.ArmadaChart
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "s2"}, &c); err != nil {
		t.Fatal(err)
	}
	if c.Status.ReleaseName != "site-s2" || metav1.GetControllerOf(&c) == nil || metav1.GetControllerOf(&c).Name != "infra" {
		t.Fatalf("chart s2: release %q, controller %v", c.Status.ReleaseName, metav1.GetControllerOf(&c))
	}

	// Events are written asynchronously, after the status that satisfied
	// the manifest: wait until every chart's are there.
	var installed, satisfied map[string]time.Time
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		installed, satisfied = eventTimes(t, ns, "InstallSucceeded"), eventTimes(t, ns, ReasonSatisfied)
		for _, n := range append(append([]string{}, seq...), par...) {
			if installed[n].IsZero() || satisfied[n].IsZero() {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("missing events: installed %v satisfied %v", installed, satisfied)
	}
	for i := 1; i < len(seq); i++ {
		if !installed[seq[i]].After(satisfied[seq[i-1]]) {
			t.Errorf("sequenced: %s installed at %s, before %s was satisfied at %s", seq[i], installed[seq[i]].Format(time.StampMicro), seq[i-1], satisfied[seq[i-1]].Format(time.StampMicro))
		}
	}
	for _, p := range par {
		if !installed[p].After(satisfied[seq[len(seq)-1]]) {
			t.Errorf("group order: %s installed at %s, before group infra finished at %s", p, installed[p].Format(time.StampMicro), satisfied[seq[len(seq)-1]].Format(time.StampMicro))
		}
	}
	overlap := false
	for _, a := range par {
		for _, b := range par {
			if a != b && installed[b].Before(satisfied[a]) {
				overlap = true
			}
		}
	}
	if !overlap {
		t.Errorf("parallel group ran one at a time: installed %v satisfied %v", installed, satisfied)
	}
}

// TestGroupNamingMissingChartStalls checks the Stalled message names the
// chart_group entry, and that creating the chart unblocks the group.
func TestGroupNamingMissingChartStalls(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "acg")
	g := &armadav1.ArmadaChartGroup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"},
		Spec:       armadav1.ArmadaChartGroupSpec{ChartGroup: []string{"ghost"}},
	}
	if err := env.Client.Create(ctx, g); err != nil {
		t.Fatal(err)
	}
	var got armadav1.ArmadaChartGroup
	poll := func(what string, cond func() bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(g), &got); err != nil {
				return false, err
			}
			return cond(), nil
		}); err != nil {
			t.Fatalf("%s: %v; status %+v", what, err, got.Status)
		}
	}
	poll("Stalled", func() bool { return apimeta.IsStatusConditionTrue(got.Status.Conditions, armadav1.StalledCondition) })
	msg := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.StalledCondition).Message
	if !strings.Contains(msg, "spec.chart_group[0]") || !strings.Contains(msg, "ghost") {
		t.Fatalf("Stalled message %q does not name spec.chart_group[0] and the chart", msg)
	}
	c := newChart(ns, "ghost", "ghost", chartDir(t, "small"))
	c.Spec.Values = values(t, `{"replicas": 1}`)
	if err := env.Client.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	poll("satisfied after the chart appears", func() bool { return got.Status.Satisfied && got.Status.Summary == "1/1" })
}

// dumpCharts logs the status of every chart and group in ns, for failures.
func dumpCharts(t *testing.T, ns string) {
	t.Helper()
	var cl armadav1.ArmadaChartList
	_ = env.Client.List(context.Background(), &cl, client.InNamespace(ns))
	for _, c := range cl.Items {
		t.Logf("chart %s gen %d target %s: %+v", c.Name, c.Generation, c.Spec.TargetState, c.Status)
	}
	var gl armadav1.ArmadaChartGroupList
	_ = env.Client.List(context.Background(), &gl, client.InNamespace(ns))
	for _, g := range gl.Items {
		t.Logf("group %s gen %d target %s: %+v", g.Name, g.Generation, g.Spec.TargetState, g.Status)
	}
}

// TestManifestChartCleanup checks enable_chart_cleanup: a release with the
// manifest's prefix that no chart owns is uninstalled once the manifest is
// deployed; releases of another prefix, or owned by a chart, are kept.
func TestManifestChartCleanup(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "cleanup")
	hc := helm.New(env.Config, nil)
	ch, err := chartv2loader.LoadDir(chartDir(t, "extra"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"site-stray", "other-keep", "site-b-owned"} {
		if _, err := hc.Install(ctx, helm.Options{Namespace: ns, Name: name, Chart: ch, Digest: "x", Timeout: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	// site-b-owned belongs to a chart of another manifest (prefix "site-b").
	owned := newChart(ns, "owned", "owned", chartDir(t, "extra"))
	owned.Annotations = map[string]string{ReleasePrefixAnnotation: "site-b"}
	owned.Spec.TargetState = armadav1.TargetStateUninitialized
	a := newChart(ns, "a", "a", chartDir(t, "extra"))
	a.Spec.TargetState = armadav1.TargetStateUninitialized
	g := &armadav1.ArmadaChartGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"}, Spec: armadav1.ArmadaChartGroupSpec{ChartGroup: []string{"a"}, TargetState: armadav1.TargetStateUninitialized}}
	m := &armadav1.ArmadaManifest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "site"}, Spec: armadav1.ArmadaManifestSpec{ReleasePrefix: "site", ChartGroups: []string{"g"}, EnableChartCleanup: true}}
	for _, o := range []client.Object{owned, a, g, m} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	// The manifest is satisfied only after its cleanup pass, so its Ready
	// condition is the evidence that every removal it would make is made.
	waitObj(t, m, 90*time.Second, "satisfied (cleanup done)", func() bool {
		return m.Status.Satisfied && decided(m.Generation, m.Status.ObservedGeneration, m.Status.Conditions, ReasonSucceeded)
	})
	if last, err := hc.Last(ns, "site-stray"); err != nil {
		t.Fatal(err)
	} else if last != nil {
		t.Errorf("stray release site-stray not cleaned up: revision %d %s", last.Version, last.Info.Status)
	}
	for _, keep := range []string{"other-keep", "site-b-owned", "site-a"} {
		if last, err := hc.Last(ns, keep); err != nil || last == nil {
			t.Errorf("release %s was removed (err %v)", keep, err)
		}
	}
}
