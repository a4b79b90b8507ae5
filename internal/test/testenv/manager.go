package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/airshipit/airship-go/internal/httplimit"
)

// Go runs run in the background until the test ends: then it cancels
// run's context (one below ctx), waits for run to return and fails t
// with its error, prefixed with what. Waiting is the point: a manager
// left running after its test talks to the next test's objects, and an
// error it returns on the way out would otherwise go unseen.
func Go(t testing.TB, ctx context.Context, what string, run func(context.Context) error) {
	t.Helper()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", what, err)
		}
	})
}

// NewManager is a controller-runtime manager on env for the controllers
// a test sets up itself. It serves no metrics or probes (the package's
// tests run in parallel and would fight for the ports) and skips the
// check that controller names are unique in the process, since every
// test of a package starts a manager with the same controllers.
func NewManager(t testing.TB, env *Env) ctrl.Manager {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true), UsePriorityQueue: ptr.To(false)}, // as operatorkit.NewManager
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// MainAPI is Main with an API-only control plane started with opts and
// stored in *env: the TestMain of a package whose tests share one.
func MainAPI(m *testing.M, opts Options, env **Env) int {
	return Main(m, func() (*Env, error) { return NewAPI(opts) }, func(e *Env) { *env = e })
}

// MainFull is MainAPI with the full local control plane, for a package
// whose tests need workloads to become ready.
func MainFull(m *testing.M, opts Options, env **Env) int {
	return Main(m, func() (*Env, error) { return NewFull(context.Background(), opts) }, func(e *Env) { *env = e })
}

// HTTPClient is the client tests reach the servers they start with:
// every request bounded in time and every answer in size, as any
// outbound call of the project (httplimit).
func HTTPClient() *http.Client { return testHTTPClient }

var testHTTPClient = httplimit.NewClient(httplimit.ClientOptions{Timeout: 30 * time.Second, MaxResponseBytes: 8 << 20})

// HTTPGet returns the status code and body of a GET of url, or 0 and ""
// when there is no answer (yet): the probe and metrics tests poll with it
// until a server that is starting answers.
func HTTPGet(ctx context.Context, url string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, ""
	}
	resp, err := testHTTPClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer func() { _ = resp.Body.Close() }() // read in full below; nothing to report
	// A body cut short fails the caller's check of it.
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var namespaces atomic.Int32

// Namespace creates a namespace named prefix-N on env, N new in the
// process, and returns its name: tests that share one control plane keep
// apart by namespace, and a test run again (-count) gets a fresh one
// instead of finding the objects of its last run.
func Namespace(t testing.TB, env *Env, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, namespaces.Add(1))
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}
