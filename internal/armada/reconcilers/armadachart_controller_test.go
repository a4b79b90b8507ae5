package reconcilers

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chartv2loader "helm.sh/helm/v4/pkg/chart/v2/loader"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
)

// TestInstallUpgradeNoopDelete walks one ArmadaChart through its life:
// install until its Deployment is ready under kwok, a spec change that
// leaves chart and values alone (no new revision), a values change
// (upgrade), and delete (uninstall).
func TestInstallUpgradeNoopDelete(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "life")
	hc := helm.New(env.Config, nil)

	act := newChart(ns, "web", "web", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"replicas": 2, "greeting": "hi"}`)
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(act)

	got := waitFor(t, key, 90*time.Second, "install", satisfiedAt(1))
	if got.Status.HelmRevision != 1 || got.Status.HelmStatus != "deployed" || got.Status.ReleaseName != "web" || !got.Status.WaitCompleted {
		t.Fatalf("after install: status %+v", got.Status)
	}
	if c := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.ReadyCondition); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != 1 {
		t.Fatalf("Ready condition after install: %+v", c)
	}
	var dep appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-web"}, &dep); err != nil {
		t.Fatal(err)
	}
	if dep.Status.AvailableReplicas != 2 {
		t.Fatalf("deployment available replicas = %d, want 2 (the wait should have held the chart until then)", dep.Status.AvailableReplicas)
	}
	if !controllerHasFinalizer(got) {
		t.Fatalf("finalizer %s missing: %v", Finalizer, got.Finalizers)
	}

	// A spec change that does not touch chart or values: no new revision.
	update(t, key, func(c *armadav1.ArmadaChart) { c.Spec.ChartName = "renamed" })
	got = waitFor(t, key, 30*time.Second, "no-op reconcile", satisfiedAt(2))
	if got.Status.HelmRevision != 1 {
		t.Fatalf("no-op: helm revision = %d, want 1", got.Status.HelmRevision)
	}
	if h, err := hc.History(ns, "web"); err != nil || len(h) != 1 {
		t.Fatalf("no-op: history has %d revisions (err %v), want 1", len(h), err)
	}

	// A values change: upgrade to revision 2.
	update(t, key, func(c *armadav1.ArmadaChart) { c.Spec.Values = values(t, `{"replicas": 3, "greeting": "bonjour"}`) })
	got = waitFor(t, key, 90*time.Second, "upgrade", satisfiedAt(3))
	if got.Status.HelmRevision != 2 {
		t.Fatalf("upgrade: helm revision = %d, want 2", got.Status.HelmRevision)
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-config"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["greeting"] != "bonjour" {
		t.Fatalf("configmap greeting = %q after upgrade", cm.Data["greeting"])
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-web"}, &dep); err != nil {
		t.Fatal(err)
	}
	if dep.Status.AvailableReplicas != 3 {
		t.Fatalf("deployment available replicas = %d after upgrade, want 3", dep.Status.AvailableReplicas)
	}
	assertEvents(t, ns, "web", "InstallSucceeded", "UpgradeSucceeded")

	// Delete: the release is uninstalled and the object goes.
	if err := env.Client.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, &armadav1.ArmadaChart{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("ArmadaChart not deleted: %v", err)
	}
	if last, err := hc.Last(ns, "web"); err != nil || last != nil {
		t.Fatalf("release after delete: %v (err %v), want none", last, err)
	}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-config"}, &cm)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("configmap after uninstall: err %v, want NotFound", err)
	}
}

func controllerHasFinalizer(c *armadav1.ArmadaChart) bool {
	for _, f := range c.Finalizers {
		if f == Finalizer {
			return true
		}
	}
	return false
}

// assertEvents checks that events with each reason were recorded for the
// named ArmadaChart.
func assertEvents(t *testing.T, ns, name string, reasons ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, r := range reasons {
		want[r] = true
	}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var l eventsv1.EventList
		if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range l.Items {
			if e.Regarding.Kind == "ArmadaChart" && e.Regarding.Name == name {
				delete(want, e.Reason)
			}
		}
		return len(want) == 0, nil
	})
	if err != nil {
		t.Fatalf("events for ArmadaChart %s/%s: missing reasons %v", ns, name, want)
	}
}

// TestExistingReleaseIsTakenOver creates a chart for a release installed
// by hand before it. Its status knows of no revision, so the first pass
// installs without reading Helm's history; Helm refuses the name, and the
// pass reads the history and upgrades the release to the chart's values
// instead: revision 2, no failure counted or reported.
func TestExistingReleaseIsTakenOver(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "takeover")
	hc := helm.New(env.Config, nil)
	ch, err := chartv2loader.LoadDir(chartDir(t, "small"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hc.Install(ctx, helm.Options{Namespace: ns, Name: "web", Chart: ch, Values: map[string]any{"greeting": "by hand"}, Digest: "by-hand", Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	act := newChart(ns, "web", "web", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"greeting": "from the chart"}`)
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, client.ObjectKeyFromObject(act), 90*time.Second, "take over", satisfiedAt(1))
	if got.Status.HelmRevision != 2 || got.Status.InstallFailures != 0 || got.Status.Failures != 0 {
		t.Fatalf("after taking the release over: status %+v, want revision 2 and no failure", got.Status)
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-config"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["greeting"] != "from the chart" {
		t.Fatalf("configmap greeting = %q, want the chart's", cm.Data["greeting"])
	}
	assertEvents(t, ns, "web", "UpgradeSucceeded", ReasonSatisfied)
	var l eventsv1.EventList
	if err := env.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Items {
		if e.Regarding.Name == "web" && e.Type == corev1.EventTypeWarning {
			t.Errorf("warning event %s: %s", e.Reason, e.Note)
		}
	}
}

// TestHandDeletedDeploymentIsRecreated checks healing: deleting a
// Deployment of the release by hand makes the operator put it back.
func TestHandDeletedDeploymentIsRecreated(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "heal")
	act := newChart(ns, "web", "heal", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"replicas": 1}`)
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(act)
	waitFor(t, key, 90*time.Second, "install", satisfiedAt(1))
	depKey := client.ObjectKey{Namespace: ns, Name: "heal-web"}
	var dep appsv1.Deployment
	if err := env.Client.Get(ctx, depKey, &dep); err != nil {
		t.Fatal(err)
	}
	oldUID := dep.UID
	if err := env.Client.Delete(ctx, &dep); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := env.Client.Get(ctx, depKey, &d); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return d.UID != oldUID, nil
	}); err != nil {
		t.Fatalf("deployment not recreated: %v", err)
	}
	got := waitFor(t, key, 60*time.Second, "satisfied after healing", func(c *armadav1.ArmadaChart) bool {
		return c.Status.Satisfied && c.Status.HelmRevision == 2
	})
	if got.Status.State != armadav1.StateDeployed {
		t.Fatalf("status %+v", got.Status)
	}
	assertEvents(t, ns, "web", "Drift")
}

// TestHandChangedDeploymentIsRestored: a field of the release's Deployment
// changed by hand is put back by an upgrade, with a Drift event.
func TestHandChangedDeploymentIsRestored(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "heal-change")
	act := newChart(ns, "web", "fix", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"replicas": 1}`)
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(act)
	waitFor(t, key, 90*time.Second, "install", satisfiedAt(1))
	depKey := client.ObjectKey{Namespace: ns, Name: "fix-web"}
	var dep appsv1.Deployment
	if err := env.Client.Get(ctx, depKey, &dep); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Patch(ctx, &dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`))); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := env.Client.Get(ctx, depKey, &d); err != nil {
			return false, err
		}
		return d.Spec.Replicas != nil && *d.Spec.Replicas == 1, nil
	}); err != nil {
		var evs corev1.EventList
		_ = env.Client.List(ctx, &evs, client.InNamespace(ns))
		for _, e := range evs.Items {
			t.Logf("event %s %s: %s", e.Reason, e.Action, e.Message)
		}
		var c armadav1.ArmadaChart
		_ = env.Client.Get(ctx, key, &c)
		t.Logf("status %+v", c.Status)
		t.Fatalf("hand change not undone: %v", err)
	}
	waitFor(t, key, 60*time.Second, "satisfied after healing", func(c *armadav1.ArmadaChart) bool {
		return c.Status.Satisfied && c.Status.HelmRevision == 2
	})
	assertEvents(t, ns, "web", "Drift")

	// Healed once: the live objects now hold what the release sets, so a
	// later reconcile finds nothing to heal.
	hc := helm.New(env.Config, nil)
	last, err := hc.Last(ns, "fix")
	if err != nil || last == nil || last.Version != 2 {
		t.Fatalf("release after healing: %v %v", last, err)
	}
	if missing, changed, err := hc.Drift(last); err != nil || len(missing)+len(changed) != 0 {
		t.Fatalf("drift left after healing: missing %v changed %v err %v", missing, changed, err)
	}
	// A spec change that leaves chart and values alone makes the operator
	// check the steady release again; its decision is recorded with the
	// new generation, after any upgrade it would make.
	gen := update(t, key, func(c *armadav1.ArmadaChart) { c.Spec.ChartName = "checked-again" }).Generation
	after := waitFor(t, key, 60*time.Second, "reconcile of the new generation", func(c *armadav1.ArmadaChart) bool {
		return c.Status.ObservedGeneration == gen && c.Status.Satisfied
	})
	if after.Status.HelmRevision != 2 {
		t.Fatalf("release upgraded again after healing: revision %d", after.Status.HelmRevision)
	}
	if h, err := hc.History(ns, "fix"); err != nil || len(h) != 2 {
		t.Fatalf("history after healing: %d revisions (err %v), want 2", len(h), err)
	}
}
