package operator

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/armada/controller"
	"github.com/airshipit/airship-go/internal/armada/helm"
)

// LeaderElectionID names the Lease replicas compete for.
const LeaderElectionID = "armada-operator.armada.airshipit.org"

// Options configure the operator process.
type Options struct {
	// MetricsAddr serves Prometheus metrics; "0" disables it.
	MetricsAddr string
	// ProbeAddr serves /healthz and /readyz; "0" disables it.
	ProbeAddr string
	// LeaderElection makes only one replica reconcile at a time.
	LeaderElection bool
	// LeaderElectionNamespace holds the Lease; empty means the namespace the
	// operator runs in.
	LeaderElectionNamespace string
	// Concurrency is how many ArmadaCharts are reconciled at once.
	Concurrency int
	// PollInterval is how often a chart whose workloads are not ready is
	// looked at again without a watch event.
	PollInterval time.Duration
	// QPS and Burst bound the client-side request rate to the API server,
	// shared by the manager and the Helm actions; 0 keeps client-go's.
	QPS   float32
	Burst int
	// ChartRoot is where chart locations on disk are looked up, as if it
	// were "/" (see chartsource.Loader.Root); empty reads them as given.
	ChartRoot string
	// SkipControllerNameValidation allows more than one manager per process
	// (tests); controller names are otherwise unique process-wide.
	SkipControllerNameValidation bool
}

// DefaultOptions are the flag defaults.
func DefaultOptions() Options {
	return Options{MetricsAddr: ":8080", ProbeAddr: ":8081", LeaderElection: true, Concurrency: 8, PollInterval: 5 * time.Second, QPS: 100, Burst: 200}
}

// BindFlags registers the options as flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, `address of the metrics endpoint; "0" disables it`)
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, `address of /healthz and /readyz; "0" disables them`)
	fs.BoolVar(&o.LeaderElection, "leader-elect", o.LeaderElection, "elect a leader so only one replica reconciles")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election Lease (default: the operator's namespace)")
	fs.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "ArmadaCharts reconciled at once")
	qps := float64(o.QPS)
	fs.Func("kube-api-qps", fmt.Sprintf("requests per second to the API server (default %g)", qps), func(v string) error {
		f, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return err
		}
		o.QPS = float32(f)
		return nil
	})
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "request burst to the API server")
	fs.StringVar(&o.ChartRoot, "chart-root", o.ChartRoot, `directory chart locations on disk are read below, as if it were "/" (for an operator outside a pod: --chart-root=SITE maps /charts to SITE/charts)`)
	fs.DurationVar(&o.PollInterval, "poll-interval", o.PollInterval, "re-check interval for charts whose workloads are not ready yet")
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if o.Concurrency < 1 {
		return fmt.Errorf("--concurrency must be at least 1, got %d", o.Concurrency)
	}
	if o.QPS < 0 || o.Burst < 0 {
		return fmt.Errorf("--kube-api-qps and --kube-api-burst must not be negative")
	}
	if o.PollInterval <= 0 {
		return fmt.Errorf("--poll-interval must be positive, got %s", o.PollInterval)
	}
	return nil
}

// Scheme returns the kinds the operator reads and writes.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := armadav1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// The operator's own needs. What the charts it installs need is granted
// separately (config/armada/rbac/release_role.yaml), see that file.
//
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// Helm keeps release records as Secrets (owner=helm) in each release namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch;delete
// Installs create the release namespace when it is missing.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;patch

// NewManager builds the manager with all three reconcilers registered.
func NewManager(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) (ctrl.Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	if o.QPS > 0 {
		cfg.QPS = o.QPS
	}
	if o.Burst > 0 {
		cfg.Burst = o.Burst
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// Releases are left mid-action when the leader stops; hand over only
		// after reconcilers return.
		LeaderElectionReleaseOnCancel: true,
		Logger:                        log,
		Controller:                    config.Controller{SkipNameValidation: &o.SkipControllerNameValidation},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	rec := mgr.GetEventRecorder("armada-operator")
	hc := helm.New(cfg, logr.ToSlogHandler(log.WithName("helm")))
	charts := &controller.ArmadaChartReconciler{
		Client:                  mgr.GetClient(),
		APIReader:               mgr.GetAPIReader(),
		Helm:                    hc,
		Loader:                  chartsource.Loader{Root: o.ChartRoot},
		Recorder:                rec,
		MaxConcurrentReconciles: o.Concurrency,
		PollInterval:            o.PollInterval,
	}
	if err := charts.SetupWithManager(ctx, mgr); err != nil {
		return nil, err
	}
	if err := (&controller.ArmadaChartGroupReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: rec}).SetupWithManager(ctx, mgr); err != nil {
		return nil, err
	}
	if err := (&controller.ArmadaManifestReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Helm: hc, Recorder: rec}).SetupWithManager(ctx, mgr); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	// Ready once the informer caches have synced.
	if err := mgr.AddReadyzCheck("caches", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return fmt.Errorf("caches not synced")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return mgr, nil
}

// Run starts the operator and blocks until ctx is done.
// An operator started before its CRDs are installed (the phase that installs
// them may run after it) waits for them instead of exiting.
func Run(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) error {
	if err := waitForAPI(ctx, cfg, log); err != nil {
		return err
	}
	mgr, err := NewManager(ctx, cfg, o, log)
	if err != nil {
		return err
	}
	log.Info("starting armada-operator", "leaderElection", o.LeaderElection, "concurrency", o.Concurrency)
	return mgr.Start(ctx)
}

// apiPollInterval is how often Run looks for the operator's CRDs.
var apiPollInterval = 2 * time.Second

// waitForAPI returns once the API server serves every kind of
// armada.airshipit.org/v1alpha1, or when ctx ends.
func waitForAPI(ctx context.Context, cfg *rest.Config, log logr.Logger) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	gv := armadav1.GroupVersion.String()
	want := []string{"ArmadaChart", "ArmadaChartGroup", "ArmadaManifest"}
	logged := false
	for {
		list, err := dc.ServerResourcesForGroupVersion(gv)
		missing := want
		if err == nil {
			missing = nil
			for _, k := range want {
				if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Kind == k }) {
					missing = append(missing, k)
				}
			}
		} else if !apierrors.IsNotFound(err) {
			log.Error(err, "looking for the operator's CRDs", "groupVersion", gv)
		}
		if len(missing) == 0 {
			return nil
		}
		if !logged {
			log.Info("waiting for the operator's CRDs to be installed", "groupVersion", gv, "missing", missing)
			logged = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the CRDs of %s (%s): %w", gv, strings.Join(missing, ", "), ctx.Err())
		case <-time.After(apiPollInterval):
		}
	}
}
