package reconcilers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
)

func stalledWith(reason string) func(*armadav1.ArmadaChart) bool {
	return func(c *armadav1.ArmadaChart) bool {
		s := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.StalledCondition)
		return s != nil && s.Status == metav1.ConditionTrue && s.Reason == reason && s.ObservedGeneration == c.Generation
	}
}

// TestBadInputStallsNamingTheField checks that input only a spec change can
// fix stalls the chart (no retry storm) with a message naming the field, that
// value strings never reach status or events, and that fixing the spec
// recovers.
func TestBadInputStallsNamingTheField(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "stall")
	const secret = "hunter2-very-secret"
	tests := []struct {
		name    string
		mutate  func(*armadav1.ArmadaChart)
		reason  string
		field   string
		fixWith func(*armadav1.ArmadaChart)
	}{
		{
			name:    "missing chart",
			mutate:  func(c *armadav1.ArmadaChart) { c.Spec.Source.Location = "/nonexistent/charts/small" },
			reason:  ReasonChartNotFound,
			field:   "spec.source",
			fixWith: func(c *armadav1.ArmadaChart) { c.Spec.Source.Location = chartDir(t, "small") },
		},
		{
			name: "values type error",
			mutate: func(c *armadav1.ArmadaChart) {
				c.Spec.Values = values(t, `{"replicas": "three", "password": "`+secret+`"}`)
			},
			reason:  ReasonInvalidValues,
			field:   "spec.values",
			fixWith: func(c *armadav1.ArmadaChart) { c.Spec.Values = values(t, `{"replicas": 1}`) },
		},
		{
			name:    "render error quoting a value",
			mutate:  func(c *armadav1.ArmadaChart) { c.Spec.Values = values(t, `{"failWith": "token `+secret+`"}`) },
			reason:  ReasonInvalidValues,
			field:   "spec.values",
			fixWith: func(c *armadav1.ArmadaChart) { c.Spec.Values = values(t, `{"replicas": 1}`) },
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			act := newChart(ns, "bad-"+string(rune('a'+i)), "bad-"+string(rune('a'+i)), chartDir(t, "small"))
			tt.mutate(act)
			if err := env.Client.Create(ctx, act); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(act)
			got := waitFor(t, key, 60*time.Second, "Stalled "+tt.reason, stalledWith(tt.reason))
			st := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.StalledCondition)
			if !strings.Contains(st.Message, tt.field) {
				t.Fatalf("Stalled message %q does not name %s", st.Message, tt.field)
			}
			if got.Status.State != armadav1.StateError || got.Status.Satisfied {
				t.Fatalf("state %q satisfied %v, want error/false", got.Status.State, got.Status.Satisfied)
			}
			if r := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.ReadyCondition); r == nil || r.Status != metav1.ConditionFalse {
				t.Fatalf("Ready = %+v, want False", r)
			}
			assertNoSecret(t, ns, act.Name, got, secret)

			got = update(t, key, tt.fixWith)
			got = waitFor(t, key, 90*time.Second, "recovery after the fix", satisfiedAt(got.Generation))
			if apimeta.FindStatusCondition(got.Status.Conditions, armadav1.StalledCondition) != nil {
				t.Fatalf("Stalled condition left after recovery: %+v", got.Status.Conditions)
			}
		})
	}
}

func assertNoSecret(t *testing.T, ns, name string, obj *armadav1.ArmadaChart, secret string) {
	t.Helper()
	for _, c := range obj.Status.Conditions {
		if strings.Contains(c.Message, secret) {
			t.Fatalf("condition %s leaks a value: %q", c.Type, c.Message)
		}
	}
	var l eventsv1.EventList
	if err := env.Client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Items {
		if e.Regarding.Name == name && strings.Contains(e.Note, secret) {
			t.Fatalf("event %s leaks a value: %q", e.Reason, e.Note)
		}
	}
}

// TestTarOverHTTP installs a chart archive served by an in-site HTTP server.
func TestTarOverHTTP(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "tar")
	archive := packChart(t, chartDir(t, "small"), "small")
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		if r.URL.Path != "/charts/small-0.1.0.tgz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(archive)
	}))
	defer srv.Close()

	act := newChart(ns, "web", "tarweb", "")
	act.Spec.Source = armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: srv.URL + "/charts/small-0.1.0.tgz"}
	act.Spec.Values = values(t, `{"replicas": 1}`)
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, client.ObjectKeyFromObject(act), 90*time.Second, "install from HTTP", satisfiedAt(1))
	if got.Status.HelmRevision != 1 || hits == 0 {
		t.Fatalf("revision %d after %d fetches", got.Status.HelmRevision, hits)
	}
}

// TestWaitTimeoutReported checks that a wait that cannot be met within
// wait.timeout fails the chart with reason WaitTimeout, an event, and a
// growing failure counter, and marks the revision failed in Helm's history
// (its objects stay until the next attempt purges and reinstalls it).
func TestWaitTimeoutReported(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "timeout")
	act := newChart(ns, "web", "slow", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"replicas": 1}`)
	act.Spec.Wait = &armadav1.ArmadaChartWait{
		Timeout: 3,
		Labels:  map[string]string{"app": "slow"},
		// No StatefulSet exists, and a listed resource is required.
		Resources: []armadav1.ArmadaChartWaitResource{{Type: armadav1.WaitResourceDeployment}, {Type: armadav1.WaitResourceStatefulSet}},
	}
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, client.ObjectKeyFromObject(act), 60*time.Second, "WaitTimeout", func(c *armadav1.ArmadaChart) bool {
		r := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.ReadyCondition)
		return r != nil && r.Reason == ReasonWaitTimeout && c.Status.Failures >= 1
	})
	r := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.ReadyCondition)
	if !strings.Contains(r.Message, "spec.wait.timeout") || !strings.Contains(r.Message, "statefulset") {
		t.Fatalf("Ready message %q should name spec.wait.timeout and what was missing", r.Message)
	}
	if got.Status.State != armadav1.StateFailed || got.Status.Satisfied || got.Status.HelmStatus != "failed" {
		t.Fatalf("status %+v", got.Status)
	}
	assertEvents(t, ns, "web", ReasonWaitTimeout)

	// Dropping the impossible entry lets the chart finish.
	got = update(t, client.ObjectKeyFromObject(act), func(c *armadav1.ArmadaChart) {
		c.Spec.Wait.Resources = c.Spec.Wait.Resources[:1]
		c.Spec.Wait.Resources[0].Required = ptr.To(true)
	})
	waitFor(t, client.ObjectKeyFromObject(act), 60*time.Second, "satisfied after relaxing the wait", satisfiedAt(got.Generation))
}

// TestDependencies vendors a dependency chart into the release, and stalls
// on a dependency cycle or a missing dependency, naming spec.dependencies.
func TestDependencies(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "deps")
	extra := newChart(ns, "extra", "extra", chartDir(t, "extra"))
	extra.Spec.TargetState = armadav1.TargetStateUninitialized
	app := newChart(ns, "app", "app", chartDir(t, "small"))
	app.Spec.Values = values(t, `{"replicas": 1}`)
	app.Spec.Dependencies = []string{"extra"}
	cycA := newChart(ns, "cyc-a", "cyc-a", chartDir(t, "small"))
	cycA.Spec.Dependencies = []string{"cyc-b"}
	cycB := newChart(ns, "cyc-b", "cyc-b", chartDir(t, "extra"))
	cycB.Spec.Dependencies = []string{"cyc-a"}
	cycB.Spec.TargetState = armadav1.TargetStateUninitialized
	orphan := newChart(ns, "orphan", "orphan", chartDir(t, "small"))
	orphan.Spec.Dependencies = []string{"nobody"}
	for _, o := range []*armadav1.ArmadaChart{extra, app, cycA, cycB, orphan} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, client.ObjectKeyFromObject(app), 90*time.Second, "installed with its dependency", satisfiedAt(1))
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app-extra"}, &cm); err != nil || cm.Data["from"] != "dependency" {
		t.Fatalf("dependency's ConfigMap: %v %v", cm.Data, err)
	}
	for _, tt := range []struct {
		obj    *armadav1.ArmadaChart
		reason string
		want   []string
	}{
		{cycA, ReasonDependencyCycle, []string{"spec.dependencies[0]", "cyc-a -> cyc-b -> cyc-a"}},
		{orphan, ReasonDependencyMissing, []string{"spec.dependencies[0]", "nobody", "not found"}},
	} {
		got := waitFor(t, client.ObjectKeyFromObject(tt.obj), 60*time.Second, tt.reason, stalledWith(tt.reason))
		msg := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.StalledCondition).Message
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: Stalled message %q does not contain %q", tt.obj.Name, msg, w)
			}
		}
	}
}

// writeChart writes a chart named name with the given templates to a new
// directory and returns it.
func writeChart(t *testing.T, name string, templates map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"Chart.yaml": "apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n"}
	for f, body := range templates {
		files[filepath.Join("templates", f)] = body
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestDependencyChangeUpgradesDependents changes the source of a chart
// other charts vendor, and checks that both its direct dependent and a
// dependent through another dependency are upgraded to a revision that
// holds the new dependency, without any change to the dependents.
func TestDependencyChangeUpgradesDependents(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	hc := helm.New(env.Config, nil)
	ns := newNamespace(t, "depchange")
	extraV2 := writeChart(t, "extra", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-extra\ndata:\n  from: dependency-v2\n"})
	midDir := writeChart(t, "mid", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-mid\ndata:\n  from: mid\n"})
	topDir := writeChart(t, "top", map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-top\ndata:\n  from: top\n"})

	extra := newChart(ns, "extra", "extra", chartDir(t, "extra"))
	extra.Spec.TargetState = armadav1.TargetStateUninitialized
	mid := newChart(ns, "mid", "mid", midDir)
	mid.Spec.TargetState = armadav1.TargetStateUninitialized
	mid.Spec.Dependencies = []string{"extra"}
	app := newChart(ns, "app", "app", chartDir(t, "small"))
	app.Spec.Values = values(t, `{"replicas": 1}`)
	app.Spec.Dependencies = []string{"extra"}
	top := newChart(ns, "top", "top", topDir)
	top.Spec.Dependencies = []string{"mid"}
	for _, o := range []*armadav1.ArmadaChart{extra, mid, app, top} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []*armadav1.ArmadaChart{app, top} {
		waitFor(t, client.ObjectKeyFromObject(o), 90*time.Second, "installed with its dependency", satisfiedAt(1))
	}

	update(t, client.ObjectKeyFromObject(extra), func(c *armadav1.ArmadaChart) { c.Spec.Source.Location = extraV2 })
	for _, o := range []*armadav1.ArmadaChart{app, top} {
		got := waitFor(t, client.ObjectKeyFromObject(o), 90*time.Second, "upgraded with the new dependency", func(c *armadav1.ArmadaChart) bool {
			return c.Status.HelmRevision == 2 && satisfiedAt(1)(c)
		})
		if got.Generation != 1 {
			t.Fatalf("%s: its own spec changed (generation %d)", o.Name, got.Generation)
		}
		last, err := hc.Last(ns, o.Spec.Release)
		if err != nil || last.Version != 2 || !strings.Contains(last.Manifest, "dependency-v2") {
			t.Fatalf("%s: release after the dependency changed: err %v, manifest:\n%s", o.Name, err, last.Manifest)
		}
		var cm corev1.ConfigMap
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.Spec.Release + "-extra"}, &cm); err != nil || cm.Data["from"] != "dependency-v2" {
			t.Fatalf("%s: dependency's ConfigMap %v (err %v)", o.Name, cm.Data, err)
		}
	}
}
