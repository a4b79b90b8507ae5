package metal3operator

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	infrav1beta2 "github.com/airshipit/airship-go/api/infrastructure/v1beta2"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/metal3/baremetalhost"
	"github.com/airshipit/airship-go/internal/metal3/capm3"
	"github.com/airshipit/airship-go/internal/metal3/data"
	"github.com/airshipit/airship-go/internal/metal3/ipam"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/direct"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/ironic"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/redfish"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// LeaderElectionID names the Lease replicas compete for.
const LeaderElectionID = "metal3-operator.metal3.io"

// Options configure the operator process.
type Options struct {
	// Options are the manager settings every operator shares.
	operatorkit.Options
	// Concurrency is how many BareMetalHosts are reconciled at once.
	Concurrency int
	// PowerPollInterval is how often a settled host's power is read again.
	PowerPollInterval time.Duration
	// BMCTimeout bounds each request to a BMC.
	BMCTimeout time.Duration
	// Factory opens the BareMetalHost controller's lifecycle provisioners;
	// nil is Ironic's when IronicEndpoint is set, else the direct one over
	// Redfish (tests replace it).
	Factory provisioner.Factory
	// IronicEndpoint is the Ironic API the BareMetalHost controller drives
	// (http(s)://host:6385); empty drives the hosts' BMCs directly.
	IronicEndpoint string
	// IronicCredentialsFile holds Ironic's http_basic username and
	// password (YAML, mode 0600 or 0640); empty is noauth, allowed only for a
	// loopback endpoint.
	IronicCredentialsFile string
	// IronicCAFile is a PEM bundle verifying an https IronicEndpoint.
	IronicCAFile string
	// DeployISO is the deploy agent's ISO Ironic boots hosts into.
	DeployISO string
	// DeployKernel and DeployRamdisk are the deploy agent's kernel and
	// initramfs Ironic builds that ISO from (Metal3's Ironic image);
	// together, and instead of DeployISO.
	DeployKernel, DeployRamdisk string
	// IronicImageDownloadSource is every node's image_download_source:
	// "http" (the deploy agent downloads the image), "local" (Ironic's
	// conductor does and serves it), or empty for Ironic's setting.
	IronicImageDownloadSource string
	// ProvisionPollInterval is when a step under way (Ironic working) is
	// looked at again.
	ProvisionPollInterval time.Duration
	// IronicStuckTimeout is how long an Ironic node may sit in a
	// transitional state Ironic does not time out (verifying, deploying,
	// a power change, ...) before it is reported and taken out;
	// IronicCallbackTimeout is the Ironic's own callback timeouts, past
	// which (and IronicStuckTimeout more) a node waiting on its agent is.
	// See ironic.Options.
	IronicStuckTimeout, IronicCallbackTimeout time.Duration
	// Controllers are the controllers to run, of Controllers.
	Controllers []string
	// MachineConcurrency is how many Metal3Machines are reconciled at once.
	MachineConcurrency int
	// Conversion is the webhook converting the infrastructure kinds
	// between v1beta1 and v1beta2 (ConversionCRDs); its CRDs field is
	// ConversionCRDs whatever it holds.
	Conversion operatorkit.ConversionWebhook
}

// ConversionCRDs are the CRDs of more than one version whose conversion
// the operator serves.
var ConversionCRDs = infrav1beta2.CRDNames

// Controller names for --controllers.
const (
	BareMetalHostController = "baremetalhost"
	Metal3ClusterController = "metal3cluster"
	Metal3MachineController = "metal3machine"
	Metal3DataController    = "metal3data"
	IPPoolController        = "ippool"
	RemediationController   = "metal3remediation"
)

// Controllers lists every controller the operator can run, in start order.
var Controllers = []string{BareMetalHostController, Metal3ClusterController, Metal3MachineController, Metal3DataController, IPPoolController, RemediationController}

// kindsOf lists the kinds each controller needs served, by group/version.
var kindsOf = map[string]map[string][]string{
	BareMetalHostController: {metal3v1alpha1.GroupVersion.String(): {"BareMetalHost"}},
	Metal3ClusterController: {
		infrav1.GroupVersion.String():   {"Metal3Cluster", "Metal3Machine"},
		clusterv1.GroupVersion.String(): {"Cluster"},
	},
	Metal3MachineController: {
		infrav1.GroupVersion.String():        {"Metal3Machine", "Metal3MachineTemplate", "Metal3Cluster", "Metal3DataClaim", "Metal3Data"},
		clusterv1.GroupVersion.String():      {"Cluster", "Machine"},
		metal3v1alpha1.GroupVersion.String(): {"BareMetalHost"},
	},
	Metal3DataController: {
		infrav1.GroupVersion.String():        {"Metal3DataTemplate", "Metal3DataClaim", "Metal3Data", "Metal3Machine"},
		ipamv1.GroupVersion.String():         {"IPClaim", "IPAddress"},
		clusterv1.GroupVersion.String():      {"Cluster", "Machine"},
		metal3v1alpha1.GroupVersion.String(): {"BareMetalHost"},
	},
	IPPoolController: {
		ipamv1.GroupVersion.String():    {"IPPool", "IPClaim", "IPAddress"},
		clusterv1.GroupVersion.String(): {"Cluster"},
	},
	RemediationController: {
		infrav1.GroupVersion.String():        {"Metal3Remediation", "Metal3Machine"},
		clusterv1.GroupVersion.String():      {"Machine"},
		metal3v1alpha1.GroupVersion.String(): {"BareMetalHost"},
	},
}

// DefaultOptions are the flag defaults.
//
// The client rate is above operatorkit's: a host takes about five status
// writes from created to available, so at 100 requests/s 1,000 hosts need
// 50 s whatever the concurrency; at 300 (make bench, bench/metal3) they
// need 16 s.
func DefaultOptions() Options {
	o := Options{Options: operatorkit.Defaults(), Concurrency: 20, PowerPollInterval: baremetalhost.DefaultPowerPollInterval, BMCTimeout: 30 * time.Second,
		Controllers: slices.Clone(Controllers), MachineConcurrency: 20, ProvisionPollInterval: baremetalhost.DefaultProvisionPollInterval,
		IronicStuckTimeout: ironic.DefaultStuckTimeout, IronicCallbackTimeout: ironic.DefaultCallbackTimeout,
		Conversion: operatorkit.ConversionWebhook{Addr: "0"}}
	o.QPS, o.Burst = 300, 600
	return o
}

// BindFlags registers the options as flags on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	o.Options.BindFlags(fs)
	fs.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "BareMetalHosts reconciled at once; also the most connections to one BMC endpoint")
	fs.DurationVar(&o.PowerPollInterval, "power-poll-interval", o.PowerPollInterval, "how often a settled host's power state is read from its BMC again")
	fs.DurationVar(&o.BMCTimeout, "bmc-timeout", o.BMCTimeout, "timeout of each request to a BMC")
	fs.Func("controllers", "comma-separated controllers to run, of "+strings.Join(Controllers, ", ")+" (default all)", func(v string) error {
		o.Controllers = nil
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" {
				o.Controllers = append(o.Controllers, c)
			}
		}
		return nil
	})
	fs.IntVar(&o.MachineConcurrency, "machine-concurrency", o.MachineConcurrency, "Metal3Machines reconciled at once")
	o.Conversion.BindFlags(fs)
	fs.StringVar(&o.IronicEndpoint, "ironic-endpoint", o.IronicEndpoint, "Ironic API URL the BareMetalHost controller drives (empty: the hosts' BMCs directly over Redfish)")
	fs.StringVar(&o.IronicCredentialsFile, "ironic-credentials-file", o.IronicCredentialsFile, "YAML file (mode 0600, or 0640 as a Secret volume with the pod's fsGroup) with Ironic's http_basic username and password (empty: noauth, loopback endpoints only)")
	fs.StringVar(&o.IronicCAFile, "ironic-ca-file", o.IronicCAFile, "PEM bundle verifying an https --ironic-endpoint")
	fs.StringVar(&o.DeployISO, "deploy-iso", o.DeployISO, "URL of the deploy agent's ISO Ironic boots hosts into")
	fs.StringVar(&o.DeployKernel, "deploy-kernel", o.DeployKernel, "URL of the deploy agent's kernel, from which (with --deploy-ramdisk) Ironic builds the ISO hosts boot into")
	fs.StringVar(&o.DeployRamdisk, "deploy-ramdisk", o.DeployRamdisk, "URL of the deploy agent's initramfs (with --deploy-kernel)")
	fs.StringVar(&o.IronicImageDownloadSource, "ironic-image-download-source", o.IronicImageDownloadSource, "who downloads images for Ironic: http (the deploy agent) or local (the conductor); empty keeps Ironic's setting")
	fs.DurationVar(&o.ProvisionPollInterval, "provision-poll-interval", o.ProvisionPollInterval, "how often a host whose provisioning step is under way (Ironic working) is looked at again")
	fs.DurationVar(&o.IronicStuckTimeout, "ironic-stuck-timeout", o.IronicStuckTimeout, "how long an Ironic node may sit in verifying, inspecting, cleaning, deploying, deleting, adopting or a power change (unlocked) before it is reported stuck and taken out; negative: never")
	fs.DurationVar(&o.IronicCallbackTimeout, "ironic-callback-timeout", o.IronicCallbackTimeout, "Ironic's [conductor] clean_callback_timeout, deploy_callback_timeout and inspect_wait_timeout: a node in clean wait, wait call-back or inspect wait is taken out only past it and --ironic-stuck-timeout more; negative: left to Ironic alone")
}

// runs reports whether the options select controller c.
func (o Options) runs(c string) bool { return slices.Contains(o.Controllers, c) }

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if o.Concurrency < 1 {
		return fmt.Errorf("--concurrency must be at least 1, got %d", o.Concurrency)
	}
	if o.PowerPollInterval <= 0 {
		return fmt.Errorf("--power-poll-interval must be positive, got %s", o.PowerPollInterval)
	}
	if o.BMCTimeout <= 0 {
		return fmt.Errorf("--bmc-timeout must be positive, got %s", o.BMCTimeout)
	}
	if o.ProvisionPollInterval <= 0 {
		return fmt.Errorf("--provision-poll-interval must be positive, got %s", o.ProvisionPollInterval)
	}
	if err := o.validateIronic(); err != nil {
		return err
	}
	if o.MachineConcurrency < 1 {
		return fmt.Errorf("--machine-concurrency must be at least 1, got %d", o.MachineConcurrency)
	}
	if len(o.Controllers) == 0 {
		return fmt.Errorf("--controllers names no controller; choose of %s", strings.Join(Controllers, ", "))
	}
	for _, c := range o.Controllers {
		if !slices.Contains(Controllers, c) {
			return fmt.Errorf("--controllers: unknown controller %q; choose of %s", c, strings.Join(Controllers, ", "))
		}
	}
	return o.Options.Validate()
}

// addToScheme add the kinds the operator reads and writes besides
// client-go's.
var addToScheme = []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme, infrav1.AddToScheme, infrav1beta2.AddToScheme, ipamv1.AddToScheme, clusterv1.AddToScheme}

// Scheme returns the kinds the operator reads and writes.
func Scheme() (*runtime.Scheme, error) { return operatorkit.NewScheme(addToScheme...) }

// Leader election holds its Lease in the operator's namespace: client-go's
// LeaseLock only gets, creates and updates it.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=metal3-system,resources=leases,verbs=get;create;update
// Leader election (client-go's resourcelock, through controller-runtime's
// deprecated recorder) records core/v1 Events on the Lease, in the Lease's
// namespace; the controllers' own Events are events.k8s.io.
// +kubebuilder:rbac:groups="",namespace=metal3-system,resources=events,verbs=create;patch
// The conversion webhook sets the spec.conversion of the operator's CRDs
// of two versions, and keeps its certificate in a Secret of its namespace.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch;update,resourceNames=metal3clusters.infrastructure.cluster.x-k8s.io;metal3clustertemplates.infrastructure.cluster.x-k8s.io;metal3datas.infrastructure.cluster.x-k8s.io;metal3dataclaims.infrastructure.cluster.x-k8s.io;metal3datatemplates.infrastructure.cluster.x-k8s.io;metal3machines.infrastructure.cluster.x-k8s.io;metal3machinetemplates.infrastructure.cluster.x-k8s.io;metal3remediations.infrastructure.cluster.x-k8s.io;metal3remediationtemplates.infrastructure.cluster.x-k8s.io
// +kubebuilder:rbac:groups="",namespace=metal3-system,resources=secrets,verbs=get;create;update

// operator is the Metal3 operator process of o: each selected controller
// starts once the CRDs of the kinds it needs are served, whatever the
// others wait for (a site of BareMetalHosts alone has no Cluster API).
func (o Options) operator() operatorkit.Operator {
	var cs []operatorkit.Controller
	for _, c := range Controllers {
		if o.runs(c) {
			cs = append(cs, operatorkit.Controller{Name: c, Kinds: requiredKinds(c), Reconcilers: func(mgr ctrl.Manager, _ logr.Logger) []operatorkit.Reconciler {
				return []operatorkit.Reconciler{o.reconciler(c, mgr)}
			}})
		}
	}
	conv := o.Conversion
	conv.CRDs = ConversionCRDs
	return operatorkit.Operator{
		Conversion:       conv,
		Name:             "metal3-operator",
		LeaderElectionID: LeaderElectionID,
		Options:          o.Options,
		Validate:         o.Validate,
		AddToScheme:      addToScheme,
		Controllers:      cs,
		LogValues:        []any{"controllers", o.Controllers, "concurrency", o.Concurrency, "provisioner", o.provisionerName()},
	}
}

// reconciler is controller c of Controllers on mgr.
func (o Options) reconciler(c string, mgr ctrl.Manager) operatorkit.Reconciler {
	switch c {
	case BareMetalHostController:
		factory, err := o.provisionerFactory()
		if err != nil {
			// Reported when the manager sets the controller up.
			return operatorkit.SetupFunc(func(context.Context, ctrl.Manager) error { return err })
		}
		return &baremetalhost.BareMetalHostReconciler{
			Client:                mgr.GetClient(),
			Factory:               factory,
			Recorder:              mgr.GetEventRecorder("metal3-operator"),
			PowerPollInterval:     o.PowerPollInterval,
			ProvisionPollInterval: o.ProvisionPollInterval,
			Concurrency:           o.Concurrency,
		}
	case Metal3ClusterController:
		return &capm3.ClusterReconciler{Client: mgr.GetClient()}
	case Metal3MachineController:
		return &capm3.MachineReconciler{
			Client:      mgr.GetClient(),
			Recorder:    mgr.GetEventRecorder("metal3-operator"),
			Concurrency: o.MachineConcurrency,
		}
	case Metal3DataController:
		return operatorkit.SetupFunc(func(ctx context.Context, mgr ctrl.Manager) error {
			return data.SetupWithManager(ctx, mgr, data.Options{Concurrency: o.MachineConcurrency})
		})
	case IPPoolController:
		return operatorkit.SetupFunc(func(ctx context.Context, mgr ctrl.Manager) error {
			return ipam.SetupWithManager(ctx, mgr, ipam.Options{Concurrency: 4})
		})
	case RemediationController:
		return &capm3.RemediationReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("metal3-operator")}
	}
	return operatorkit.SetupFunc(func(context.Context, ctrl.Manager) error { return fmt.Errorf("unknown controller %q", c) })
}

// NewManager builds the manager with the selected controllers.
func NewManager(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) (ctrl.Manager, error) {
	return o.operator().NewManager(ctx, cfg, log)
}

// Run starts the operator and blocks until ctx is done; each controller
// starts once the CRDs of the kinds it needs are served.
func Run(ctx context.Context, cfg *rest.Config, o Options, log logr.Logger) error {
	return o.operator().Run(ctx, cfg, log)
}

// redfishOptions are the Redfish provisioner's settings. The connections
// to one BMC endpoint are bounded by --concurrency, not by a small fixed
// number: a BMC of one system is only ever worked on by one reconcile at a
// time (the controller never reconciles a host twice at once, and a
// reconcile's requests go one after the other), so it sees one connection
// whatever the bound; the bound matters only for an endpoint that serves
// several systems (the emulator, sushy-tools, a chassis manager), where a
// fixed 2 made every host wait on the same 2 connections. --concurrency
// bounds the requests in flight overall in any case. BMC requests go
// through the proxy of the operator's environment (HTTPS_PROXY, NO_PROXY),
// as upstream's do.
func redfishOptions(o Options) redfish.Options {
	return redfish.Options{HTTPTimeout: o.BMCTimeout, MaxConnsPerHost: o.Concurrency, Proxy: httplimit.ProxyFromEnvironment()}
}

// requiredKinds are the kinds controller c needs, by group version, in a
// stable order.
func requiredKinds(c string) []operatorkit.GroupKinds {
	byGV := kindsOf[c]
	out := make([]operatorkit.GroupKinds, 0, len(byGV))
	for _, gv := range slices.Sorted(maps.Keys(byGV)) {
		out = append(out, operatorkit.GroupKinds{GroupVersion: gv, Kinds: byGV[gv]})
	}
	return out
}

// validateIronic checks the Ironic flags: they need --ironic-endpoint, an
// http(s) URL with a host and no credentials in it; without a credentials
// file (noauth) the endpoint must be a loopback address.
func (o Options) validateIronic() error {
	if o.IronicEndpoint == "" {
		for flag, v := range map[string]string{"--ironic-credentials-file": o.IronicCredentialsFile, "--ironic-ca-file": o.IronicCAFile, "--deploy-iso": o.DeployISO, "--deploy-kernel": o.DeployKernel, "--deploy-ramdisk": o.DeployRamdisk, "--ironic-image-download-source": o.IronicImageDownloadSource} {
			if v != "" {
				return fmt.Errorf("%s needs --ironic-endpoint", flag)
			}
		}
		return nil
	}
	u, err := url.Parse(o.IronicEndpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return errors.New("--ironic-endpoint must be an http(s) URL with a host")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("--ironic-endpoint must not hold user information, a query or a fragment (credentials go in --ironic-credentials-file)")
	}
	if o.IronicCredentialsFile == "" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("--ironic-endpoint %s is not a loopback address: give --ironic-credentials-file (noauth is only allowed on loopback)", u.Redacted())
	}
	switch o.IronicImageDownloadSource {
	case "", "http", "local":
	default:
		return fmt.Errorf("--ironic-image-download-source must be http or local, got %q", o.IronicImageDownloadSource)
	}
	if (o.DeployKernel == "") != (o.DeployRamdisk == "") {
		return errors.New("--deploy-kernel and --deploy-ramdisk go together")
	}
	if o.DeployISO != "" && o.DeployKernel != "" {
		return errors.New("--deploy-iso excludes --deploy-kernel and --deploy-ramdisk")
	}
	for flag, v := range map[string]string{"--deploy-iso": o.DeployISO, "--deploy-kernel": o.DeployKernel, "--deploy-ramdisk": o.DeployRamdisk} {
		if v == "" {
			continue
		}
		if d, err := url.Parse(v); err != nil || d.Host == "" || (d.Scheme != "http" && d.Scheme != "https") {
			return fmt.Errorf("%s must be an http(s) URL with a host", flag)
		}
	}
	return nil
}

// isLoopback reports whether host is localhost or a loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// provisionerName names the BareMetalHost controller's provisioner in the
// start line.
func (o Options) provisionerName() string {
	switch {
	case o.Factory != nil:
		return "given"
	case o.IronicEndpoint != "":
		return "ironic"
	}
	return "direct"
}

// provisionerFactory is the BareMetalHost controller's lifecycle Factory:
// o.Factory when given; Ironic's at --ironic-endpoint (its http_basic
// credentials read from --ironic-credentials-file); else the direct one
// over the hosts' BMCs (Redfish).
func (o Options) provisionerFactory() (provisioner.Factory, error) {
	switch {
	case o.Factory != nil:
		return o.Factory, nil
	case o.IronicEndpoint == "":
		return direct.New(redfish.New(redfishOptions(o))), nil
	}
	io := ironic.Options{Endpoint: o.IronicEndpoint, CAFile: o.IronicCAFile, DeployISO: o.DeployISO, DeployKernel: o.DeployKernel, DeployRamdisk: o.DeployRamdisk, ImageDownloadSource: o.IronicImageDownloadSource, PollInterval: o.ProvisionPollInterval,
		StuckTimeout: o.IronicStuckTimeout, CallbackTimeout: o.IronicCallbackTimeout,
		// NIC names and addresses, disks and firmware, which Ironic's redfish inspection leaves out.
		BMCs: redfish.New(redfishOptions(o))}
	if o.IronicCredentialsFile != "" {
		auth, err := ironic.ReadBasicAuthFile(o.IronicCredentialsFile)
		if err != nil {
			return nil, fmt.Errorf("--ironic-credentials-file: %w", err)
		}
		io.Auth = auth
	}
	f, err := ironic.New(io)
	if err != nil {
		return nil, fmt.Errorf("--ironic-endpoint: %w", err)
	}
	return f, nil
}
