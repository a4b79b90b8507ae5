package capm3

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	watchtools "k8s.io/client-go/tools/watch"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
)

// The stages a worker machine is seen in, in order.
const (
	// stageOwned: Cluster API made the Machine the Metal3Machine's owner,
	// which the provider waits for.
	stageOwned = "owned"
	// stageClaimed: the Metal3Machine names its host (annotation).
	stageClaimed = "claimed"
	// stageHostProvisioned: the host it consumes is provisioned.
	stageHostProvisioned = "host provisioned"
	// stageInfraReady: the Metal3Machine is ready (providerID set, also on
	// the Node).
	stageInfraReady = "Metal3Machine ready"
	// stageRunning: Cluster API reports the Machine Running with a nodeRef.
	stageRunning = "Running"
)

var stages = []string{stageOwned, stageClaimed, stageHostProvisioned, stageInfraReady, stageRunning}

// timeline records when the bench first saw each worker machine in each
// stage, from watches on Machines, Metal3Machines and BareMetalHosts
// opened before the first machine is created. Counting from watches keeps
// the bench from listing 1,000 objects every poll on the API server the
// controllers are measured against. The API server closes watches that
// fall behind while it shares the cores with its clients: each watch is
// resumed from the last resource version it saw, as informers do.
type timeline struct {
	mu   sync.Mutex
	seen map[string]map[string]time.Time // stage -> machine -> when
	// watches counts the watches opened: more than one per kind means the
	// API server closed one and it was resumed.
	watches, events int
	ended           error // set when a watch ends before its context
}

// source is one kind watched and the stages its objects show.
type source struct {
	kind    string
	newList func() client.ObjectList
	stages  func(runtime.Object) (machine string, stages []string)
}

var sources = []source{
	{
		kind:    "Machine",
		newList: func() client.ObjectList { return &clusterv1.MachineList{} },
		stages: func(o runtime.Object) (string, []string) {
			m, ok := o.(*clusterv1.Machine)
			if !ok || !isWorker(m.Name) {
				return "", nil
			}
			if m.Status.Phase == string(clusterv1.MachinePhaseRunning) && m.Status.NodeRef.IsDefined() {
				return m.Name, []string{stageRunning}
			}
			return m.Name, nil
		},
	},
	{
		kind:    "Metal3Machine",
		newList: func() client.ObjectList { return &infrav1.Metal3MachineList{} },
		stages: func(o runtime.Object) (string, []string) {
			m, ok := o.(*infrav1.Metal3Machine)
			if !ok || !isWorker(m.Name) {
				return "", nil
			}
			var st []string
			for _, ref := range m.OwnerReferences {
				if ref.Kind == "Machine" {
					st = append(st, stageOwned)
					break
				}
			}
			if m.Annotations[infrav1.HostAnnotation] != "" {
				st = append(st, stageClaimed)
			}
			if m.Status.Ready {
				st = append(st, stageInfraReady)
			}
			return m.Name, st
		},
	},
	{
		kind:    "BareMetalHost",
		newList: func() client.ObjectList { return &metal3v1alpha1.BareMetalHostList{} },
		stages: func(o runtime.Object) (string, []string) {
			h, ok := o.(*metal3v1alpha1.BareMetalHost)
			if !ok || h.Spec.ConsumerRef == nil || !isWorker(h.Spec.ConsumerRef.Name) {
				return "", nil
			}
			if h.Status.Provisioning.State == metal3v1alpha1.StateProvisioned {
				return h.Spec.ConsumerRef.Name, []string{stageHostProvisioned}
			}
			return h.Spec.ConsumerRef.Name, nil
		},
	},
}

// watchMachines starts the watches on namespace ns; they stop with ctx.
func watchMachines(ctx context.Context, cc client.WithWatch, ns string) (*timeline, error) {
	tl := &timeline{seen: map[string]map[string]time.Time{}}
	for _, src := range sources {
		list := src.newList()
		if err := cc.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing %ss in %s: %w", src.kind, ns, err)
		}
		w, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &lister{c: cc, ns: ns, src: src, tl: tl})
		if err != nil {
			return nil, fmt.Errorf("watching %ss in %s: %w", src.kind, ns, err)
		}
		go tl.follow(ctx, w, src)
	}
	return tl, nil
}

func (tl *timeline) follow(ctx context.Context, w *watchtools.RetryWatcher, src source) {
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				tl.fail(fmt.Errorf("the %s watch ended before the run did", src.kind))
				return
			}
			if st, isStatus := ev.Object.(*metav1.Status); isStatus {
				tl.fail(fmt.Errorf("the %s watch failed: %s", src.kind, st.Message))
				return
			}
			name, reached := src.stages(ev.Object)
			tl.observe(name, reached, time.Now())
		}
	}
}

func (tl *timeline) fail(err error) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.ended == nil {
		tl.ended = err
	}
}

// lister opens the watches of a RetryWatcher and counts them.
type lister struct {
	c   client.WithWatch
	ns  string
	src source
	tl  *timeline
}

func (l *lister) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	l.tl.mu.Lock()
	l.tl.watches++
	l.tl.mu.Unlock()
	return l.c.Watch(ctx, l.src.newList(), client.InNamespace(l.ns), &client.ListOptions{Raw: &o})
}

func (tl *timeline) observe(machine string, reached []string, now time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.events++
	for _, st := range reached {
		m := tl.seen[st]
		if m == nil {
			m = map[string]time.Time{}
			tl.seen[st] = m
		}
		if _, ok := m[machine]; !ok {
			m[machine] = now
		}
	}
}

// count is how many machines have been seen in stage st; err is set when
// a watch ended early, so that a wait on count would never finish.
func (tl *timeline) count(st string) (int, error) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.seen[st]), tl.ended
}

// times are the delays from start of the machines seen in stage st,
// sorted.
func (tl *timeline) times(start time.Time, st string) []time.Duration {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var v []time.Duration
	for _, t := range tl.seen[st] {
		v = append(v, t.Sub(start))
	}
	slices.Sort(v)
	return v
}

// spans are, for each machine seen in both stages, the time from the
// first to the second, sorted.
func (tl *timeline) spans(from, to string) []time.Duration {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var v []time.Duration
	for m, t := range tl.seen[to] {
		if f, ok := tl.seen[from][m]; ok {
			v = append(v, t.Sub(f))
		}
	}
	slices.Sort(v)
	return v
}

// summary gives, for each stage, how many machines were seen in it and
// the median, 90th percentile and last of when, counted from start.
func (tl *timeline) summary(start time.Time) string {
	var parts []string
	for _, st := range stages {
		v := tl.times(start, st)
		if len(v) == 0 {
			parts = append(parts, st+" none")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s n=%d p50=%.1fs p90=%.1fs max=%.1fs", st, len(v), v[len(v)/2].Seconds(), v[len(v)*9/10].Seconds(), v[len(v)-1].Seconds()))
	}
	for _, sp := range [][2]string{{stageOwned, stageInfraReady}, {stageInfraReady, stageRunning}} {
		if v := tl.spans(sp[0], sp[1]); len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s -> %s per machine p50=%.1fs p90=%.1fs max=%.1fs", sp[0], sp[1], v[len(v)/2].Seconds(), v[len(v)*9/10].Seconds(), v[len(v)-1].Seconds()))
		}
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return strings.Join(parts, " | ") + fmt.Sprintf(" | %d watch events over %d watches of 3 kinds", tl.events, tl.watches)
}
