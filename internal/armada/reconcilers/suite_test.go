package reconcilers

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// env is the package's full-mode control plane (kwok nodes, so workloads
// become ready); each test works in its own namespaces.
var env *testenv.Env

func TestMain(m *testing.M) {
	if kc := os.Getenv(managerKubeconfigEnv); kc != "" {
		// Re-executed by a test as a separate operator process it can kill.
		os.Exit(runManagerProcess(kc))
	}
	if os.Getenv("ARMADA_TEST_VERBOSE") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	os.Exit(testenv.Main(m, func() (*testenv.Env, error) {
		return testenv.NewFull(context.Background(), testenv.Options{
			Nodes:       3,
			CRDDirs:     []string{"config/armada/crd/bases"},
			AddToScheme: []func(*runtime.Scheme) error{armadav1.AddToScheme},
		})
	}, func(e *testenv.Env) { env = e }))
}

// managerKubeconfigEnv makes the test binary run only an operator manager
// against the named kubeconfig, until killed.
const managerKubeconfigEnv = "ARMADA_TEST_MANAGER_KUBECONFIG"

func runManagerProcess(kubeconfig string) int {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = armadav1.AddToScheme(scheme)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	r := &ArmadaChartReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Helm: helm.New(cfg, nil), Recorder: mgr.GetEventRecorder("armada-operator"), PollInterval: time.Second}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := mgr.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startManager runs a manager with the ArmadaChart reconciler until the
// returned stop function is called (or the test ends). tune may change the
// chart reconciler's settings before it starts.
func startManager(t *testing.T, tune ...func(*ArmadaChartReconciler)) (stop func()) {
	t.Helper()
	mgr := testenv.NewManager(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	r := &ArmadaChartReconciler{
		Client:       mgr.GetClient(),
		APIReader:    mgr.GetAPIReader(),
		Helm:         helm.New(env.Config, nil),
		Recorder:     mgr.GetEventRecorder("armada-operator"),
		PollInterval: time.Second,
	}
	for _, f := range tune {
		f(r)
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	if err := (&ArmadaChartGroupReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("armada-operator")}).SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	if err := (&ArmadaManifestReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Helm: helm.New(env.Config, nil), Recorder: mgr.GetEventRecorder("armada-operator")}).SetupWithManager(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	var once atomic.Bool
	stop = func() {
		if once.CompareAndSwap(false, true) {
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// newNamespace creates a namespace unique to the test.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	return testenv.Namespace(t, env, prefix)
}

func chartDir(t *testing.T, name string) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("testdata", "charts", name))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func values(t *testing.T, js string) *apiextensionsv1.JSON {
	t.Helper()
	return &apiextensionsv1.JSON{Raw: []byte(js)}
}

func newChart(ns, name, release, location string) *armadav1.ArmadaChart {
	return &armadav1.ArmadaChart{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: armadav1.ArmadaChartSpec{
			Release:   release,
			Namespace: ns,
			Source:    armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: location},
			Wait:      &armadav1.ArmadaChartWait{Timeout: 60},
		},
	}
}

// waitFor polls the chart until cond holds, failing the test after timeout
// with the last status seen.
func waitFor(t *testing.T, key client.ObjectKey, timeout time.Duration, what string, cond func(*armadav1.ArmadaChart) bool) *armadav1.ArmadaChart {
	t.Helper()
	var last armadav1.ArmadaChart
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, key, &last); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(&last), nil
	})
	if err != nil {
		t.Fatalf("%s: waiting for %s: %v; last status: %+v", key, what, err, last.Status)
	}
	return &last
}

func satisfiedAt(gen int64) func(*armadav1.ArmadaChart) bool {
	return func(c *armadav1.ArmadaChart) bool {
		return c.Status.ObservedGeneration >= gen && c.Status.Satisfied && c.Status.State == armadav1.StateDeployed
	}
}

// packChart makes a gzipped tar of a chart directory under top/, as `helm
// package` does.
func packChart(t *testing.T, dir, top string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// update applies mutate to the latest version of the chart, retrying on
// conflicts with the controller's status writes, and returns the result.
func update(t *testing.T, key client.ObjectKey, mutate func(*armadav1.ArmadaChart)) *armadav1.ArmadaChart {
	t.Helper()
	var c armadav1.ArmadaChart
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), key, &c); err != nil {
			return err
		}
		mutate(&c)
		return env.Client.Update(context.Background(), &c)
	})
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }
