package armada

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// BenchmarkDeploymentsAvailable creates the Deployments the chart bench's
// releases hold, directly and without the operator or Helm, and times them
// until all are available: what the local control plane (controller-manager,
// scheduler, kwok) alone needs for $BENCH_SIZE charts (default 100). When they
// do not all become available it reports where the pods are.
func BenchmarkDeploymentsAvailable(b *testing.B) {
	n := harness.Size(b, 100)
	env := testenv.StartFull(b, testenv.Options{
		Nodes: harness.Nodes(n),
		// The timeline watches ArmadaCharts too.
		CRDDirs:     []string{"config/armada/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{armadav1.AddToScheme},
	})
	fast := rest.CopyConfig(env.Config)
	fast.QPS, fast.Burst = 1000, 2000
	c, err := client.New(fast, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	var total time.Duration
	for iter := 0; iter < b.N; iter++ {
		ns := fmt.Sprintf("bench-deploy-%d", iter)
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			b.Fatal(err)
		}
		wctx, stop := context.WithCancel(ctx)
		tl, err := watchTimeline(wctx, env.Config, env.Scheme, ns)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		tl.start = start
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("d%d-%d", iter, i)
			labels := map[string]string{"app": name}
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To(int32(1)),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:1"}}},
					},
				},
			}
			if err := c.Create(ctx, d); err != nil {
				b.Fatal(err)
			}
		}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout(), true, func(context.Context) (bool, error) {
			tl.mu.Lock()
			defer tl.mu.Unlock()
			return len(tl.available) == n, nil
		})
		stop()
		b.Logf("timeline: %s", tl.summary())
		if err != nil {
			b.Logf("pods: %s", podReport(ctx, c, ns))
			b.Fatalf("deployments not all available: %v", err)
		}
		total += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(total.Seconds()/float64(b.N), "available-s")
	b.ReportMetric(float64(n), "deployments")
}

// podReport counts the pods of namespace ns by phase, node and readiness.
func podReport(ctx context.Context, c client.Client, ns string) string {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	phase, node := map[string]int{}, map[string]int{}
	ready := 0
	for _, p := range pods.Items {
		phase[string(p.Status.Phase)]++
		node[p.Spec.NodeName]++
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	var rs appsv1.ReplicaSetList
	nrs := 0
	if err := c.List(ctx, &rs, client.InNamespace(ns)); err == nil {
		nrs = len(rs.Items)
	}
	return fmt.Sprintf("%d pods (%d ready), by phase %v, by node %v; %d ReplicaSets", len(pods.Items), ready, phase, node, nrs)
}
