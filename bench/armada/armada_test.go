package armada

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/armada/operator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func charts() int {
	if n, err := strconv.Atoi(os.Getenv("ARMADA_BENCH_CHARTS")); err == nil && n > 0 {
		return n
	}
	return 100
}

// peakRSS reads VmHWM (peak resident set) of a process, in MiB.
// nodes is how many kwok Nodes a run of n charts needs: the local control
// plane's Nodes hold 250 pods each (internal/cluster/local/stages.yaml), so
// 3 Nodes cap a run at 750 ready Deployments and the rest stay Pending.
// A fifth of the capacity is left spare.
func nodes(n int) int {
	return max(3, (n+199)/200)
}

// timeout bounds one run until all charts are satisfied:
// ARMADA_BENCH_TIMEOUT (a duration), default 15m.
func timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("ARMADA_BENCH_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 15 * time.Minute
}

func peakRSS(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024, err
		}
	}
	return 0, fmt.Errorf("VmHWM not found for pid %d", pid)
}

func BenchmarkChartsToSatisfied(b *testing.B) {
	n := charts()
	// The Helm SDK baseline installs n more Deployments beside the
	// operator's: room for both.
	pods := 2 * n
	if os.Getenv("ARMADA_BENCH_SKIP_SDK") != "" {
		pods = n
	}
	env := testenv.StartFull(b, testenv.Options{
		Nodes:       nodes(pods),
		CRDDirs:     []string{"config/armada/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{armadav1.AddToScheme},
	})
	root, err := testenv.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "armada-operator")
	if out, err := exec.Command("go", "build", "-o", bin, filepath.Join(root, "cmd", "armada-operator")).CombinedOutput(); err != nil {
		b.Fatalf("building the operator: %v\n%s", err, out)
	}
	chartPath, err := filepath.Abs(filepath.Join("testdata", "charts", "small"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// The test environment's client has client-go's default rate (5
	// requests/s), which alone would make creating the charts take 20 s
	// per 100: the bench's own clients must not be what is measured.
	fast := rest.CopyConfig(env.Config)
	fast.QPS, fast.Burst = 1000, 2000
	c, err := client.New(fast, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	// The baseline's Helm client gets the operator's default rate.
	sdkCfg := rest.CopyConfig(env.Config)
	def := operator.DefaultOptions()
	sdkCfg.QPS, sdkCfg.Burst = def.QPS, def.Burst
	b.ResetTimer()
	var opTotal, sdkTotal time.Duration
	var opCPU float64
	var peak float64
	for iter := 0; iter < b.N; iter++ {
		// The operator, as its own process.
		ns := fmt.Sprintf("bench-op-%d", iter)
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
		args := []string{"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--zap-log-level=error"}
		// ARMADA_BENCH_OPERATOR_ARGS adds flags, e.g. "--concurrency=16".
		args = append(args, strings.Fields(os.Getenv("ARMADA_BENCH_OPERATOR_ARGS"))...)
		var op *exec.Cmd
		var stopInProcess func()
		if prof := os.Getenv("ARMADA_BENCH_CPUPROFILE"); prof != "" {
			stopInProcess = profileInProcess(b, env.Config, prof)
		} else {
			op = exec.Command(bin, args...)
			op.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
			op.Stderr = os.Stderr
			if err := op.Start(); err != nil {
				b.Fatal(err)
			}
		}
		wctx, stopWatches := context.WithCancel(ctx)
		tl, err := watchTimeline(wctx, env.Config, env.Scheme, ns)
		if err != nil {
			b.Fatal(err)
		}
		reqBefore, err := requestCounts(ctx, fast)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		tl.start = start
		for i := 0; i < n; i++ {
			act := &armadav1.ArmadaChart{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("c%d", i)},
				Spec: armadav1.ArmadaChartSpec{
					Release:   fmt.Sprintf("op%d-%d", iter, i),
					Namespace: ns,
					Source:    armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: chartPath},
					Wait: &armadav1.ArmadaChartWait{Timeout: 300, Resources: []armadav1.ArmadaChartWaitResource{
						{Type: armadav1.WaitResourceDeployment, Labels: map[string]string{"app": fmt.Sprintf("op%d-%d", iter, i)}},
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
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout(), true, func(ctx context.Context) (bool, error) {
			return tl.satisfiedCount() == n, nil
		}); err != nil {
			b.Logf("timeline: %s", tl.summary())
			b.Fatalf("charts not all satisfied: %v", err)
		}
		opTotal += time.Since(start)
		stopWatches()
		b.Logf("timeline: %s", tl.summary())
		if reqAfter, err := requestCounts(ctx, fast); err == nil {
			b.Logf("API server (all clients, during the run): %s", requestDelta(reqBefore, reqAfter, 14))
		}
		if stopInProcess != nil {
			stopInProcess()
			continue
		}
		rss, err := peakRSS(op.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, rss)
		cpu, err := cpuSeconds(op.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		opCPU += cpu
		_ = op.Process.Kill()
		_ = op.Wait()
		if os.Getenv("ARMADA_BENCH_SKIP_SDK") != "" {
			continue
		}

		// The baseline: sequential installs through the Helm SDK in this
		// process, each waiting for its Deployment like the operator does.
		ns2 := fmt.Sprintf("bench-sdk-%d", iter)
		hc := helm.New(sdkCfg, nil)
		start = time.Now()
		for i := 0; i < n; i++ {
			ch, err := chartv2loader.LoadDir(chartPath)
			if err != nil {
				b.Fatal(err)
			}
			d, err := chartsource.Digest(ch, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := hc.Install(ctx, helm.Options{Namespace: ns2, Name: fmt.Sprintf("sdk%d-%d", iter, i), Chart: ch, Digest: d, Timeout: 5 * time.Minute, NativeWait: true}); err != nil {
				b.Fatal(err)
			}
		}
		sdkTotal += time.Since(start)
	}
	b.StopTimer()
	op := opTotal.Seconds() / float64(b.N)
	sdk := sdkTotal.Seconds() / float64(b.N)
	b.ReportMetric(op, "operator-s")
	b.ReportMetric(sdk, "helm-sdk-sequential-s")
	if sdk > 0 {
		b.ReportMetric(op/sdk, "operator/sdk")
	}
	b.ReportMetric(opCPU/float64(b.N), "operator-cpu-s")
	b.ReportMetric(peak, "operator-peak-MiB")
	b.ReportMetric(float64(n), "charts")
}
