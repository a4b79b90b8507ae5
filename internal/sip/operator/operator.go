package operator

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/sip/controller"
)

// LeaderElectionID names the Lease replicas compete for.
const LeaderElectionID = "sip-operator.airship.airshipit.org"

// Options configure the operator process.
type Options struct {
	// Options are the manager settings every operator shares.
	operatorkit.Options
	// Resync is how often a SIPCluster is looked at again without an
	// event, to notice what no watch reports.
	Resync time.Duration
}

// DefaultOptions are the flag defaults.
func DefaultOptions() Options {
	return Options{Options: operatorkit.Defaults(), Resync: controller.DefaultResync}
}

// BindFlags registers the options as flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	o.Options.BindFlags(fs)
	fs.DurationVar(&o.Resync, "resync", o.Resync, "how often every SIPCluster is reconciled again without an event")
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if o.Resync <= 0 {
		return fmt.Errorf("--resync must be positive, got %s", o.Resync)
	}
	return o.Options.Validate()
}

// Scheme returns the kinds the operator reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, metal3v1alpha1.AddToScheme, sipv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete

// NewManager builds the manager with the SIPCluster controller.
func NewManager(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) (ctrl.Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	mgr, err := operatorkit.NewManager(cfg, scheme, o.Options, LeaderElectionID, log)
	if err != nil {
		return nil, err
	}
	r := &controller.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("sip-operator"),
		Resync:    o.Resync,
	}
	if err := r.SetupWithManager(ctx, mgr, o.SkipControllerNameValidation); err != nil {
		return nil, err
	}
	return mgr, nil
}

// Run starts the operator and blocks until ctx is done; it waits for the
// SIPCluster and BareMetalHost CRDs first.
func Run(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) error {
	if err := operatorkit.WaitForKinds(ctx, cfg, sipv1.GroupVersion.String(), []string{"SIPCluster"}, log); err != nil {
		return err
	}
	if err := operatorkit.WaitForKinds(ctx, cfg, metal3v1alpha1.GroupVersion.String(), []string{"BareMetalHost"}, log); err != nil {
		return err
	}
	mgr, err := NewManager(ctx, cfg, o, log)
	if err != nil {
		return err
	}
	log.Info("starting sip-operator", "leaderElection", o.LeaderElection)
	return mgr.Start(ctx)
}
