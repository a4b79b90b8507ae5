package data

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
)

// Field indexes of the controllers.
const (
	// templateIndex indexes Metal3DataClaims and Metal3Data by the name of
	// their template.
	templateIndex = "spec.template.name"
	// claimIndex indexes Metal3Data by the name of their claim.
	claimIndex = "spec.claim.name"
)

// Retry delays of a step waiting on something no watched event reports.
const (
	// waitRetry: another object is not there or not ready yet.
	waitRetry = 10 * time.Second
	// invalidRetry: the template cannot be rendered for this host (a NIC
	// not inspected yet, a missing annotation); looked at again in case the
	// host or the machine changed.
	invalidRetry = time.Minute
	// pausedRecheck: the Cluster is paused; unpausing is not an event of
	// these objects.
	pausedRecheck = 30 * time.Second
)

// Options configure the Metal3DataTemplate and Metal3Data controllers.
type Options struct {
	// Concurrency is how many Metal3Data are reconciled at once (default
	// 1). Templates are reconciled one at a time each.
	Concurrency int
}

// SetupWithManager registers the Metal3DataTemplate and Metal3Data
// controllers and the indexes they list by. Addresses are served by the
// IPPool controller of package ipam, set up beside these.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	idx := mgr.GetFieldIndexer()
	for _, o := range []client.Object{&infrav1.Metal3DataClaim{}, &infrav1.Metal3Data{}} {
		if err := idx.IndexField(ctx, o, templateIndex, templateOf); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", o, templateIndex, err)
		}
	}
	if err := idx.IndexField(ctx, &infrav1.Metal3Data{}, claimIndex, func(o client.Object) []string {
		return []string{o.(*infrav1.Metal3Data).Spec.Claim.Name}
	}); err != nil {
		return fmt.Errorf("indexing Metal3Data by %s: %w", claimIndex, err)
	}
	t := &TemplateReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
	if err := t.setup(mgr); err != nil {
		return err
	}
	d := &DataReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
	return d.setup(mgr, max(opts.Concurrency, 1))
}

func templateOf(o client.Object) []string {
	switch v := o.(type) {
	case *infrav1.Metal3DataClaim:
		return []string{v.Spec.Template.Name}
	case *infrav1.Metal3Data:
		return []string{v.Spec.Template.Name}
	}
	return nil
}
