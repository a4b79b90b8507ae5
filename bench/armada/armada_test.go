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
	"sigs.k8s.io/controller-runtime/pkg/client"

	chartv2loader "helm.sh/helm/v4/pkg/chart/v2/loader"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func charts() int {
	if n, err := strconv.Atoi(os.Getenv("ARMADA_BENCH_CHARTS")); err == nil && n > 0 {
		return n
	}
	return 100
}

// peakRSS reads VmHWM (peak resident set) of a process, in MiB.
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
	env := testenv.StartFull(b, testenv.Options{
		Nodes:       3,
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
	c := env.Client
	b.ResetTimer()
	var opTotal, sdkTotal time.Duration
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
		op := exec.Command(bin, args...)
		op.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
		op.Stderr = os.Stderr
		if err := op.Start(); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
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
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 15*time.Minute, true, func(ctx context.Context) (bool, error) {
			var l armadav1.ArmadaChartList
			if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
				return false, err
			}
			done := 0
			for _, a := range l.Items {
				if a.Status.Satisfied {
					done++
				}
			}
			return done == n, nil
		}); err != nil {
			b.Fatalf("charts not all satisfied: %v", err)
		}
		opTotal += time.Since(start)
		rss, err := peakRSS(op.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, rss)
		_ = op.Process.Kill()
		_ = op.Wait()

		// The baseline: sequential installs through the Helm SDK in this
		// process, each waiting for its Deployment like the operator does.
		ns2 := fmt.Sprintf("bench-sdk-%d", iter)
		hc := helm.New(env.Config, nil)
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
	b.ReportMetric(op/sdk, "operator/sdk")
	b.ReportMetric(peak, "operator-peak-MiB")
	b.ReportMetric(float64(n), "charts")
}
