package apply

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, func() (*testenv.Env, error) {
		return testenv.NewFull(context.Background(), testenv.Options{Nodes: 2})
	}, func(e *testenv.Env) { env = e }))
}

func objs(t *testing.T, y string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(y, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func newApplier(t *testing.T) *Applier {
	t.Helper()
	a, err := New(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func bundle(ns string, withCM bool) string {
	s := `apiVersion: v1
kind: Namespace
metadata:
  name: ` + ns + `
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ` + ns + `
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.invalid/web:1}]}
`
	if withCM {
		s += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: " + ns + "\ndata: {a: b}\n"
	}
	return s
}

func exists(t *testing.T, obj client.Object) bool {
	t.Helper()
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestApplyWaitDriftPrune(t *testing.T) {
	ctx := context.Background()
	a := newApplier(t)
	opts := Options{Inventory: "life", WaitTimeout: time.Minute, PollInterval: 200 * time.Millisecond}

	var events []string
	opts.Progress = func(e Event) { events = append(events, e.Type) }
	res, err := a.Apply(ctx, objs(t, bundle("life", true)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count("created") != 3 || !res.Ready {
		t.Fatalf("first apply: %+v", res)
	}
	if !strings.Contains(strings.Join(events, ","), "Apply,Apply,Wait") || events[len(events)-1] != "Ready" {
		t.Errorf("progress events %v", events)
	}
	var dep unstructured.Unstructured
	dep.SetAPIVersion("apps/v1")
	dep.SetKind("Deployment")
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "life", Name: "web"}, &dep); err != nil {
		t.Fatal(err)
	}
	if dep.GetLabels()[OwnerGroup+"/name"] != "life" {
		t.Errorf("owner labels missing: %v", dep.GetLabels())
	}
	if ready, _, _ := unstructured.NestedInt64(dep.Object, "status", "readyReplicas"); ready != 2 {
		t.Errorf("apply returned before the Deployment was ready: readyReplicas=%d", ready)
	}
	inv, found, err := ReadInventory(ctx, env.Client, "life")
	if err != nil || !found || len(inv.Objects) != 3 {
		t.Fatalf("inventory: found=%v %+v %v", found, inv, err)
	}

	res, err = a.Apply(ctx, objs(t, bundle("life", true)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count("unchanged") != 3 {
		t.Errorf("second apply changed something: %+v", res.Changes)
	}

	// A change by hand shows as drift.
	if err := env.Client.Patch(ctx, &dep, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":5}}`))); err != nil {
		t.Fatal(err)
	}
	states, _, err := a.Status(ctx, "life", objs(t, bundle("life", true)))
	if err != nil {
		t.Fatal(err)
	}
	drifted := map[string]bool{}
	for _, s := range states {
		if !s.Applied {
			t.Errorf("%s not applied", s.Object)
		}
		drifted[s.Object] = s.Drifted
	}
	if !drifted["Deployment.apps/life/web"] || drifted["ConfigMap/life/settings"] {
		t.Errorf("drift %v, want only the Deployment drifted", drifted)
	}

	// Applying again puts the drifted field back: configured, the rest unchanged.
	res, err = a.Apply(ctx, objs(t, bundle("life", true)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count("configured") != 1 || res.Count("unchanged") != 2 {
		t.Errorf("apply after drift: %+v, want the Deployment configured", res.Changes)
	}
	for _, c := range res.Changes {
		if (c.Action == "configured") != (c.Object == "Deployment.apps/life/web") {
			t.Errorf("change %+v", c)
		}
	}

	// Without prune, an object left out of the bundle stays, and stays ours.
	res, err = a.Apply(ctx, objs(t, bundle("life", false)), opts)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "life", Name: "settings"}}
	if !exists(t, cm) || len(res.Pruned) != 0 {
		t.Fatalf("object removed without prune: pruned=%v", res.Pruned)
	}
	// With prune it goes.
	opts.Prune = true
	res, err = a.Apply(ctx, objs(t, bundle("life", false)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pruned) != 1 || !strings.Contains(res.Pruned[0], "settings") {
		t.Fatalf("pruned %v, want the ConfigMap", res.Pruned)
	}
	if exists(t, cm) {
		t.Error("pruned ConfigMap still exists")
	}
	if inv, _, _ := ReadInventory(ctx, env.Client, "life"); len(inv.Objects) != 2 {
		t.Errorf("inventory after prune has %d objects, want 2", len(inv.Objects))
	}
}

func TestInventoryPolicies(t *testing.T) {
	ctx := context.Background()
	a := newApplier(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "policy"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// Created by hand: no inventory owns it.
	byHand := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "policy", Name: "by-hand"}}
	if err := env.Client.Create(ctx, byHand); err != nil {
		t.Fatal(err)
	}
	bundleYAML := `apiVersion: v1
kind: ConfigMap
metadata: {name: by-hand, namespace: policy}
data: {x: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: fresh, namespace: policy}
`
	fresh := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "policy", Name: "fresh"}}

	_, err := a.Apply(ctx, objs(t, bundleYAML), Options{Inventory: "one"})
	if err == nil || !strings.Contains(err.Error(), "ConfigMap/policy/by-hand exists and belongs to no inventory") {
		t.Fatalf("strict: got %v", err)
	}
	if exists(t, fresh) {
		t.Fatal("strict conflict still applied the other objects")
	}
	if _, err := a.Apply(ctx, objs(t, bundleYAML), Options{Inventory: "one", Policy: v1.InventoryPolicyAdopt}); err != nil {
		t.Fatalf("adopt: %v", err)
	}
	if !exists(t, fresh) {
		t.Fatal("adopt did not apply")
	}
	// Owned by inventory "one": "two" may not take it, even with adopt.
	_, err = a.Apply(ctx, objs(t, bundleYAML), Options{Inventory: "two", Policy: v1.InventoryPolicyAdopt})
	if err == nil || !strings.Contains(err.Error(), `belongs to inventory "one"`) {
		t.Fatalf("adopt of another inventory's object: got %v", err)
	}
	if _, err := a.Apply(ctx, objs(t, bundleYAML), Options{Inventory: "two", Policy: v1.InventoryPolicyForceAdopt}); err != nil {
		t.Fatalf("force-adopt: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(fresh), fresh); err != nil || fresh.Labels[OwnerGroup+"/name"] != "two" {
		t.Fatalf("force-adopt did not take ownership: %v %v", fresh.Labels, err)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	ctx := context.Background()
	a := newApplier(t)
	res, err := a.Apply(ctx, objs(t, bundle("dry", true)), Options{Inventory: "dry", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.DryRun || res.Count("created") != 3 {
		t.Fatalf("dry run result %+v", res)
	}
	if exists(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dry"}}) {
		t.Fatal("dry run created the namespace")
	}
	if _, found, _ := ReadInventory(ctx, env.Client, "dry"); found {
		t.Fatal("dry run wrote an inventory")
	}
}

func TestCRDAndCustomResourceInOnePhase(t *testing.T) {
	ctx := context.Background()
	a := newApplier(t)
	y := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.test.airshipit.org}
spec:
  group: test.airshipit.org
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: test.airshipit.org/v1
kind: Gadget
metadata: {name: g1, namespace: default}
spec: {size: 1}
`
	res, err := a.Apply(ctx, objs(t, y), Options{Inventory: "crd", WaitTimeout: 30 * time.Second, PollInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count("created") != 2 || !res.Ready {
		t.Fatalf("%+v", res)
	}
}

func TestWaitTimeoutNamesWhatIsNotReady(t *testing.T) {
	ctx := context.Background()
	a := newApplier(t)
	y := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: never, namespace: default}\ndata: {state: pending}\n"
	_, err := a.Apply(ctx, objs(t, y), Options{
		Inventory: "timeout", WaitTimeout: 2 * time.Second, PollInterval: 200 * time.Millisecond,
		Conditions: []v1.Condition{{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, JSONPath: "{.data.state}", Value: "done"}},
	})
	if err == nil || !strings.Contains(err.Error(), "timed out") || !strings.Contains(err.Error(), `ConfigMap/default/never: condition {.data.state} is "pending", want "done"`) {
		t.Fatalf("got %v", err)
	}
}

// TestWaitProgressSaysWhyItWentBack: when an object that was ready stops
// being ready, the progress line that counts down names it and says why.
func TestWaitProgressSaysWhyItWentBack(t *testing.T) {
	ctx := context.Background()
	a := newApplier(t)
	y := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flip-a, namespace: default}\ndata: {state: done}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: flip-b, namespace: default}\ndata: {state: pending}\n"
	progress := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		_, err := a.Apply(ctx, objs(t, y), Options{
			Inventory: "flip", WaitTimeout: time.Minute,
			Conditions: []v1.Condition{{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, JSONPath: "{.data.state}", Value: "done"}},
			Progress: func(ev Event) {
				if ev.Type == "Wait" {
					progress <- ev.Message
				}
			},
		})
		done <- err
	}()
	next := func(want string) string {
		t.Helper()
		for {
			select {
			case m := <-progress:
				if strings.HasPrefix(m, want) {
					return m
				}
			case err := <-done:
				t.Fatalf("apply ended (%v) before progress %q", err, want)
			case <-time.After(30 * time.Second):
				t.Fatalf("no progress %q in 30s", want)
			}
		}
	}
	set := func(name, state string) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["state"] = state
		if err := env.Client.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	if m := next("1 of 2 objects ready"); strings.Contains(m, "no longer") {
		t.Errorf("progress %q says something went back", m)
	}
	set("flip-a", "pending")
	want := `0 of 2 objects ready (ConfigMap/default/flip-a is no longer ready: condition {.data.state} is "pending", want "done")`
	if m := next("0 of 2 objects ready"); m != want {
		t.Errorf("progress %q, want %q", m, want)
	}
	set("flip-a", "done")
	set("flip-b", "done")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestDuplicateObjectsRejected(t *testing.T) {
	a := newApplier(t)
	y := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, namespace: default}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, namespace: default}\n"
	if _, err := a.Apply(context.Background(), objs(t, y), Options{Inventory: "dup"}); err == nil || !strings.Contains(err.Error(), "more than once: ConfigMap/default/d") {
		t.Fatalf("got %v", err)
	}
}

// TestWaitReadsOnlyWatchedObjects: waiting on Deployments must not LIST
// their ReplicaSets or Pods from the API server (kstatus' default readers do
// on every event, which makes readiness lag with hundreds of Deployments).
func TestWaitReadsOnlyWatchedObjects(t *testing.T) {
	var mu sync.Mutex
	var lists []string
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet && r.URL.Query().Get("watch") != "true" &&
				(strings.HasSuffix(r.URL.Path, "/replicasets") || strings.HasSuffix(r.URL.Path, "/pods")) {
				mu.Lock()
				lists = append(lists, r.URL.Path)
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Apply(context.Background(), objs(t, bundle("quiet", false)), Options{Inventory: "quiet", WaitTimeout: time.Minute, PollInterval: 200 * time.Millisecond})
	if err != nil || !res.Ready {
		t.Fatalf("apply: %+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lists) != 0 {
		t.Fatalf("the wait listed generated objects %d times: %v", len(lists), lists)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// After a pivot the namespace carries MovedToAnnotation: its objects are
// left alone (not created again, not pruned, not waited on), the rest of
// the bundle is applied, and status reports them moved.
func TestMovedNamespaceLeftAlone(t *testing.T) {
	ctx := context.Background()
	a := newApplier(t)
	opts := Options{Inventory: "moving", Prune: true, WaitTimeout: time.Minute}
	if _, err := a.Apply(ctx, objs(t, bundle("moving", true)), opts); err != nil {
		t.Fatal(err)
	}
	// What clusterctl move does: the objects go, the namespace stays and
	// is marked.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "moving", Name: "settings"}}
	if err := env.Client.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "moving"}}
	if err := env.Client.Patch(ctx, ns, client.RawPatch("application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"`+MovedToAnnotation+`":"target-cluster"}}}`))); err != nil {
		t.Fatal(err)
	}
	var moved []string
	opts.Progress = func(e Event) {
		if e.Type == "Moved" {
			moved = append(moved, e.Message)
		}
	}
	// A cluster-scoped object of the same bundle is still applied.
	extra := "\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: moving-extra\n"
	res, err := a.Apply(ctx, objs(t, bundle("moving", true)+extra), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Moved) != 2 || res.Count("created") != 1 || res.Count("unchanged") != 1 || len(res.Pruned) != 0 {
		t.Fatalf("apply over a moved namespace: %+v", res)
	}
	if exists(t, cm) {
		t.Error("the moved ConfigMap was created again")
	}
	if len(moved) != 1 || !strings.Contains(moved[0], `2 objects left alone: namespace "moving" to cluster "target-cluster"`) {
		t.Errorf("moved events %q", moved)
	}
	if inv, _, _ := ReadInventory(ctx, env.Client, "moving"); len(inv.Objects) != 4 {
		t.Errorf("inventory has %d objects, want 4: moved objects stay the bundle's", len(inv.Objects))
	}
	states, _, err := a.Status(ctx, "moving", objs(t, bundle("moving", true)+extra))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range states {
		if !s.Applied || !s.Ready {
			t.Errorf("%+v: want applied and ready", s)
		}
		got[s.Object] = s.Message
	}
	if got["ConfigMap/moving/settings"] != `moved to cluster "target-cluster" with its namespace` || got["Namespace/moving"] != "" {
		t.Errorf("status messages %v", got)
	}
	// A bundle wholly in moved namespaces has nothing to apply or wait on.
	only, err := a.Apply(ctx, objs(t, bundle("moving", true))[1:], Options{Inventory: "moving-only", WaitTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("apply of moved objects only: %v", err)
	}
	if len(only.Moved) != 2 || len(only.Changes) != 0 || !only.Ready {
		t.Errorf("apply of moved objects only: %+v", only)
	}

	// Without the annotation the namespace is managed here again.
	if err := env.Client.Patch(ctx, ns, client.RawPatch("application/merge-patch+json",
		[]byte(`{"metadata":{"annotations":{"`+MovedToAnnotation+`":null}}}`))); err != nil {
		t.Fatal(err)
	}
	res, err = a.Apply(ctx, objs(t, bundle("moving", true)+extra), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Moved) != 0 || res.Count("created") != 1 || !exists(t, cm) {
		t.Errorf("apply after the annotation went: %+v", res)
	}
}

// A namespace marked MovingToAnnotation is half-way through a move: the
// bundle's objects in it are left alone and not waited on (some may be
// gone already, with what they depend on), the apply says how to finish
// the move, and status reports them not ready.
func TestNamespaceBeingMovedLeftAlone(t *testing.T) {
	ctx := context.Background()
	a := newApplier(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "half-moved", Annotations: map[string]string{
		MovingToAnnotation: "target-cluster", MovingPhaseAnnotation: "clusterctl-move",
	}}}
	if err := env.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	// What is left on the source: an object whose readiness would never
	// come (its hosts are gone), and which the bundle would change.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "half-moved", Name: "picked"}, Data: map[string]string{"ready": "no"}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	before := cm.ResourceVersion
	bundle := `apiVersion: v1
kind: ConfigMap
metadata: {name: picked, namespace: half-moved}
data: {ready: "no", changed: "yes"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: elsewhere, namespace: default}
data: {ready: "yes"}
`
	var said []string
	const timeout = 3 * time.Minute
	opts := Options{Inventory: "half-moved", Prune: true, WaitTimeout: timeout,
		Conditions: []v1.Condition{{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, JSONPath: "{.data.ready}", Value: "yes"}},
		Progress: func(e Event) {
			if e.Type == "Moved" {
				said = append(said, e.Message)
			}
		}}
	start := time.Now()
	res, err := a.Apply(ctx, objs(t, bundle), opts)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > timeout/3 {
		t.Errorf("apply took %s: it waited on the namespace being moved", took)
	}
	if !res.Ready || len(res.Moved) != 1 || res.Moved[0] != "ConfigMap/half-moved/picked" || res.Count("created") != 1 {
		t.Errorf("apply: %+v, want the other ConfigMap created, picked left alone, ready", res)
	}
	want := `1 objects left alone: namespace "half-moved" being moved to cluster "target-cluster" (annotation airshipit.org/moving-to: the move stopped half-way; run phase "clusterctl-move" again to finish)`
	if len(said) != 1 || said[0] != want {
		t.Errorf("moved events %q, want %q", said, want)
	}
	got := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != before || got.Data["changed"] != "" {
		t.Errorf("the ConfigMap of the namespace being moved was changed: %v (resourceVersion %s, was %s)", got.Data, got.ResourceVersion, before)
	}
	states, _, err := a.Status(ctx, "half-moved", objs(t, bundle))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range states {
		if s.Object != "ConfigMap/half-moved/picked" {
			continue
		}
		if !s.Applied || s.Ready || !strings.Contains(s.Message, `being moved to cluster "target-cluster"`) || !strings.Contains(s.Message, `run phase "clusterctl-move" again`) {
			t.Errorf("status %+v, want applied, not ready, and how to finish the move", s)
		}
	}
}

// MoveOf reads each state of a namespace's move annotations.
func TestMoveOf(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        NamespaceMove
		moved       bool
		text        string
	}{
		{"none", nil, NamespaceMove{}, false, ""},
		{"other annotations", map[string]string{"a": "b"}, NamespaceMove{}, false, ""},
		{"moving-to", map[string]string{MovingToAnnotation: "target", MovingPhaseAnnotation: "move"}, NamespaceMove{To: "target", Moving: true, Phase: "move"}, true,
			`being moved to cluster "target" (annotation airshipit.org/moving-to: the move stopped half-way; run phase "move" again to finish)`},
		{"moving-to without its phase", map[string]string{MovingToAnnotation: "target"}, NamespaceMove{To: "target", Moving: true}, true,
			`being moved to cluster "target" (annotation airshipit.org/moving-to: the move stopped half-way; run its move phase again to finish)`},
		{"moved-to", map[string]string{MovedToAnnotation: "target"}, NamespaceMove{To: "target"}, true, `moved to cluster "target"`},
		{"moved-to wins over moving-to", map[string]string{MovedToAnnotation: "target", MovingToAnnotation: "other"}, NamespaceMove{To: "target"}, true, `moved to cluster "target"`},
		{"empty values", map[string]string{MovedToAnnotation: "", MovingToAnnotation: ""}, NamespaceMove{}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, moved := MoveOf(tt.annotations)
			if got != tt.want || moved != tt.moved {
				t.Fatalf("MoveOf = %+v, %v; want %+v, %v", got, moved, tt.want, tt.moved)
			}
			if moved && got.String() != tt.text {
				t.Errorf("String() = %q, want %q", got.String(), tt.text)
			}
		})
	}
}
