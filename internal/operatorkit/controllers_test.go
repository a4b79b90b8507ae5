package operatorkit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

func TestMissingKinds(t *testing.T) {
	need := []GroupKinds{
		{GroupVersion: "metal3.io/v1alpha1", Kinds: []string{"BareMetalHost"}},
		{GroupVersion: "cluster.x-k8s.io/v1beta2", Kinds: []string{"Cluster", "Machine"}},
	}
	tests := []struct {
		name   string
		served map[string][]string
		want   []string
	}{
		{name: "nothing served", want: []string{"metal3.io/v1alpha1 BareMetalHost", "cluster.x-k8s.io/v1beta2 Cluster", "cluster.x-k8s.io/v1beta2 Machine"}},
		{name: "one group served", served: map[string][]string{"metal3.io/v1alpha1": {"BareMetalHost", "HostFirmwareSettings"}},
			want: []string{"cluster.x-k8s.io/v1beta2 Cluster", "cluster.x-k8s.io/v1beta2 Machine"}},
		{name: "a kind of a served group missing", served: map[string][]string{"metal3.io/v1alpha1": {"BareMetalHost"}, "cluster.x-k8s.io/v1beta2": {"Cluster"}},
			want: []string{"cluster.x-k8s.io/v1beta2 Machine"}},
		{name: "the kind in another version", served: map[string][]string{"metal3.io/v1alpha1": {"BareMetalHost"}, "cluster.x-k8s.io/v1beta1": {"Cluster", "Machine"}},
			want: []string{"cluster.x-k8s.io/v1beta2 Cluster", "cluster.x-k8s.io/v1beta2 Machine"}},
		{name: "all served", served: map[string][]string{"metal3.io/v1alpha1": {"BareMetalHost"}, "cluster.x-k8s.io/v1beta2": {"Machine", "Cluster"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := missingKinds(need, tt.served); !slices.Equal(got, tt.want) {
				t.Errorf("missingKinds = %q, want %q", got, tt.want)
			}
		})
	}
}

// widgetCRD is a namespaced CRD of kind plural.group, version v1.
func widgetCRD(group, kind string) *apiextensionsv1.CustomResourceDefinition {
	plural := strings.ToLower(kind) + "s"
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true)}}}},
		},
	}
}

// recorder is a log that keeps its lines, and the names reconcilers were
// called with.
type recorder struct {
	mu         sync.Mutex
	lines      []string
	reconciled map[string][]string // controller → object names
}

func (r *recorder) logger() logr.Logger {
	return funcr.New(func(_, args string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.lines = append(r.lines, args)
	}, funcr.Options{})
}

func (r *recorder) count(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

func (r *recorder) saw(controller, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.reconciled[controller], name)
}

// controller is a Controller named name reconciling gvk, recording what
// it reconciles in r.
func (r *recorder) controller(name string, gvk schema.GroupVersionKind) Controller {
	return Controller{
		Name:  name,
		Kinds: []GroupKinds{{GroupVersion: gvk.GroupVersion().String(), Kinds: []string{gvk.Kind}}},
		Reconcilers: func(ctrl.Manager, logr.Logger) []Reconciler {
			return []Reconciler{SetupFunc(func(_ context.Context, mgr ctrl.Manager) error {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(gvk)
				return ctrl.NewControllerManagedBy(mgr).For(u).Named(name).
					Complete(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
						r.mu.Lock()
						defer r.mu.Unlock()
						r.reconciled[name] = append(r.reconciled[name], req.Name)
						return reconcile.Result{}, nil
					}))
			})}
		},
	}
}

// TestRunStartsEachControllerWhenItsCRDsAreServed: an operator of two
// controllers, one of a kind the API server serves and one of a CRD not
// installed, reconciles with the first at once (ready, the other logged
// once as waiting) and starts the second when its CRD is installed. A
// controller whose setup fails ends Run with the error, naming it. With
// no controller able to run, /readyz answers 503 naming what each waits
// for, until one can.
func TestRunStartsEachControllerWhenItsCRDsAreServed(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	saved := APIPollInterval
	APIPollInterval = 100 * time.Millisecond
	t.Cleanup(func() { APIPollInterval = saved })
	o := Defaults()
	o.LeaderElection = false
	o.SkipControllerNameValidation = true
	o.MetricsAddr = "0"
	o.ProbeAddr = testenv.FreeAddr(t)
	get := func(ctx context.Context, path string) (int, string) {
		return testenv.HTTPGet(ctx, "http://"+o.ProbeAddr+path)
	}
	ctx := context.Background()
	poll := func(t *testing.T, what string, cond func(ctx context.Context) (bool, string)) {
		t.Helper()
		last := ""
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			ok, msg := cond(ctx)
			last = msg
			return ok, nil
		}); err != nil {
			t.Fatalf("%s: %v; last: %s", what, err, last)
		}
	}
	create := func(t *testing.T, gvk schema.GroupVersionKind, name string) {
		t.Helper()
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("default")
		u.SetName(name)
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	configMaps := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	widgets := schema.GroupVersionKind{Group: "widgets.example.test", Version: "v1", Kind: "Widget"}
	gadgets := schema.GroupVersionKind{Group: "gadgets.example.test", Version: "v1", Kind: "Gadget"}

	t.Run("one controller runs, one waits", func(t *testing.T) {
		r := &recorder{reconciled: map[string][]string{}}
		op := Operator{Name: "test-operator", Options: o, Controllers: []Controller{r.controller("widgets", widgets), r.controller("configmaps", configMaps)}}
		stop := start(t, op, env, r.logger())
		create(t, configMaps, "cm-1")
		poll(t, "the ConfigMap controller reconciles while the Widget one waits", func(ctx context.Context) (bool, string) {
			code, body := get(ctx, "/readyz")
			return r.saw("configmaps", "cm-1") && code == http.StatusOK && r.count(`"msg"="controller configmaps started"`) == 1 &&
				r.count(`"msg"="controller widgets waits for CRDs" "missing"=["widgets.example.test/v1 Widget"]`) == 1, fmt.Sprint(code, body, r.lines)
		})
		if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD(widgets.Group, widgets.Kind)}}); err != nil {
			t.Fatal(err)
		}
		create(t, widgets, "w-1")
		poll(t, "the Widget controller starts and reconciles", func(context.Context) (bool, string) {
			return r.saw("widgets", "w-1") && r.count(`"msg"="controller widgets started"`) == 1, fmt.Sprint(r.lines)
		})
		if n := r.count("controller widgets waits for CRDs"); n != 1 {
			t.Errorf("logged %d times that the Widget controller waits, want once", n)
		}
		stop()
	})

	t.Run("a controller that cannot be set up ends Run", func(t *testing.T) {
		failed := errors.New("no index")
		op := Operator{Name: "test-operator", Options: o, Controllers: []Controller{{
			Name:  "broken",
			Kinds: []GroupKinds{{GroupVersion: "v1", Kinds: []string{"ConfigMap"}}},
			Reconcilers: func(ctrl.Manager, logr.Logger) []Reconciler {
				return []Reconciler{SetupFunc(func(context.Context, ctrl.Manager) error { return failed })}
			},
		}}}
		done := make(chan error, 1)
		go func() { done <- op.Run(ctx, env.Config, logr.Discard()) }()
		select {
		case err := <-done:
			if !errors.Is(err, failed) || !strings.Contains(err.Error(), "controller broken") {
				t.Errorf("Run = %v, want %v naming the controller", err, failed)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("Run still runs with a controller that failed to set up")
		}
	})

	t.Run("no controller can run", func(t *testing.T) {
		r := &recorder{reconciled: map[string][]string{}}
		op := Operator{Name: "test-operator", Options: o, Controllers: []Controller{r.controller("gadgets", gadgets)}}
		stop := start(t, op, env, r.logger())
		poll(t, "/healthz 200, /readyz 503 naming the missing kind", func(ctx context.Context) (bool, string) {
			live, _ := get(ctx, "/healthz")
			ready, body := get(ctx, "/readyz")
			return live == http.StatusOK && ready == http.StatusServiceUnavailable &&
				strings.Contains(body, "waiting for the operator's CRDs: gadgets waits for gadgets.example.test/v1 Gadget"), fmt.Sprint(live, ready, body)
		})
		if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgetCRD(gadgets.Group, gadgets.Kind)}}); err != nil {
			t.Fatal(err)
		}
		create(t, gadgets, "g-1")
		poll(t, "ready once the Gadget controller runs", func(ctx context.Context) (bool, string) {
			code, body := get(ctx, "/readyz")
			return code == http.StatusOK && r.saw("gadgets", "g-1"), fmt.Sprint(code, body)
		})
		stop()
	})
}

// start runs op until the test ends or stop is called, which fails the
// test if Run returned an error other than at the end.
func start(t *testing.T, op Operator, env *testenv.Env, log logr.Logger) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx, env.Config, log) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}
