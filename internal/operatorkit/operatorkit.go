package operatorkit

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/airshipit/airship-go/internal/httplimit"
)

// Options are the manager settings every operator has.
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
	// QPS and Burst bound the client-side request rate to the API server;
	// 0 keeps client-go's.
	QPS   float32
	Burst int
	// SkipControllerNameValidation allows more than one manager per process
	// (tests); controller names are otherwise unique process-wide.
	SkipControllerNameValidation bool
	// ServerTimeouts bound the metrics and probe servers' connections;
	// zero fields take httplimit's defaults (tests shorten them).
	ServerTimeouts httplimit.ServerTimeouts
}

// Defaults are the flag defaults shared by the operators.
func Defaults() Options {
	return Options{MetricsAddr: ":8080", ProbeAddr: ":8081", LeaderElection: true, QPS: 100, Burst: 200}
}

// BindFlags registers the options as flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, `address of the metrics endpoint; "0" disables it`)
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr, `address of /healthz and /readyz; "0" disables them`)
	fs.BoolVar(&o.LeaderElection, "leader-elect", o.LeaderElection, "elect a leader so only one replica reconciles")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election Lease (default: the operator's namespace)")
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
}

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if o.QPS < 0 || o.Burst < 0 {
		return fmt.Errorf("--kube-api-qps and --kube-api-burst must not be negative")
	}
	return nil
}

// RESTConfig is cfg with the options' client rate applied (a copy).
func (o Options) RESTConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if o.QPS > 0 {
		cfg.QPS = o.QPS
	}
	if o.Burst > 0 {
		cfg.Burst = o.Burst
	}
	return cfg
}

// Operator is what sets one operator process apart: its kinds, the CRDs
// it waits for, and its reconcilers. Run assembles the process from it.
type Operator struct {
	// Name names the process in its start log line.
	Name string
	// LeaderElectionID names the Lease replicas compete for.
	LeaderElectionID string
	// Options are the shared manager settings.
	Options Options
	// Validate checks the operator's own options (operatorkit's among
	// them) before anything else is done; nil checks only Options.
	Validate func() error
	// AddToScheme add the kinds the operator reads and writes, after
	// client-go's built-in ones (Events, Leases, Secrets, ...).
	AddToScheme []func(*runtime.Scheme) error
	// Kinds are waited for, in order, before the manager is built.
	Kinds []GroupKinds
	// Reconcilers returns the reconcilers to register, in order, once the
	// manager exists (they take its client, recorder and config).
	Reconcilers func(mgr ctrl.Manager, log logr.Logger) []Reconciler
	// Controllers start each on its own, on the running manager, once the
	// API server serves its Kinds (Run); an operator whose parts need
	// different CRDs lists them here instead of in Kinds and Reconcilers.
	Controllers []Controller
	// LogValues are logged with the start line, after leaderElection.
	LogValues []any
	// Conversion is the operator's CRD conversion webhook, served from
	// the start on every replica when enabled.
	Conversion ConversionWebhook
}

// GroupKinds are kinds of one group version.
type GroupKinds struct {
	GroupVersion string
	Kinds        []string
}

// Reconciler is what an operator registers on its manager. Every
// reconciler's SetupWithManager fits; SetupFunc adapts a setup function.
type Reconciler interface {
	SetupWithManager(ctx context.Context, mgr ctrl.Manager) error
}

// SetupFunc is a setup function that registers reconcilers, as a
// Reconciler.
type SetupFunc func(ctx context.Context, mgr ctrl.Manager) error

// SetupWithManager calls f.
func (f SetupFunc) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error { return f(ctx, mgr) }

// NewScheme is a scheme with client-go's built-in kinds and those adds
// add.
func NewScheme(adds ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range append([]func(*runtime.Scheme) error{clientgoscheme.AddToScheme}, adds...) {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Scheme is the operator's scheme.
func (op Operator) Scheme() (*runtime.Scheme, error) { return NewScheme(op.AddToScheme...) }

// NewManager builds the operator's manager with its reconcilers and
// those of its Controllers registered, without waiting for their CRDs.
func (op Operator) NewManager(ctx context.Context, cfg *rest.Config, log logr.Logger) (ctrl.Manager, error) {
	if err := op.validate(); err != nil {
		return nil, err
	}
	mgr, err := op.build(ctx, cfg, log, nil)
	if err != nil {
		return nil, err
	}
	for _, c := range op.Controllers {
		if err := c.setUp(ctx, mgr, log); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// build is the manager of the checked options with op.Reconcilers
// registered; /readyz answers 503 while readyGate fails (nil: never).
func (op Operator) build(ctx context.Context, cfg *rest.Config, log logr.Logger, readyGate func() error) (ctrl.Manager, error) {
	scheme, err := op.Scheme()
	if err != nil {
		return nil, err
	}
	mgr, err := newManager(cfg, scheme, op.Options, op.LeaderElectionID, log, readyGate)
	if err != nil {
		return nil, err
	}
	if op.Conversion.Enabled() {
		if err := op.Conversion.add(mgr, op.Options.RESTConfig(cfg), scheme, op.Options.ServerTimeouts, log); err != nil {
			return nil, err
		}
	}
	if op.Reconcilers == nil {
		return mgr, nil
	}
	for _, r := range op.Reconcilers(mgr, log) {
		if err := r.SetupWithManager(ctx, mgr); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// Run runs the operator until ctx ends: it checks the options, waits for
// the CRDs of its kinds (an operator started before they are installed, as
// when the phase installing them runs after it, waits instead of exiting),
// then builds and starts the manager. While it waits, the probe address
// answers /healthz (alive: a kubelet must not restart it) and not /readyz.
//
// Each of op.Controllers is then registered on the running manager once
// the API server serves its own kinds: Run logs "controller X waits for
// CRDs" (once, with the kinds missing) and "controller X started". Until
// one of them is registered /readyz answers 503 with what each waits for;
// from then on the process serves, and /readyz is the manager's.
func (op Operator) Run(ctx context.Context, cfg *rest.Config, log logr.Logger) error {
	if err := op.validate(); err != nil {
		return err
	}
	stop := func() {}
	if len(op.Kinds) > 0 && enabled(op.Options.ProbeAddr) {
		var err error
		if stop, err = serveWaitingProbes(op.Options.ProbeAddr, op.Options.ServerTimeouts); err != nil {
			return err
		}
	}
	for _, gk := range op.Kinds {
		if err := WaitForKinds(ctx, cfg, gk.GroupVersion, gk.Kinds, log); err != nil {
			stop()
			return err
		}
	}
	stop() // the manager's probe server binds the address next
	var starter *controllerStarter
	var readyGate func() error
	if len(op.Controllers) > 0 {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			return fmt.Errorf("discovery client: %w", err)
		}
		starter = newControllerStarter(dc, op.Controllers, log)
		readyGate = starter.ready
	}
	mgr, err := op.build(ctx, cfg, log, readyGate)
	if err != nil {
		return err
	}
	if starter != nil {
		starter.mgr = mgr
		if err := mgr.Add(starter); err != nil {
			return fmt.Errorf("adding the controllers' starter: %w", err)
		}
	}
	log.Info("starting "+op.Name, append([]any{"leaderElection", op.Options.LeaderElection}, op.LogValues...)...)
	return mgr.Start(ctx)
}

func (op Operator) validate() error {
	if err := op.Conversion.Validate(); err != nil {
		return err
	}
	if op.Validate != nil {
		return op.Validate()
	}
	return op.Options.Validate()
}

// NewManager builds a manager for scheme with metrics, probes, leader
// election on the Lease leaderElectionID and the client rate of o; /healthz
// answers while the process runs and /readyz once the caches have synced.
func NewManager(cfg *rest.Config, scheme *runtime.Scheme, o Options, leaderElectionID string, log logr.Logger) (ctrl.Manager, error) {
	return newManager(cfg, scheme, o, leaderElectionID, log, nil)
}

// newManager is NewManager whose /readyz answers 503 with readyGate's
// error while it fails (nil: never).
func newManager(cfg *rest.Config, scheme *runtime.Scheme, o Options, leaderElectionID string, log logr.Logger, readyGate func() error) (ctrl.Manager, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	// The metrics and probe servers are this package's, not
	// controller-runtime's, whose have no read, write or idle bounds to set.
	mgr, err := ctrl.NewManager(o.RESTConfig(cfg), ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// Work is left mid-action when the leader stops; hand over only
		// after reconcilers return.
		LeaderElectionReleaseOnCancel: true,
		Logger:                        log,
		Controller: config.Controller{
			SkipNameValidation: &o.SkipControllerNameValidation,
			// controller-runtime's priority queue (its default) gives
			// the objects of an informer's initial list a low priority
			// that their requeues keep; while other objects requeue
			// (a host polled every few seconds) the workers never reach
			// them. At 1,000 BareMetalHosts, the 182 created while the
			// operator started were never reconciled. A FIFO queue
			// serves every object in turn.
			UsePriorityQueue: new(false),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if enabled(o.MetricsAddr) {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
		if err := serve(mgr, "metrics", o.MetricsAddr, mux, o.ServerTimeouts); err != nil {
			return nil, err
		}
	}
	if enabled(o.ProbeAddr) {
		live := &healthz.Handler{Checks: map[string]healthz.Checker{"ping": healthz.Ping}}
		ready := &healthz.Handler{Checks: map[string]healthz.Checker{"caches": func(req *http.Request) error {
			if !mgr.GetCache().WaitForCacheSync(req.Context()) {
				return fmt.Errorf("caches not synced")
			}
			return nil
		}}}
		readyz := http.Handler(ready)
		if readyGate != nil {
			readyz = gated(readyGate, ready)
		}
		mux := http.NewServeMux()
		for path, h := range map[string]http.Handler{"/healthz": live, "/readyz": readyz} {
			mux.Handle(path, http.StripPrefix(path, h))
			mux.Handle(path+"/", http.StripPrefix(path, h)) // one check: /readyz/caches
		}
		if err := serve(mgr, "health probe", o.ProbeAddr, mux, o.ServerTimeouts); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// enabled reports whether a bind address asks for a server ("0" and ""
// do not).
func enabled(addr string) bool { return addr != "" && addr != "0" }

// serve listens on addr now (so a taken port fails the start) and runs h
// there with httplimit's timeouts while the manager runs, leader or not.
func serve(mgr ctrl.Manager, name, addr string, h http.Handler, t httplimit.ServerTimeouts) error {
	ln, err := net.Listen("tcp", addr) //nolint:noctx // bound while the manager is built, before it has a context; the manager's server closes it when the manager stops
	if err != nil {
		return fmt.Errorf("%s server: %w", name, err)
	}
	if err := mgr.Add(&manager.Server{Name: name, Server: httplimit.NewServer(h, t), Listener: ln}); err != nil {
		_ = ln.Close()
		return fmt.Errorf("%s server: %w", name, err)
	}
	return nil
}

// serveWaitingProbes answers the probes of an operator waiting for its
// CRDs on addr until stop returns: /healthz 200, /readyz 503.
func serveWaitingProbes(addr string, t httplimit.ServerTimeouts) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr) //nolint:noctx // bound before the wait; stop closes it
	if err != nil {
		return nil, fmt.Errorf("health probe server: %w", err)
	}
	mux := http.NewServeMux()
	for _, path := range []string{"/healthz", "/healthz/"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	}
	for _, path := range []string{"/readyz", "/readyz/"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "waiting for the operator's CRDs", http.StatusServiceUnavailable)
		})
	}
	srv := httplimit.NewServer(mux, t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // ends with Close below
	}()
	return func() {
		_ = srv.Close() // closes the listener too
		<-done
	}, nil
}

// APIPollInterval is how often WaitForKinds looks again.
var APIPollInterval = 2 * time.Second

// WaitForKinds returns once the API server serves every kind of gv, or
// when ctx ends. An operator started before its CRDs are installed (the
// phase that installs them may run after it) waits instead of exiting.
func WaitForKinds(ctx context.Context, cfg *rest.Config, gv string, kinds []string, log logr.Logger) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	logged := false
	need := []GroupKinds{{GroupVersion: gv, Kinds: kinds}}
	for {
		var missing []string
		served := servedKinds(dc, need, log)
		for _, k := range kinds {
			if !slices.Contains(served[gv], k) {
				missing = append(missing, k)
			}
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
		case <-time.After(APIPollInterval):
		}
	}
}
