package sipcluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/sip/schedule"
)

// labelWriters bounds the label patches in flight at once.
const labelWriters = 8

// label writes the plan: released hosts lose SIP's labels, picked hosts
// get the cluster's. Patches go out labelWriters at a time (a cluster of
// a hundred hosts is otherwise a hundred round trips in a row); every
// patch is tried, and the errors are reported together.
func (r *SIPClusterReconciler) label(ctx context.Context, c *sipv1.SIPCluster, plan schedule.Plan, byKey map[string]*metal3v1alpha1.BareMetalHost) error {
	type write struct {
		b    *metal3v1alpha1.BareMetalHost
		want map[string]string
	}
	var writes []write
	for _, pk := range plan.Picks {
		want := map[string]string{sipv1.ClusterNamespaceLabel: c.Namespace, sipv1.ClusterNameLabel: c.Name, sipv1.NodeTypeLabel: string(pk.Role)}
		if pk.Standby {
			want[sipv1.StandbyLabel] = "true"
		}
		writes = append(writes, write{byKey[pk.Host.Key()], want})
	}
	for _, h := range plan.Release {
		writes = append(writes, write{byKey[h.Key()], nil})
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, labelWriters)
	)
	for _, w := range writes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := r.setLabels(ctx, w.b, w.want); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sipLabels are the labels SIP owns on a host.
var sipLabels = []string{sipv1.ClusterNamespaceLabel, sipv1.ClusterNameLabel, sipv1.NodeTypeLabel, sipv1.StandbyLabel}

// setLabels makes SIP's labels on b exactly want (none when nil), with a
// patch only when they differ.
func (r *SIPClusterReconciler) setLabels(ctx context.Context, b *metal3v1alpha1.BareMetalHost, want map[string]string) error {
	same := true
	for _, k := range sipLabels {
		if b.Labels[k] != want[k] {
			same = false
		}
	}
	if same {
		return nil
	}
	b = b.DeepCopy() // b may be the cache's own object
	patch := client.MergeFrom(b.DeepCopy())
	l := maps.Clone(b.Labels)
	if l == nil {
		l = map[string]string{}
	}
	for _, k := range sipLabels {
		delete(l, k)
	}
	maps.Copy(l, want)
	b.Labels = l
	if err := r.Client.Patch(ctx, b, patch); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted since the list: nothing to label; the next pass,
			// woken by the deletion, schedules without it.
			return nil
		}
		return fmt.Errorf("labelling BareMetalHost %s/%s: %w", b.Namespace, b.Name, err)
	}
	return nil
}

// release removes SIP's labels from every host labelled for c.
func (r *SIPClusterReconciler) release(ctx context.Context, c *sipv1.SIPCluster, hosts []metal3v1alpha1.BareMetalHost) error {
	var errs []error
	for i := range hosts {
		b := &hosts[i]
		if b.Labels[sipv1.ClusterNameLabel] != c.Name || b.Labels[sipv1.ClusterNamespaceLabel] != c.Namespace {
			continue
		}
		if err := r.setLabels(ctx, b, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
