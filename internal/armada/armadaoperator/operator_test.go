package armadaoperator

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/operatorkit/operatortest"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

func TestValidate(t *testing.T) {
	operatortest.Validate(t, DefaultOptions, []operatortest.Case[Options]{
		{Name: "zero concurrency", Mutate: func(o *Options) { o.Concurrency = 0 }, Want: "--concurrency"},
		{Name: "zero poll interval", Mutate: func(o *Options) { o.PollInterval = 0 }, Want: "--poll-interval"},
		{Name: "zero chart fetch timeout", Mutate: func(o *Options) { o.ChartFetchTimeout = 0 }, Want: "--chart-fetch-timeout must be positive"},
		{Name: "no chart fetches", Mutate: func(o *Options) { o.ChartFetches = 0 }, Want: "--chart-fetches must be at least 1"},
		{Name: "negative qps", Mutate: func(o *Options) { o.QPS = -1 }, Want: "--kube-api-qps"},
	})
}

func freeAddr(t *testing.T) string { return testenv.FreeAddr(t) }

// TestRunServesProbesMetricsAndElectsLeader runs the operator against a real
// API server and checks its probes, its metrics and its leader Lease.
func TestRunServesProbesMetricsAndElectsLeader(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{CRDDirs: []string{"config/armada/crd/bases"}, AddToScheme: nil})
	o := DefaultOptions()
	o.SkipControllerNameValidation = true
	o.MetricsAddr, o.ProbeAddr = freeAddr(t), freeAddr(t)
	o.LeaderElectionNamespace = "default"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, env.Config, o, logr.Discard()) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	for _, path := range []string{"/healthz", "/readyz"} {
		if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			code, _ := testenv.HTTPGet(ctx, "http://"+o.ProbeAddr+path)
			return code == http.StatusOK, nil
		}); err != nil {
			t.Fatalf("%s never returned 200: %v", path, err)
		}
	}
	var lease coordinationv1.Lease
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: LeaderElectionID}, &lease)
		return err == nil && lease.Spec.HolderIdentity != nil, nil
	}); err != nil {
		t.Fatalf("no leader Lease: %v", err)
	}
	// Metrics name the three controllers once they have started.
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		code, body := testenv.HTTPGet(ctx, "http://"+o.MetricsAddr+"/metrics")
		return code == http.StatusOK && strings.Contains(body, `controller="armadachart"`) &&
			strings.Contains(body, `controller="armadachartgroup"`) && strings.Contains(body, `controller="armadamanifest"`), nil
	}); err != nil {
		t.Fatalf("metrics do not list the three controllers: %v", err)
	}
}

// TestRunWaitsForCRDs starts the operator on an API server without its CRDs
// (as when the phase installing them runs after the operator starts): it
// must wait, not exit, alive but not ready, and come up once the CRDs are
// installed.
func TestRunWaitsForCRDs(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	saved := operatorkit.APIPollInterval
	operatorkit.APIPollInterval = 100 * time.Millisecond
	t.Cleanup(func() { operatorkit.APIPollInterval = saved })
	o := DefaultOptions()
	o.SkipControllerNameValidation = true
	o.LeaderElection = false
	o.MetricsAddr, o.ProbeAddr = "0", freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// The log line that says the operator decided to wait is the evidence
	// the absence checks below rest on (not a fixed sleep).
	waiting := make(chan struct{})
	var once sync.Once
	log := funcr.New(func(_, args string) {
		if strings.Contains(args, "waiting for the operator's CRDs") {
			once.Do(func() { close(waiting) })
		}
	}, funcr.Options{})
	go func() { done <- Run(ctx, env.Config, o, log) }()

	select {
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before the CRDs exist: %v", err)
	case <-waiting:
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("the operator neither waited for its CRDs nor returned")
	}
	// Having decided to wait, it must not be running yet.
	select {
	case err := <-done:
		cancel()
		t.Fatalf("Run returned before the CRDs exist: %v", err)
	default:
	}
	// Waiting, it is alive (a kubelet must not restart it) and not ready.
	if code, _ := testenv.HTTPGet(t.Context(), "http://"+o.ProbeAddr+"/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz before the CRDs exist: %d, want 503", code)
	}
	if code, _ := testenv.HTTPGet(t.Context(), "http://"+o.ProbeAddr+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz while waiting for the CRDs: %d, want 200", code)
	}

	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join(root, "config", "armada", "crd", "bases")}}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		code, _ := testenv.HTTPGet(t.Context(), "http://"+o.ProbeAddr+"/readyz")
		return code == http.StatusOK, nil
	}); err != nil {
		t.Fatalf("operator not ready after the CRDs were installed: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}

	// Cancelled while waiting: an error that says what it waited for.
	env2 := testenv.StartAPI(t, testenv.Options{})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	err = Run(ctx2, env2.Config, o, logr.Discard())
	if err == nil || !strings.Contains(err.Error(), "ArmadaChart, ArmadaChartGroup, ArmadaManifest") {
		t.Fatalf("Run cancelled while waiting: %v", err)
	}
}
