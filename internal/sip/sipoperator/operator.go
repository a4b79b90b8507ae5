package sipoperator

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/sip/sipcluster"
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
	return Options{Options: operatorkit.Defaults(), Resync: sipcluster.DefaultResync}
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

// addToScheme add the kinds the operator reads and writes besides
// client-go's.
var addToScheme = []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme, sipv1.AddToScheme}

// Scheme returns the kinds the operator reads and writes.
func Scheme() (*runtime.Scheme, error) { return operatorkit.NewScheme(addToScheme...) }

// Leader election holds its Lease in the operator's namespace: client-go's
// LeaseLock only gets, creates and updates it.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=sip-system,resources=leases,verbs=get;create;update
// Leader election (client-go's resourcelock, through controller-runtime's
// deprecated recorder) records core/v1 Events on the Lease, in the Lease's
// namespace; the controllers' own Events are events.k8s.io.
// +kubebuilder:rbac:groups="",namespace=sip-system,resources=events,verbs=create;patch

// operator is the SIP operator process of o: the SIPCluster controller,
// after the SIPCluster and BareMetalHost CRDs.
func (o Options) operator() operatorkit.Operator {
	return operatorkit.Operator{
		Name:             "sip-operator",
		LeaderElectionID: LeaderElectionID,
		Options:          o.Options,
		Validate:         o.Validate,
		AddToScheme:      addToScheme,
		Kinds: []operatorkit.GroupKinds{
			{GroupVersion: sipv1.GroupVersion.String(), Kinds: []string{"SIPCluster"}},
			{GroupVersion: metal3v1alpha1.GroupVersion.String(), Kinds: []string{"BareMetalHost"}},
		},
		Reconcilers: func(mgr ctrl.Manager, _ logr.Logger) []operatorkit.Reconciler {
			return []operatorkit.Reconciler{&sipcluster.SIPClusterReconciler{
				Client:    mgr.GetClient(),
				APIReader: mgr.GetAPIReader(),
				Recorder:  mgr.GetEventRecorder("sip-operator"),
				Resync:    o.Resync,
			}}
		},
	}
}

// NewManager builds the manager with the SIPCluster controller.
func NewManager(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) (ctrl.Manager, error) {
	return o.operator().NewManager(ctx, cfg, log)
}

// Run starts the operator and blocks until ctx is done; it waits for the
// SIPCluster and BareMetalHost CRDs first.
func Run(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) error {
	return o.operator().Run(ctx, cfg, log)
}
