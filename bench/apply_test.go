package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/apply"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// applyObjects returns 1,000 objects in namespace ns: 500 ConfigMaps,
// 400 Deployments and 100 Services.
func applyObjects(ns string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: %s\ndata:\n  k: v%d\n", i, ns, i)
	}
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  namespace: %s
spec:
  replicas: 1
  selector: {matchLabels: {app: app-%d}}
  template:
    metadata: {labels: {app: app-%d}}
    spec: {containers: [{name: main, image: registry.invalid/app:1}]}
`, i, ns, i, i)
	}
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\n  namespace: %s\nspec:\n  selector: {app: app-%d}\n  ports: [{port: 80}]\n", i, ns, i)
	}
	return b.String()
}

func parse(tb testing.TB, y string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(y, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			tb.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

// BenchmarkApply1000 applies 1,000 objects on 5 kwok nodes and waits for
// them, with internal/apply (what `phase run` does) and with
// `kubectl apply --server-side` + `kubectl wait --for=condition=Available`
// on the same cluster, each into its own namespace, and reports both and
// the ratios.
func BenchmarkApply1000(b *testing.B) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		b.Skip("kubectl not on PATH")
	}
	env, err := testenv.NewFull(context.Background(), testenv.Options{Nodes: 5})
	if err != nil {
		if testenv.MainSkip(err) {
			b.Skip(err)
		}
		b.Fatal(err)
	}
	defer env.Stop()
	ctx := context.Background()
	var oursApply, oursTotal, kApply, kTotal time.Duration
	var heap uint64
	var notice time.Duration
	for i := 0; i < b.N; i++ {
		ns := fmt.Sprintf("ours-%d", i)
		objs := parse(b, applyObjects(ns))
		a, err := apply.New(env.Config)
		if err != nil {
			b.Fatal(err)
		}
		var applied time.Time
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		t0 := time.Now()
		_, err = a.Apply(ctx, objs, apply.Options{
			Inventory: ns, WaitTimeout: 10 * time.Minute, PollInterval: time.Second, Concurrency: 16,
			Progress: func(e apply.Event) {
				if e.Type == "Wait" && applied.IsZero() {
					applied = time.Now()
				}
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		returned := time.Now()
		oursTotal += time.Since(t0)
		// How long after the last Deployment became Available did the wait
		// notice? Condition times have one-second resolution.
		var deps appsv1.DeploymentList
		if err := env.Client.List(ctx, &deps, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		var last time.Time
		for _, d := range deps.Items {
			for _, c := range d.Status.Conditions {
				if c.Type == appsv1.DeploymentAvailable && c.Status == "True" && c.LastTransitionTime.After(last) {
					last = c.LastTransitionTime.Time
				}
			}
		}
		notice += returned.Sub(last)
		oursApply += applied.Sub(t0)
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap += after.TotalAlloc - before.TotalAlloc

		kns := fmt.Sprintf("kubectl-%d", i)
		file := filepath.Join(b.TempDir(), "objects.yaml")
		if err := os.WriteFile(file, []byte(applyObjects(kns)), 0o644); err != nil {
			b.Fatal(err)
		}
		t0 = time.Now()
		if out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "apply", "--server-side", "-f", file).CombinedOutput(); err != nil {
			b.Fatalf("kubectl apply: %v\n%s", err, out)
		}
		kApply += time.Since(t0)
		if out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "-n", kns, "wait", "--for=condition=Available", "deployment", "--all", "--timeout=10m").CombinedOutput(); err != nil {
			b.Fatalf("kubectl wait: %v\n%s", err, out)
		}
		kTotal += time.Since(t0)
	}
	n := float64(b.N)
	b.ReportMetric(oursApply.Seconds()/n, "airship-apply-s")
	b.ReportMetric(oursTotal.Seconds()/n, "airship-total-s")
	b.ReportMetric(kApply.Seconds()/n, "kubectl-apply-s")
	b.ReportMetric(kTotal.Seconds()/n, "kubectl-total-s")
	b.ReportMetric(oursApply.Seconds()/kApply.Seconds(), "apply-ratio")
	b.ReportMetric(oursTotal.Seconds()/kTotal.Seconds(), "total-ratio")
	b.ReportMetric(float64(heap)/n/(1<<20), "airship-alloc-MiB")
	b.ReportMetric(notice.Seconds()/n, "ready-noticed-after-s")
}
