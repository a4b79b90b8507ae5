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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/httplimit/httplimittest"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestManagerServers runs a manager against a real API server: its metrics
// and probe servers answer as controller-runtime's did (/metrics,
// /healthz, /readyz and /readyz/caches), and close a connection that sends
// nothing, half a header or nothing after a request (controller-runtime's
// have no read, write or idle-after-request bound to set).
func TestManagerServers(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	o := Defaults()
	o.LeaderElection = false
	o.SkipControllerNameValidation = true
	o.MetricsAddr, o.ProbeAddr = testenv.FreeAddr(t), testenv.FreeAddr(t)
	o.ServerTimeouts = httplimit.ServerTimeouts{ReadHeader: 200 * time.Millisecond, Read: 400 * time.Millisecond, Idle: 200 * time.Millisecond}
	mgr, err := NewManager(env.Config, scheme, o, "operatorkit-test", logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, context.Background(), "Start", mgr.Start)

	for _, tt := range []struct{ url, body string }{
		{"http://" + o.ProbeAddr + "/healthz", "ok"},
		{"http://" + o.ProbeAddr + "/readyz", "ok"},
		{"http://" + o.ProbeAddr + "/readyz/caches", "ok"},
		{"http://" + o.MetricsAddr + "/metrics", "rest_client_requests_total"},
	} {
		if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			code, body := testenv.HTTPGet(ctx, tt.url)
			return code == http.StatusOK && strings.Contains(body, tt.body), nil
		}); err != nil {
			t.Fatalf("%s never answered 200 with %q: %v", tt.url, tt.body, err)
		}
	}

	for _, addr := range []string{o.ProbeAddr, o.MetricsAddr} {
		for _, tt := range []struct{ name, send string }{
			{"nothing sent", ""},
			{"half a header", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "},
			{"idle after a request", "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
		} {
			t.Run(addr+"/"+tt.name, func(t *testing.T) {
				httplimittest.ExpectClosed(t, addr, tt.send)
			})
		}
	}
}

func TestOperatorChecksOptionsFirst(t *testing.T) {
	invalid := errors.New("--concurrency must be at least 1")
	tests := []struct {
		name     string
		validate func() error
		options  func(*Options)
		want     string
	}{
		{name: "the operator's own check", validate: func() error { return invalid }, want: invalid.Error()},
		{name: "operatorkit's when the operator has none", options: func(o *Options) { o.QPS = -1 }, want: "--kube-api-qps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Defaults()
			if tt.options != nil {
				tt.options(&o)
			}
			called := false
			op := Operator{
				Name: "test-operator", Options: o, Validate: tt.validate,
				// Nothing listens there: waiting would only end with ctx.
				Kinds: []GroupKinds{{GroupVersion: "example.com/v1", Kinds: []string{"Widget"}}},
				Reconcilers: func(ctrl.Manager, logr.Logger) []Reconciler {
					called = true
					return nil
				},
			}
			cfg := &rest.Config{Host: "https://127.0.0.1:1"}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := op.Run(ctx, cfg, logr.Discard()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want %q before any wait", err, tt.want)
			}
			if _, err := op.NewManager(ctx, cfg, logr.Discard()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewManager = %v, want %q", err, tt.want)
			}
			if called {
				t.Error("reconcilers asked for with invalid options")
			}
		})
	}
}

func TestNewScheme(t *testing.T) {
	s, err := NewScheme(func(s *runtime.Scheme) error {
		s.AddKnownTypeWithName(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, &corev1.ConfigMap{})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "Secret"},
		{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"},
		{Group: "example.com", Version: "v1", Kind: "Widget"},
	} {
		if !s.Recognizes(gvk) {
			t.Errorf("scheme does not know %s", gvk)
		}
	}
	failed := errors.New("bad types")
	if _, err := NewScheme(func(*runtime.Scheme) error { return failed }); !errors.Is(err, failed) {
		t.Errorf("NewScheme = %v, want %v", err, failed)
	}
}

// TestOperatorRun assembles an operator against a real API server: the
// reconcilers are registered in order and the first error stops the
// assembly; Run waits for the kinds, starts the manager with the
// reconcilers' controllers, logs its start line and returns nil when ctx
// ends.
func TestOperatorRun(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	o := Defaults()
	o.LeaderElection = false
	o.SkipControllerNameValidation = true
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	var order []string
	setup := func(name string, err error) Reconciler {
		return SetupFunc(func(_ context.Context, mgr ctrl.Manager) error {
			order = append(order, name)
			if err != nil {
				return err
			}
			return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named(name).
				Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
		})
	}

	failed := errors.New("no index")
	op := Operator{Name: "test-operator", Options: o, Reconcilers: func(ctrl.Manager, logr.Logger) []Reconciler {
		return []Reconciler{setup("first", nil), setup("second", failed), setup("third", nil)}
	}}
	if _, err := op.NewManager(context.Background(), env.Config, logr.Discard()); !errors.Is(err, failed) {
		t.Errorf("NewManager = %v, want %v", err, failed)
	}
	if !slices.Equal(order, []string{"first", "second"}) {
		t.Errorf("set up %v, want first, second", order)
	}

	order = nil
	var mu sync.Mutex
	var lines []string
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	op = Operator{
		Name: "test-operator", Options: o,
		Kinds: []GroupKinds{{GroupVersion: "v1", Kinds: []string{"ConfigMap", "Secret"}}},
		Reconcilers: func(ctrl.Manager, logr.Logger) []Reconciler {
			return []Reconciler{setup("first", nil), setup("second", nil)}
		},
		LogValues: []any{"concurrency", 3},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx, env.Config, log) }()
	started := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(lines, func(l string) bool {
			return strings.Contains(l, `"msg"="starting test-operator"`) && strings.Contains(l, `"leaderElection"=false "concurrency"=3`)
		})
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		select {
		case err := <-done:
			if err == nil {
				return false, errors.New("Run returned without an error")
			}
			return false, fmt.Errorf("Run returned: %w", err)
		default:
		}
		return started(), nil
	}); err != nil {
		t.Fatalf("no start line: %v; logged %q", err, lines)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
	if !slices.Equal(order, []string{"first", "second"}) {
		t.Errorf("set up %v, want first, second", order)
	}
}

// TestRunAnswersProbesWhileWaitingForCRDs: an operator waiting for its
// CRDs is alive (/healthz 200, so a kubelet does not restart it) and not
// ready (/readyz 503); once they are served, the manager's own probe
// server takes the address over and becomes ready.
func TestRunAnswersProbesWhileWaitingForCRDs(t *testing.T) {
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
	poll := func(what string, cond func(ctx context.Context) bool) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			return cond(ctx), nil
		}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	// A kind no API server serves: Run waits until cancelled.
	op := Operator{Name: "test-operator", Options: o, Kinds: []GroupKinds{{GroupVersion: "widgets.example.test/v1", Kinds: []string{"Widget"}}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx, env.Config, logr.Discard()) }()
	poll("/healthz 200 and /readyz 503 while waiting", func(ctx context.Context) bool {
		live, _ := get(ctx, "/healthz")
		ready, body := get(ctx, "/readyz")
		return live == http.StatusOK && ready == http.StatusServiceUnavailable && strings.Contains(body, "waiting for the operator's CRDs")
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v, want context.Canceled", err)
	}
	if code, _ := get(context.Background(), "/healthz"); code != 0 {
		t.Fatalf("the waiting probe server still answers (%d) after Run returned", code)
	}

	// Kinds the API server serves: the manager's probe server binds the
	// same address and reports ready once its caches synced.
	op.Kinds = []GroupKinds{{GroupVersion: "v1", Kinds: []string{"ConfigMap"}}}
	op.Reconcilers = func(ctrl.Manager, logr.Logger) []Reconciler {
		return []Reconciler{SetupFunc(func(_ context.Context, mgr ctrl.Manager) error {
			return ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named("probe-handover").
				Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
		})}
	}
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- op.Run(ctx, env.Config, logr.Discard()) }()
	poll("/readyz 200 from the manager", func(ctx context.Context) bool {
		code, _ := get(ctx, "/readyz")
		return code == http.StatusOK
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel: %v", err)
	}
}
