package helm

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestContains is the comparison Drift makes of a manifest's section with
// the live object's.
func TestContains(t *testing.T) {
	tests := []struct {
		name          string
		desired, live any
		want          bool
	}{
		{"equal maps", map[string]any{"a": "x"}, map[string]any{"a": "x"}, true},
		{"live has more (defaults, other managers)", map[string]any{"a": "x"}, map[string]any{"a": "x", "b": "y"}, true},
		{"changed scalar", map[string]any{"a": "x"}, map[string]any{"a": "z"}, false},
		{"missing key", map[string]any{"a": "x"}, map[string]any{"b": "x"}, false},
		{"null in the manifest sets nothing", map[string]any{"a": nil}, map[string]any{}, true},
		{"nested change", map[string]any{"s": map[string]any{"r": int64(3)}}, map[string]any{"s": map[string]any{"r": int64(2)}}, false},
		{"nested equal with extras", map[string]any{"s": map[string]any{"r": int64(3)}}, map[string]any{"s": map[string]any{"r": int64(3), "x": true}}, true},
		{"map where live has a scalar", map[string]any{"a": map[string]any{"b": "c"}}, map[string]any{"a": "c"}, false},
		{"empty map, nothing live", map[string]any{}, nil, true},
		{"list equal", []any{"a", "b"}, []any{"a", "b"}, true},
		{"list reordered", []any{"a", "b"}, []any{"b", "a"}, false},
		{"list grew", []any{"a"}, []any{"a", "b"}, false},
		{"empty list, nothing live", []any{}, nil, true},
		{"list of maps with extras", []any{map[string]any{"name": "c"}}, []any{map[string]any{"name": "c", "image": "i"}}, true},
		{"scalar missing live", "x", nil, false},
		{"number vs its printed form", int64(80), "80", true},
		{"bool vs its printed form", true, "true", true},
		{"same quantity, other unit", "1", "1000m", true},
		{"same memory, other unit", "512Mi", "536870912", true},
		{"other quantity", "1", "2", false},
		{"not quantities", "abc", "abd", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := contains(tt.desired, tt.live); got != tt.want {
				t.Errorf("contains(%v, %v) = %v, want %v", tt.desired, tt.live, got, tt.want)
			}
		})
	}
}

// TestRESTClientGetterNamespace: Helm takes the namespace of objects a
// chart leaves unnamespaced from the getter's kubeconfig loader.
func TestRESTClientGetterNamespace(t *testing.T) {
	g := restClientGetter{shared: &shared{}, namespace: "rel-ns"}
	ns, explicit, err := g.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns != "rel-ns" || !explicit {
		t.Errorf("Namespace() = %q, %v, %v; want rel-ns, true", ns, explicit, err)
	}
}

// chart builds a chart from templates and files given by path.
func chart(name string, files map[string]string) *chartv2.Chart {
	ch := &chartv2.Chart{Metadata: &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: name, Version: "0.1.0"}}
	for p, data := range files {
		f := &common.File{Name: p, Data: []byte(data)}
		if strings.HasPrefix(p, "templates/") {
			ch.Templates = append(ch.Templates, f)
		} else {
			ch.Files = append(ch.Files, f)
		}
	}
	return ch
}

func crd(group string) string {
	return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: paints.` + group + `
spec:
  group: ` + group + `
  scope: Namespaced
  names: {plural: paints, singular: paint, kind: Paint}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
`
}

// TestActions runs the Client against one real API server.
func TestActions(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	ctx := context.Background()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	served := func(gv string) bool {
		_, err := dc.ServerResourcesForGroupVersion(gv)
		return err == nil
	}
	waitServed := func(t *testing.T, gv string, want bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for served(gv) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s served = %v after 30s, want %v", gv, !want, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	configMap := func(t *testing.T, ns, name string) map[string]string {
		t.Helper()
		var cm corev1.ConfigMap
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
			t.Fatal(err)
		}
		return cm.Data
	}

	// Charts render against cached capabilities; an action that adds or
	// removes APIs must drop them, or the next chart renders against the
	// old API list for capsTTL.
	t.Run("capabilities follow CRDs", func(t *testing.T) {
		c := New(env.Config, nil)
		const ns = "caps"
		probe := func(t *testing.T, rev int) string {
			t.Helper()
			ch := chart("probe", map[string]string{"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: probe}
data:
  crds: {{ .Capabilities.APIVersions.Has "one.paint.example/v1" | quote }}
  templated: {{ .Capabilities.APIVersions.Has "two.paint.example/v1" | quote }}
`})
			o := Options{Namespace: ns, Name: "probe", Chart: ch, Timeout: time.Minute}
			var err error
			if rev == 1 {
				_, err = c.Install(ctx, o)
			} else {
				_, err = c.Upgrade(ctx, o)
			}
			if err != nil {
				t.Fatal(err)
			}
			d := configMap(t, ns, "probe")
			return "crds=" + d["crds"] + " templated=" + d["templated"]
		}
		if got := probe(t, 1); got != "crds=false templated=false" {
			t.Fatalf("before any CRD: %s", got)
		}

		// A chart with crds/: Helm installs and waits for them first.
		if _, err := c.Install(ctx, Options{Namespace: ns, Name: "one", Chart: chart("one", map[string]string{"crds/paint.yaml": crd("one.paint.example")}), Timeout: time.Minute}); err != nil {
			t.Fatal(err)
		}
		waitServed(t, "one.paint.example/v1", true)
		if got := probe(t, 2); got != "crds=true templated=false" {
			t.Errorf("after a chart with crds/: %s", got)
		}

		// A CRD among the templates: the manifest names it.
		if _, err := c.Install(ctx, Options{Namespace: ns, Name: "two", Chart: chart("two", map[string]string{"templates/paint.yaml": crd("two.paint.example")}), Timeout: time.Minute}); err != nil {
			t.Fatal(err)
		}
		waitServed(t, "two.paint.example/v1", true)
		if got := probe(t, 3); got != "crds=true templated=true" {
			t.Errorf("after a chart with a templated CRD: %s", got)
		}

		// Uninstalling it removes the API (Helm keeps crds/ CRDs).
		if err := c.Uninstall(ns, "two", time.Minute); err != nil {
			t.Fatal(err)
		}
		waitServed(t, "two.paint.example/v1", false)
		if got := probe(t, 4); got != "crds=true templated=false" {
			t.Errorf("after uninstalling the templated CRD: %s", got)
		}
	})

	// Release records are Secrets in the release namespace, as the helm
	// CLI keeps them, and no more than maxHistory of them.
	t.Run("history is bounded", func(t *testing.T) {
		c := New(env.Config, nil)
		const ns, name = "hist", "paint"
		o := Options{Namespace: ns, Name: name, Chart: configMapChart(), Timeout: time.Minute}
		for i := 1; i <= maxHistory+3; i++ {
			o.Values = map[string]any{"color": fmt.Sprint(i)}
			var err error
			if i == 1 {
				_, err = c.Install(ctx, o)
			} else {
				_, err = c.Upgrade(ctx, o)
			}
			if err != nil {
				t.Fatalf("revision %d: %v", i, err)
			}
		}
		h, err := c.History(ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != maxHistory {
			t.Errorf("%d revisions kept, want %d", len(h), maxHistory)
		}
		var secrets corev1.SecretList
		if err := env.Client.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": name}); err != nil {
			t.Fatal(err)
		}
		if len(secrets.Items) != maxHistory {
			t.Errorf("%d release Secrets in %s, want %d", len(secrets.Items), ns, maxHistory)
		}
		last, err := c.Last(ns, name)
		if err != nil || last.Version != maxHistory+3 || last.Info.Status != rcommon.StatusDeployed {
			t.Fatalf("Last = %+v, %v", last, err)
		}
		if got := configMap(t, ns, "paint")["color"]; got != fmt.Sprint(maxHistory+3) {
			t.Errorf("color %s after the last upgrade", got)
		}
	})

	// NativeWait waits for every resource of the release: with no nodes a
	// Deployment never becomes available, so the install fails at its
	// timeout; without it the same chart installs at once.
	t.Run("native wait", func(t *testing.T) {
		c := New(env.Config, nil)
		deploy := chart("web", map[string]string{"templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.invalid/web:1}]}
`})
		rel, err := c.Install(ctx, Options{Namespace: "nowait", Name: "web", Chart: deploy, Timeout: time.Minute})
		if err != nil || rel.Info.Status != rcommon.StatusDeployed {
			t.Fatalf("install without wait: %v", err)
		}
		start := time.Now()
		rel, err = c.Install(ctx, Options{Namespace: "wait", Name: "web", Chart: deploy, Timeout: 3 * time.Second, NativeWait: true})
		if err == nil {
			t.Fatal("install with NativeWait succeeded with no node to run the Deployment")
		}
		if !strings.Contains(err.Error(), "helm install of release wait/web") {
			t.Errorf("error %q does not name the release", err)
		}
		if d := time.Since(start); d < 3*time.Second {
			t.Errorf("failed after %v, before its 3s timeout", d)
		}
		if rel == nil || rel.Info.Status != rcommon.StatusFailed {
			t.Errorf("revision after the failed wait: %+v", rel)
		}
	})

	t.Run("release lifecycle", func(t *testing.T) { testReleaseLifecycle(t, env) })

	// Install reads a release namespace once per client; one it remembers
	// but that is gone (deleted since) is created again and the install
	// run once more.
	for _, tc := range []struct {
		name       string
		ns         string
		remembered bool // the client remembers the namespace, which does not exist
	}{
		{"new namespace", "ns-new", false},
		{"remembered namespace gone", "ns-gone", true},
	} {
		t.Run("namespace: "+tc.name, func(t *testing.T) {
			c := New(env.Config, nil)
			if tc.remembered {
				c.namespaces.Store(tc.ns, struct{}{})
			}
			if _, err := c.Install(ctx, Options{Namespace: tc.ns, Name: "paint", Chart: configMapChart(), Values: map[string]any{"color": "red"}, Timeout: time.Minute}); err != nil {
				t.Fatal(err)
			}
			if got := configMap(t, tc.ns, "paint")["color"]; got != "red" {
				t.Fatalf("color %q, want red", got)
			}
			if st, err := c.ensureNamespace(ctx, tc.ns); err != nil || st != namespaceRemembered {
				t.Fatalf("ensureNamespace after install = %v, %v; want it remembered", st, err)
			}
		})
	}

	t.Run("errors name the release", func(t *testing.T) {
		c := New(env.Config, nil)
		const ns = "errs"
		// A chart the server refuses.
		bad := configMapChart()
		bad.Templates[0].Data = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_Valid\n")
		if _, err := c.Install(ctx, Options{Namespace: ns, Name: "broken", Chart: bad, Timeout: time.Minute}); err == nil || !strings.Contains(err.Error(), "helm install of release errs/broken") {
			t.Errorf("install of an invalid object: %v", err)
		}
		if _, err := c.Install(ctx, Options{Namespace: ns, Name: "paint", Chart: configMapChart(), Values: map[string]any{"color": "red"}, Timeout: time.Minute}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Install(ctx, Options{Namespace: ns, Name: "paint", Chart: configMapChart(), Timeout: time.Minute}); err == nil || !strings.Contains(err.Error(), "helm install of release errs/paint") {
			t.Errorf("second install of one release: %v", err)
		}
		if _, err := c.Upgrade(ctx, Options{Namespace: ns, Name: "none", Chart: configMapChart(), Timeout: time.Minute}); err == nil || !strings.Contains(err.Error(), "helm upgrade of release errs/none") {
			t.Errorf("upgrade of a missing release: %v", err)
		}
		if _, err := c.Rollback(ns, "paint", 7, time.Minute); err == nil || !strings.Contains(err.Error(), "release errs/paint to revision 7") {
			t.Errorf("rollback to a missing revision: %v", err)
		}
		if err := c.Test(ns, "none", time.Minute, true); err == nil || !strings.Contains(err.Error(), "helm test of release errs/none") {
			t.Errorf("test of a missing release: %v", err)
		}
		// A chart without test hooks passes its tests.
		if err := c.Test(ns, "paint", time.Minute, true); err != nil {
			t.Errorf("test of a release without test hooks: %v", err)
		}
		if got := configMap(t, ns, "paint")["color"]; got != "red" {
			t.Errorf("the failed actions changed the release: color %s", got)
		}
	})

	// One Client serves the operator's parallel reconciles.
	t.Run("concurrent installs share a client", func(t *testing.T) {
		c := New(env.Config, nil)
		const n = 6
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				_, errs[i] = c.Install(ctx, Options{Namespace: fmt.Sprintf("par-%d", i), Name: "paint", Chart: configMapChart(), Values: map[string]any{"color": fmt.Sprint(i)}, Timeout: time.Minute})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("install %d: %v", i, err)
				continue
			}
			if got := configMap(t, fmt.Sprintf("par-%d", i), "paint")["color"]; got != fmt.Sprint(i) {
				t.Errorf("release par-%d: color %s", i, got)
			}
		}
	})
}
