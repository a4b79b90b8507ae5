package armadaoperator

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/armada/reconcilers"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// LeaderElectionID names the Lease replicas compete for.
const LeaderElectionID = "armada-operator.armada.airshipit.org"

// Options configure the operator process.
type Options struct {
	// Options are the manager settings every operator shares.
	operatorkit.Options
	// Concurrency is how many ArmadaCharts are reconciled at once.
	Concurrency int
	// PollInterval is how often a chart whose workloads are not ready is
	// looked at again without a watch event.
	PollInterval time.Duration
	// ChartRoot is where chart locations on disk are looked up, as if it
	// were "/" (see chartsource.Loader.Root); empty reads them as given.
	ChartRoot string
	// ChartMounts map chart locations below a path to other directories,
	// as a pod's volumeMounts would (see chartsource.Loader.Mounts).
	ChartMounts []chartsource.Mount
	// ChartFetchTimeout bounds one fetch of an http(s) chart archive.
	ChartFetchTimeout time.Duration
	// ChartFetches bounds the archive fetches in flight (at most
	// chartsource.MaxFetchesPerHost of them to one host).
	ChartFetches int
}

// DefaultOptions are the flag defaults.
func DefaultOptions() Options {
	return Options{Options: operatorkit.Defaults(), Concurrency: 8, PollInterval: 5 * time.Second,
		ChartFetchTimeout: chartsource.DefaultFetchTimeout, ChartFetches: chartsource.DefaultMaxFetches}
}

// BindFlags registers the options as flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	o.Options.BindFlags(fs)
	fs.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "ArmadaCharts reconciled at once")
	fs.StringVar(&o.ChartRoot, "chart-root", o.ChartRoot, `directory chart locations on disk are read below, as if it were "/" (for an operator outside a pod: --chart-root=SITE maps /charts to SITE/charts)`)
	fs.Func("chart-mount", `LOCATION=DIR: read chart locations at and below LOCATION from DIR, as a pod's volume mounted at LOCATION (repeatable; e.g. --chart-mount=/opt/promenade/charts=charts/promenade)`, func(s string) error {
		m, err := chartsource.ParseMount(s)
		if err != nil {
			return err
		}
		o.ChartMounts = append(o.ChartMounts, m)
		return nil
	})
	fs.DurationVar(&o.PollInterval, "poll-interval", o.PollInterval, "re-check interval for charts whose workloads are not ready yet")
	fs.DurationVar(&o.ChartFetchTimeout, "chart-fetch-timeout", o.ChartFetchTimeout, "deadline of one fetch of an http(s) chart archive, from connecting to the last byte (fetches run outside the reconcile workers)")
	fs.IntVar(&o.ChartFetches, "chart-fetches", o.ChartFetches, fmt.Sprintf("chart archive fetches in flight at once (at most %d to one host)", chartsource.MaxFetchesPerHost))
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if o.Concurrency < 1 {
		return fmt.Errorf("--concurrency must be at least 1, got %d", o.Concurrency)
	}
	if o.PollInterval <= 0 {
		return fmt.Errorf("--poll-interval must be positive, got %s", o.PollInterval)
	}
	if o.ChartFetchTimeout <= 0 {
		return fmt.Errorf("--chart-fetch-timeout must be positive, got %s", o.ChartFetchTimeout)
	}
	if o.ChartFetches < 1 {
		return fmt.Errorf("--chart-fetches must be at least 1, got %d", o.ChartFetches)
	}
	return o.Options.Validate()
}

// addToScheme add the kinds the operator reads and writes besides
// client-go's.
var addToScheme = []func(*runtime.Scheme) error{armadav1.AddToScheme}

// Scheme returns the kinds the operator reads and writes.
func Scheme() (*runtime.Scheme, error) { return operatorkit.NewScheme(addToScheme...) }

// The operator's own needs. What the charts it installs need is granted
// separately (config/armada/rbac/release_role.yaml), see that file.
//
// Leader election holds its Lease in the operator's namespace: client-go's
// LeaseLock only gets, creates and updates it.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=armada-system,resources=leases,verbs=get;create;update
// Leader election (client-go's resourcelock, through controller-runtime's
// deprecated recorder) records core/v1 Events on the Lease, in the Lease's
// namespace; the controllers' own Events are events.k8s.io.
// +kubebuilder:rbac:groups="",namespace=armada-system,resources=events,verbs=create;patch
// Helm keeps release records as Secrets (owner=helm) in each release namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// Installs create the release namespace when it is missing.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;patch

// operator is the Armada operator process of o.
func (o Options) operator() operatorkit.Operator {
	return operatorkit.Operator{
		Name:             "armada-operator",
		LeaderElectionID: LeaderElectionID,
		Options:          o.Options,
		Validate:         o.Validate,
		AddToScheme:      addToScheme,
		Kinds:            []operatorkit.GroupKinds{{GroupVersion: armadav1.GroupVersion.String(), Kinds: []string{"ArmadaChart", "ArmadaChartGroup", "ArmadaManifest"}}},
		Reconcilers:      o.reconcilers,
		LogValues:        []any{"concurrency", o.Concurrency},
	}
}

// reconcilers are the three, sharing one Helm client and event recorder.
func (o Options) reconcilers(mgr ctrl.Manager, log logr.Logger) []operatorkit.Reconciler {
	rec := mgr.GetEventRecorder("armada-operator")
	// The manager's config: the options' client rate applied.
	hc := helm.New(mgr.GetConfig(), logr.ToSlogHandler(log.WithName("helm")))
	return []operatorkit.Reconciler{
		&reconcilers.ArmadaChartReconciler{
			Client:                  mgr.GetClient(),
			APIReader:               mgr.GetAPIReader(),
			Helm:                    hc,
			Loader:                  chartsource.Loader{Root: o.ChartRoot, Mounts: o.ChartMounts},
			Recorder:                rec,
			MaxConcurrentReconciles: o.Concurrency,
			PollInterval:            o.PollInterval,
			FetchTimeout:            o.ChartFetchTimeout,
			MaxFetches:              o.ChartFetches,
		},
		&reconcilers.ArmadaChartGroupReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: rec},
		&reconcilers.ArmadaManifestReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Helm: hc, Recorder: rec},
	}
}

// NewManager builds the manager with all three reconcilers registered.
func NewManager(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) (ctrl.Manager, error) {
	return o.operator().NewManager(ctx, cfg, log)
}

// Run starts the operator and blocks until ctx is done. An operator
// started before its CRDs are installed (the phase that installs them may
// run after it) waits for them instead of exiting.
func Run(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) error {
	return o.operator().Run(ctx, cfg, log)
}
