package metal3

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// timeline records when the bench first saw each host in each provisioning
// state, and the errors hosts reported, from one watch on the namespace
// opened before the hosts are created. Counting from the watch keeps the
// bench from listing 1,000 hosts every poll on the API server the operator
// is measured against.
type timeline struct {
	mu     sync.Mutex
	seen   map[metal3v1alpha1.ProvisioningState]map[string]time.Time
	errors map[string]string // host -> the last error message it reported
	events int
	// watches counts the watches opened: more than one means the API
	// server closed one and it was resumed.
	watches int
	ended   error // set when the watch ends before its context
}

// watchHosts starts the watch on namespace ns; it stops with ctx. The
// API server closes a watch whose client falls behind (the bench shares 2
// cores with it and the operator), so the watch resumes from the last
// resource version it saw, as informers do.
func watchHosts(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, ns string) (*timeline, error) {
	cc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	var list metal3v1alpha1.BareMetalHostList
	if err := cc.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing BareMetalHosts in %s: %w", ns, err)
	}
	tl := &timeline{seen: map[metal3v1alpha1.ProvisioningState]map[string]time.Time{}, errors: map[string]string{}}
	hw := &hostWatcher{c: cc, ns: ns, tl: tl}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, hw)
	if err != nil {
		return nil, fmt.Errorf("watching BareMetalHosts in %s: %w", ns, err)
	}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					tl.mu.Lock()
					tl.ended = errors.New("the BareMetalHost watch ended before the run did")
					tl.mu.Unlock()
					return
				}
				switch o := ev.Object.(type) {
				case *metal3v1alpha1.BareMetalHost:
					tl.observe(o, time.Now())
				case *metav1.Status:
					tl.mu.Lock()
					tl.ended = fmt.Errorf("the BareMetalHost watch failed: %s", o.Message)
					tl.mu.Unlock()
					return
				}
			}
		}
	}()
	return tl, nil
}

// hostWatcher opens the watches of a RetryWatcher and counts them.
type hostWatcher struct {
	c  client.WithWatch
	ns string
	tl *timeline
}

func (h *hostWatcher) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	h.tl.mu.Lock()
	h.tl.watches++
	h.tl.mu.Unlock()
	return h.c.Watch(ctx, &metal3v1alpha1.BareMetalHostList{}, client.InNamespace(h.ns), &client.ListOptions{Raw: &o})
}

func (tl *timeline) observe(h *metal3v1alpha1.BareMetalHost, now time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.events++
	st := h.Status.Provisioning.State
	m := tl.seen[st]
	if m == nil {
		m = map[string]time.Time{}
		tl.seen[st] = m
	}
	if _, ok := m[h.Name]; !ok {
		m[h.Name] = now
	}
	if h.Status.ErrorType != "" {
		tl.errors[h.Name] = string(h.Status.ErrorType) + ": " + h.Status.ErrorMessage
	}
}

// count is how many hosts have been seen in state st; err is set when the
// watch ended early, so a wait on count would never finish.
func (tl *timeline) count(st metal3v1alpha1.ProvisioningState) (int, error) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.seen[st]), tl.ended
}

// summary gives, for each state, how many hosts were seen in it and the
// median, 90th percentile and last of when, counted from start; then the
// hosts that reported an error, with one of their messages.
func (tl *timeline) summary(start time.Time, states ...metal3v1alpha1.ProvisioningState) string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var parts []string
	for _, st := range states {
		var v []time.Duration
		for _, t := range tl.seen[st] {
			if !t.Before(start) {
				v = append(v, t.Sub(start))
			}
		}
		if len(v) == 0 {
			parts = append(parts, fmt.Sprintf("%s none", st))
			continue
		}
		slices.Sort(v)
		parts = append(parts, fmt.Sprintf("%s n=%d p50=%.1fs p90=%.1fs max=%.1fs", st, len(v), v[len(v)/2].Seconds(), v[len(v)*9/10].Seconds(), v[len(v)-1].Seconds()))
	}
	s := strings.Join(parts, " | ")
	if len(tl.errors) > 0 {
		names := make([]string, 0, len(tl.errors))
		for n := range tl.errors {
			names = append(names, n)
		}
		slices.Sort(names)
		s += fmt.Sprintf(" | %d hosts reported an error (%s: %s)", len(names), names[0], tl.errors[names[0]])
	}
	return s + fmt.Sprintf(" | %d watch events over %d watches", tl.events, tl.watches)
}
