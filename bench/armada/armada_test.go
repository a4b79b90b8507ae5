package armada

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chartv2loader "helm.sh/helm/v4/pkg/chart/v2/loader"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/armada/armadaoperator"
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// timeout bounds one side's run until all charts are satisfied or
// installed: ARMADA_BENCH_TIMEOUT (a duration), default 15m.
func timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("ARMADA_BENCH_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 15 * time.Minute
}

// operatorArgs are the operator's flags: the bench's fixed ones plus
// ARMADA_BENCH_OPERATOR_ARGS (for example "--concurrency=16"), and the
// options they give, so the baseline can match its parallelism and rate.
func operatorArgs(b *testing.B) ([]string, armadaoperator.Options) {
	b.Helper()
	extra := strings.Fields(os.Getenv("ARMADA_BENCH_OPERATOR_ARGS"))
	o := armadaoperator.DefaultOptions()
	if err := flagSet(&o).Parse(extra); err != nil {
		b.Fatalf("ARMADA_BENCH_OPERATOR_ARGS: %v", err)
	}
	args := append([]string{"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--zap-log-level=error"}, extra...)
	return args, o
}

// startCluster starts a fresh full-mode local control plane with the
// Armada CRDs and room for n one-pod Deployments.
func startCluster(b *testing.B, n int) *testenv.Env {
	b.Helper()
	env, err := testenv.NewFull(context.Background(), testenv.Options{
		Nodes:       harness.Nodes(n),
		CRDDirs:     []string{"config/armada/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{armadav1.AddToScheme},
	})
	if err != nil {
		if testenv.MainSkip(err) {
			b.Skip(err)
		}
		b.Fatal(err)
	}
	// The first ArmadaChart a fresh API server stores takes it about 2 s
	// (once per cluster, measured: the next take 2 ms). Each side's cluster
	// pays it here, before either clock, so both run on a cluster in the
	// same state.
	c, _ := fastClient(b, env)
	warm := &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "warm-up"},
		Spec: armadav1.ArmadaChartSpec{Release: "warm-up", Namespace: metav1.NamespaceDefault, TargetState: armadav1.TargetStateUninitialized,
			Source: armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: "/warm-up"}}}
	if err := c.Create(context.Background(), warm); err != nil {
		b.Fatal(err)
	}
	if err := c.Delete(context.Background(), warm); err != nil {
		b.Fatal(err)
	}
	return env
}

func stopCluster(b *testing.B, env *testenv.Env) {
	b.Helper()
	if err := env.Stop(); err != nil {
		b.Error(err)
	}
}

// fastClient is the bench's own client: client-go's default 5 requests/s
// would make creating 100 charts take 20 s, and the bench's clients must
// not be what is measured.
func fastClient(b *testing.B, env *testenv.Env) (client.Client, *rest.Config) {
	b.Helper()
	fast := rest.CopyConfig(env.Config)
	fast.QPS, fast.Burst = 1000, 2000
	c, err := client.New(fast, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	return c, fast
}

// operatorRun is what one operator run measured.
type operatorRun struct {
	// startup is from the operator's start until its /readyz answers 200
	// (its caches synced), before the clock.
	startup    time.Duration
	wall       time.Duration
	peakRSSMiB float64
	cpuSeconds float64
}

// runOperator starts the operator as its own process on env, waits until
// it is ready (its /readyz answers 200: caches synced, as an operator that
// runs in a site is when charts come), creates n ArmadaCharts of the small
// chart in one namespace, and times them until all are satisfied, counted
// from watches opened before the first is created. Its peak RSS is VmHWM
// read just before it is stopped.
func runOperator(b *testing.B, env *testenv.Env, bin, chartPath string, args []string, n int) operatorRun {
	b.Helper()
	ctx := context.Background()
	c, fast := fastClient(b, env)
	const ns = "bench"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	var op *exec.Cmd
	var stopInProcess func()
	var metricsAddr string
	var run operatorRun
	if prof := os.Getenv("ARMADA_BENCH_CPUPROFILE"); prof != "" {
		stopInProcess = profileInProcess(b, env.Config, prof)
	} else {
		// Its metrics endpoint is read before it is stopped, its probes
		// before the clock (the last flag wins over the bench's "=0").
		var err error
		if metricsAddr, err = freeMetricsAddr(ctx); err != nil {
			b.Fatal(err)
		}
		probeAddr, err := freeMetricsAddr(ctx)
		if err != nil {
			b.Fatal(err)
		}
		op = exec.CommandContext(b.Context(), bin, append(slices.Clone(args), "--metrics-bind-address="+metricsAddr, "--health-probe-bind-address="+probeAddr)...)
		op.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
		op.Stderr = os.Stderr
		if err := op.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() {
			if op.ProcessState == nil {
				_ = op.Process.Kill()
				_ = op.Wait()
			}
		}()
		started := time.Now()
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			code, _ := testenv.HTTPGet(ctx, "http://"+probeAddr+"/readyz")
			return code == http.StatusOK, nil
		}); err != nil {
			b.Fatalf("armada-operator not ready: %v", err)
		}
		run.startup = time.Since(started)
	}
	wctx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	tl, err := watchTimeline(wctx, env.Config, env.Scheme, ns)
	if err != nil {
		b.Fatal(err)
	}
	reqBefore, err := harness.APIRequests(ctx, fast)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	tl.start = start
	for i := 0; i < n; i++ {
		act := &armadav1.ArmadaChart{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("c%d", i)},
			Spec: armadav1.ArmadaChartSpec{
				Release:   fmt.Sprintf("r%d", i),
				Namespace: ns,
				Source:    armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: chartPath},
				Wait: &armadav1.ArmadaChartWait{Timeout: 300, Resources: []armadav1.ArmadaChartWaitResource{
					{Type: armadav1.WaitResourceDeployment, Labels: map[string]string{"app": fmt.Sprintf("r%d", i)}},
				}},
				Test: &armadav1.ArmadaChartTest{Enabled: new(bool)},
			},
		}
		if err := c.Create(ctx, act); err != nil {
			b.Fatal(err)
		}
	}
	// Counted from the watch: listing every chart each poll would load
	// the API server the operator is measured against.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout(), true, func(context.Context) (bool, error) {
		return tl.satisfiedCount() == n, nil
	}); err != nil {
		b.Logf("timeline: %s", tl.summary())
		b.Fatalf("charts not all satisfied: %v", err)
	}
	run.wall = time.Since(start)
	b.Logf("operator timeline: %s", tl.summary())
	if reqAfter, err := harness.APIRequests(ctx, fast); err == nil {
		b.Logf("API server (all clients, during the run): %s", reqAfter.Since(reqBefore).Top(14))
	}
	if stopInProcess != nil {
		stopInProcess()
		return run
	}
	if q, err := operatorQueue(ctx, metricsAddr); err == nil {
		b.Logf("operator work queue: %s", q)
	} else {
		b.Logf("operator work queue: %v", err)
	}
	if run.peakRSSMiB, err = harness.VmHWMMiB(op.Process.Pid); err != nil {
		b.Fatal(err)
	}
	_ = op.Process.Signal(syscall.SIGTERM)
	_ = op.Wait()
	run.cpuSeconds = (op.ProcessState.UserTime() + op.ProcessState.SystemTime()).Seconds()
	return run
}

// runSDK installs n releases of the small chart into one namespace through
// the Helm SDK (internal/armada/helm, the client the operator uses, at the
// operator's request rate) in this process, workers at once, each waiting
// for its resources with Helm's own wait, like the operator does.
func runSDK(b *testing.B, env *testenv.Env, chartPath string, o armadaoperator.Options, n, workers int) time.Duration {
	b.Helper()
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	hc := helm.New(cfg, nil)
	const ns = "bench"
	next := make(chan int)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = func() error {
					ch, err := chartv2loader.LoadDir(chartPath)
					if err != nil {
						return err
					}
					d, err := chartsource.Digest(ch, nil)
					if err != nil {
						return err
					}
					_, err = hc.Install(ctx, helm.Options{Namespace: ns, Name: fmt.Sprintf("r%d", i), Chart: ch, Digest: d, Timeout: 5 * time.Minute, NativeWait: true})
					return err
				}()
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	wall := time.Since(start)
	for i, err := range errs {
		if err != nil {
			b.Fatalf("Helm SDK install r%d: %v", i, err)
		}
	}
	return wall
}

// BenchmarkChartsToSatisfied times $BENCH_SIZE ArmadaCharts (default 100)
// of a small chart (a ConfigMap and a one-pod Deployment) from created to
// all satisfied with the operator as its own process, against the same
// releases installed through the Helm SDK at the operator's parallelism
// (its --concurrency, 8 by default) and, beside it, one at a time. Each
// side runs on its own fresh local control plane of the same size, into
// one new namespace.
func BenchmarkChartsToSatisfied(b *testing.B) {
	n := harness.Size(b, 100)
	args, opts := operatorArgs(b)
	bin := harness.Binary(b, "armada-operator")
	chartPath, err := filepath.Abs(filepath.Join("testdata", "charts", "small"))
	if err != nil {
		b.Fatal(err)
	}
	skipSDK := os.Getenv("ARMADA_BENCH_SKIP_SDK") != ""
	// ARMADA_BENCH_SKIP_SEQUENTIAL leaves out the one-at-a-time SDK row
	// (make bench does at 1,000 charts, where it takes minutes).
	skipSequential := os.Getenv("ARMADA_BENCH_SKIP_SEQUENTIAL") != ""
	var ours, parallel, sequential harness.Tally
	var cpu float64
	var startup time.Duration
	for b.Loop() {
		env := startCluster(b, n)
		run := runOperator(b, env, bin, chartPath, args, n)
		stopCluster(b, env)
		ours.Add(run.wall, run.peakRSSMiB)
		cpu += run.cpuSeconds
		b.Logf("operator: %s, peak RSS %.0f MiB, CPU %.1f s; ready %s after its start", harness.Seconds(run.wall.Seconds()), run.peakRSSMiB, run.cpuSeconds, harness.Seconds(run.startup.Seconds()))
		startup += run.startup
		if skipSDK {
			continue
		}
		sides := []struct {
			workers int
			tally   *harness.Tally
		}{{opts.Concurrency, &parallel}, {1, &sequential}}
		if skipSequential {
			sides = sides[:1]
		}
		for _, side := range sides {
			env := startCluster(b, n)
			d := runSDK(b, env, chartPath, opts, n, side.workers)
			stopCluster(b, env)
			side.tally.Add(d, 0)
			b.Logf("Helm SDK, %d at once: %s", side.workers, harness.Seconds(d.Seconds()))
		}
	}
	b.ReportMetric(cpu/float64(ours.Runs), "operator-cpu-s")
	if skipSDK {
		b.ReportMetric(ours.Seconds(), "operator-s")
		b.ReportMetric(ours.PeakRSSMiB, "operator-peak-MiB")
		return
	}
	cluster := fmt.Sprintf("fresh, %d kwok Nodes, one per side", harness.Nodes(n))
	ourSide := fmt.Sprintf("armada-operator (its own process; %s), ready, charts created at once, timed until all are satisfied", strings.Join(args, " "))
	notes := []string{
		"each chart is a ConfigMap and a one-pod Deployment, installed into one new namespace; each side on its own fresh local control plane (full mode) with no other workload, which has stored and deleted one ArmadaChart before the clock (a fresh API server takes 2 s over its first)",
		fmt.Sprintf("satisfied means the release is installed and its Deployment available; the SDK side waits with Helm's own wait on the release's resources; operator CPU %.1f s per run", cpu/float64(ours.Runs)),
		fmt.Sprintf("the operator's clock starts once its /readyz answers (caches synced), as charts reach an operator that runs in a site; its start until then, %s, is not in the time", harness.Seconds((startup / time.Duration(ours.Runs)).Seconds())),
		"the SDK side uses the operator's Helm client (internal/armada/helm: shared discovery, no client-side OpenAPI validation) at the operator's request rate, in the benchmark process",
	}
	harness.Record(b, harness.Row{
		Workload: "Armada charts", Size: harness.Count(n) + " charts",
		Ours: ourSide, Peer: fmt.Sprintf("Helm SDK installs, %d at once", opts.Concurrency),
		OursSeconds: ours.Seconds(), PeerSeconds: parallel.Seconds(), OursPeakRSSMiB: ours.PeakRSSMiB,
		Parallelism: fmt.Sprintf("%d at once each", opts.Concurrency),
		Cluster:     cluster, Runs: ours.Runs, Notes: notes,
	})
	if skipSequential {
		return
	}
	harness.Record(b, harness.Row{
		Workload: "Armada charts", Size: harness.Count(n) + " charts",
		Ours: ourSide, Peer: "Helm SDK installs, one at a time",
		OursSeconds: ours.Seconds(), PeerSeconds: sequential.Seconds(), OursPeakRSSMiB: ours.PeakRSSMiB,
		Parallelism: fmt.Sprintf("ours %d at once; peer 1", opts.Concurrency),
		Cluster:     cluster, Runs: ours.Runs,
	})
}
