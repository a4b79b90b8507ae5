package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/document"
)

// writeTree writes a kustomize root of n documents (ConfigMaps, Deployments
// and Services in equal thirds), with a label transformer and a patch.
func writeTree(tb testing.TB, dir string, n int) string {
	tb.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("---\n")
		}
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: ns-%d\ndata:\n  key: value-%d\n", i, i%10, i)
		case 1:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  namespace: ns-%d
spec:
  replicas: 1
  selector:
    matchLabels: {app: app-%d}
  template:
    metadata:
      labels: {app: app-%d}
    spec:
      containers:
      - name: main
        image: registry.invalid/app:%d
`, i, i%10, i, i, i)
		default:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\n  namespace: ns-%d\nspec:\n  selector: {app: app-%d}\n  ports:\n  - port: 80\n", i, i%10, i-1)
		}
	}
	root := filepath.Join(dir, "site")
	if err := os.MkdirAll(root, 0o755); err != nil {
		tb.Fatal(err)
	}
	files := map[string]string{
		"resources.yaml": b.String(),
		"kustomization.yaml": `resources:
- resources.yaml
labels:
- pairs:
    airshipit.org/site: bench
patches:
- target:
    kind: Deployment
  patch: |
    - op: replace
      path: /spec/replicas
      value: 2
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

func peakRSSMiB(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / 1024
	}
	return 0
}

// BenchmarkRender5000 renders a 5,000-document tree in-process (cold, no
// cache), with `kubectl kustomize` on the same tree, and again from the
// render cache, and reports the ratios.
func BenchmarkRender5000(b *testing.B) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		b.Skip("kubectl not on PATH")
	}
	root := writeTree(b, b.TempDir(), 5000)
	var ours, peer, warm time.Duration
	var peerRSS float64
	var heap uint64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		bundle, err := document.Build(root, document.BuildOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bundle.YAML(); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(t0)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap += after.TotalAlloc - before.TotalAlloc
		if bundle.Len() != 5000 {
			b.Fatalf("rendered %d documents, want 5000", bundle.Len())
		}

		cmd := exec.Command(kubectl, "kustomize", root)
		cmd.Stdout = nil
		t0 = time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		peer += time.Since(t0)
		peerRSS = max(peerRSS, peakRSSMiB(cmd.ProcessState))

		cache := &document.Cache{Dir: b.TempDir(), Salt: "bench"}
		if _, err := document.Build(root, document.BuildOptions{Cache: cache}); err != nil {
			b.Fatal(err)
		}
		fresh := &document.Cache{Dir: cache.Dir, Salt: "bench"} // a new process: served from disk
		t0 = time.Now()
		wb, err := document.Build(root, document.BuildOptions{Cache: fresh})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := wb.YAML(); err != nil {
			b.Fatal(err)
		}
		warm += time.Since(t0)
		if h, _ := fresh.Stats(); h != 1 {
			b.Fatal("warm render missed the cache")
		}
	}
	n := float64(b.N)
	b.ReportMetric(ours.Seconds()/n, "airship-s/op")
	b.ReportMetric(peer.Seconds()/n, "kubectl-s/op")
	b.ReportMetric(warm.Seconds()/n, "warm-s/op")
	b.ReportMetric(ours.Seconds()/peer.Seconds(), "cold-ratio")
	b.ReportMetric(warm.Seconds()/ours.Seconds(), "warm/cold")
	b.ReportMetric(float64(heap)/n/(1<<20), "airship-alloc-MiB/op")
	b.ReportMetric(peerRSS, "kubectl-peak-RSS-MiB")
}
