package apply

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// unchangedBundle is a Namespace, a Deployment with a label of its own, a
// ConfigMap with data value and a Service.
func unchangedBundle(ns, value string) string {
	return `apiVersion: v1
kind: Namespace
metadata:
  name: ` + ns + `
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ` + ns + `
  labels: {tier: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.invalid/web:1}]}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ` + ns + `
data: {a: "` + value + `"}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ` + ns + `
spec:
  selector: {app: web}
  ports: [{port: 80}]
`
}

// TestUnchangedObjectsNotSent: an apply of the same bundle again sends no
// object (each counted unchanged), though the Deployment's status changed
// since; what drifted by hand (a ConfigMap's data, the Deployment's own
// label, its spec), what was deleted, and what the bundle changes is sent,
// and put right; nothing else is.
func TestUnchangedObjectsNotSent(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var sent []string
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && !strings.Contains(r.URL.Path, "/namespaces/"+InventoryNamespace+"/") {
				mu.Lock()
				sent = append(sent, r.URL.Path[strings.LastIndex(r.URL.Path[:strings.LastIndex(r.URL.Path, "/")], "/")+1:])
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "same"
	opts := Options{Inventory: ns, WaitTimeout: time.Minute, PollInterval: 200 * time.Millisecond}
	var events []string
	opts.Progress = func(e Event) { events = append(events, e.Message) }
	run := func(what, value string, wantSent []string, wantActions map[string]string) {
		t.Helper()
		mu.Lock()
		sent, events = nil, nil
		mu.Unlock()
		res, err := a.Apply(ctx, objs(t, unchangedBundle(ns, value)), opts)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !res.Ready {
			t.Errorf("%s: not ready", what)
		}
		mu.Lock()
		// A Namespace is applied with a dry run first: one object, two requests.
		got := slices.Compact(slices.Sorted(slices.Values(sent)))
		mu.Unlock()
		if strings.Join(got, " ") != strings.Join(wantSent, " ") {
			t.Errorf("%s: sent %q, want %q; events %q", what, got, wantSent, events)
		}
		actions := map[string]string{}
		for _, c := range res.Changes {
			actions[c.Object] = c.Action
		}
		for obj, want := range wantActions {
			if actions[obj] != want {
				t.Errorf("%s: %s %q, want %q (all: %v)", what, obj, actions[obj], want, actions)
			}
		}
		if res.NotSent != 4-len(wantSent) {
			t.Errorf("%s: NotSent %d, want %d", what, res.NotSent, 4-len(wantSent))
		}
		if len(res.Changes) != 4 {
			t.Errorf("%s: %d changes, want 4: %v", what, len(res.Changes), res.Changes)
		}
	}
	all := []string{"namespaces/same", "deployments/web", "configmaps/settings", "services/web"}
	sort.Strings(all)
	run("first apply", "1", all, map[string]string{"Deployment.apps/same/web": "created", "ConfigMap/same/settings": "created"})
	run("again", "1", nil, map[string]string{"Namespace/same": "unchanged", "Deployment.apps/same/web": "unchanged",
		"ConfigMap/same/settings": "unchanged", "Service/same/web": "unchanged"})
	if !strings.Contains(strings.Join(events, "\n"), "applying 0 objects (4 more unchanged since the last apply, not sent)") {
		t.Errorf("events %q", events)
	}

	// Drift by hand: the ConfigMap's data (no generation: its
	// resourceVersion moved) and the Deployment's own label (a
	// generation, unchanged: its labels differ).
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}
	if err := env.Client.Patch(ctx, cm, client.RawPatch("application/merge-patch+json", []byte(`{"data":{"a":"by hand"}}`))); err != nil {
		t.Fatal(err)
	}
	dep := &unstructured.Unstructured{}
	dep.SetAPIVersion("apps/v1")
	dep.SetKind("Deployment")
	dep.SetNamespace(ns)
	dep.SetName("web")
	if err := env.Client.Patch(ctx, dep, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"tier":null}}}`))); err != nil {
		t.Fatal(err)
	}
	run("after drift of data and a label", "1", []string{"configmaps/settings", "deployments/web"},
		map[string]string{"ConfigMap/same/settings": "configured", "Deployment.apps/same/web": "configured", "Service/same/web": "unchanged"})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil || cm.Data["a"] != "1" {
		t.Errorf("ConfigMap data %v (%v), want put back", cm.Data, err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil || dep.GetLabels()["tier"] != "web" {
		t.Errorf("Deployment labels %v (%v), want tier put back", dep.GetLabels(), err)
	}

	// Drift of the Deployment's spec (its generation moves).
	if err := env.Client.Patch(ctx, dep, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":3}}`))); err != nil {
		t.Fatal(err)
	}
	run("after drift of a spec", "1", []string{"deployments/web"}, map[string]string{"Deployment.apps/same/web": "configured"})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); r != 1 {
		t.Errorf("replicas %d, want put back to 1", r)
	}

	// A deleted object is created again; a changed document is sent.
	if err := env.Client.Delete(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}); err != nil {
		t.Fatal(err)
	}
	run("after a delete and a new document", "2", []string{"configmaps/settings", "services/web"},
		map[string]string{"Service/same/web": "created", "ConfigMap/same/settings": "configured", "Deployment.apps/same/web": "unchanged"})
	run("unchanged at the end", "2", nil, map[string]string{"Service/same/web": "unchanged", "ConfigMap/same/settings": "unchanged"})
}
