package armada

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// timeline records, per release, when the bench first saw its Helm release
// record, its Deployment available, and its ArmadaChart satisfied, from
// watches opened before the charts are created. It shows where the time of
// a run goes: queueing and Helm (created → released), the cluster starting
// pods (released → available), and the operator noticing (available →
// satisfied).
type timeline struct {
	start time.Time

	mu                             sync.Mutex
	released, available, satisfied map[string]time.Duration
}

func (tl *timeline) mark(m map[string]time.Duration, name string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if _, ok := m[name]; !ok {
		m[name] = time.Since(tl.start)
	}
}

// watchTimeline starts the three watches on namespace ns; they stop with
// ctx. start is set by the caller just before creating the charts.
func watchTimeline(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, ns string) (*timeline, error) {
	tl := &timeline{released: map[string]time.Duration{}, available: map[string]time.Duration{}, satisfied: map[string]time.Duration{}, start: time.Now()}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	// Long enough for any run: the API server would otherwise end a watch
	// after 30-60 minutes.
	long := int64(3 * 3600)
	secrets, err := mc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "owner=helm", TimeoutSeconds: &long})
	if err != nil {
		return nil, err
	}
	deployments, err := kc.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{TimeoutSeconds: &long})
	if err != nil {
		return nil, err
	}
	charts, err := cc.Watch(ctx, &armadav1.ArmadaChartList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{TimeoutSeconds: &long}})
	if err != nil {
		return nil, err
	}
	consume := func(w watch.Interface, f func(runtime.Object)) {
		go func() {
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					f(ev.Object)
				}
			}
		}()
	}
	consume(secrets, func(o runtime.Object) {
		if m, ok := o.(*metav1.PartialObjectMetadata); ok {
			tl.mark(tl.released, m.Labels["name"])
		}
	})
	consume(deployments, func(o runtime.Object) {
		if d, ok := o.(*appsv1.Deployment); ok && d.Status.ObservedGeneration >= d.Generation && d.Status.AvailableReplicas >= 1 && d.Status.UpdatedReplicas >= 1 {
			tl.mark(tl.available, d.Name)
		}
	})
	consume(charts, func(o runtime.Object) {
		if c, ok := o.(*armadav1.ArmadaChart); ok && c.Status.Satisfied {
			tl.mark(tl.satisfied, c.Spec.Release)
		}
	})
	return tl, nil
}

func (tl *timeline) satisfiedCount() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.satisfied)
}

// summary gives the first, median and last of each milestone, and the median lag
// from Deployment available to chart satisfied.
func (tl *timeline) summary() string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	q := func(m map[string]time.Duration) string {
		if len(m) == 0 {
			return "none"
		}
		v := make([]time.Duration, 0, len(m))
		for _, d := range m {
			v = append(v, d)
		}
		slices.Sort(v)
		return fmt.Sprintf("n=%d first=%.1fs p50=%.1fs p90=%.1fs max=%.1fs", len(v), v[0].Seconds(), v[len(v)/2].Seconds(), v[len(v)*9/10].Seconds(), v[len(v)-1].Seconds())
	}
	lag := map[string]time.Duration{}
	for name, s := range tl.satisfied {
		if a, ok := tl.available[name]; ok {
			lag[name] = s - a
		}
	}
	return fmt.Sprintf("released %s | available %s | satisfied %s | available->satisfied %s", q(tl.released), q(tl.available), q(tl.satisfied), q(lag))
}
