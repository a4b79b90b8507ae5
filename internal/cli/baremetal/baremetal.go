package baremetal

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/config"
	"github.com/airshipit/airship-go/internal/hostops"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// DefaultFactory reaches, over Redfish, BMCs when NewCmd is given none, as
// the airship config's managementConfiguration mc says (nil: directly,
// certificates verified).
var DefaultFactory = hostops.NewFactory

// StatusTimeout is the --timeout default of listhosts and powerstatus.
const StatusTimeout = time.Minute

// access is how the commands reach the cluster.
type access struct {
	g       *siteflags.Options
	cluster string
	context string
}

// restConfig reaches the cluster: --cluster through the site's resolver,
// else the user's kubeconfig with --context or its current context.
func (a *access) restConfig(ctx context.Context) (*rest.Config, error) {
	if a.cluster != "" {
		site, err := a.g.Site()
		if err != nil {
			return nil, err
		}
		r, err := site.Kubeconfigs()
		if err != nil {
			return nil, err
		}
		kc, err := r.Get(ctx, kubeconfig.Request{Cluster: a.cluster, Context: a.context})
		if err != nil {
			return nil, err
		}
		return kubeconfig.RESTConfig(kc)
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = a.g.Kubeconfig
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: a.context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reaching the cluster (name a cluster of the site with --cluster, or a kubeconfig with --kubeconfig): %w", err)
	}
	return rc, nil
}

// management is the current context's managementConfiguration of the
// airship config: how BMCs are reached. Without an airship config (the
// hosts found through a kubeconfig alone) it is nil: no proxy,
// certificates verified.
func (a *access) management() (*v1.ManagementConfiguration, error) {
	cfg, err := a.g.Config()
	if errors.Is(err, config.ErrNotFound) && a.cluster == "" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return cfg.Management("")
}

func (a *access) client(ctx context.Context) (client.Client, error) {
	rc, err := a.restConfig(ctx)
	if err != nil {
		return nil, err
	}
	return hostops.NewClient(rc)
}

// NewCmd returns `baremetal`. BMCs are reached through f; nil means DefaultFactory.
func NewCmd(streams cli.IOStreams, g *siteflags.Options, f provisioner.BMCFactory) *cobra.Command {
	a := &access{g: g}
	factory := func() (provisioner.BMCFactory, error) {
		if f == nil {
			mc, err := a.management()
			if err != nil {
				return nil, err
			}
			f = DefaultFactory(mc)
		}
		if f == nil {
			return nil, errors.New("no BMC provisioner in this build")
		}
		return f, nil
	}
	cmd := &cobra.Command{
		Use:   "baremetal",
		Short: "Power and boot the BareMetalHosts of a cluster through their BMCs",
		Long: `Power and boot the BareMetalHosts of a cluster through their BMCs.

The hosts are read from a cluster: --cluster names a cluster of the site's ClusterMap (its
kubeconfig found as phases find it); without it, the kubeconfig is --kubeconfig, else
$KUBECONFIG, else ~/.kube/config, at --context or its current context. Each host's BMC
address is its spec.bmc.address and its credentials the username and password of the
Secret spec.bmc.credentialsName names.

BMCs are reached as the current context's managementConfiguration of the airship config
says: directly, unless useproxy is true (then through $HTTPS_PROXY/$HTTP_PROXY, minus
$NO_PROXY), and with their certificates verified, unless insecure is true (or the host's
spec.bmc.disableCertificateVerification). Without an airship config: directly, verified.
Each BMC request times out after 30s and an answer over 4 MiB is an error.

Hosts are picked with --name, -l and -n; without -n, every namespace is searched. The
power and boot commands need --name, -l or --all, act on every picked host at once and
wait until each is in the state asked for (up to --timeout); they exit 1 naming every
host that failed. A host managed by the BareMetalHost controller may be powered back to
its spec.online by it.`,
	}
	cmd.PersistentFlags().StringVar(&a.cluster, "cluster", "", "cluster of the site's ClusterMap holding the hosts")
	cmd.PersistentFlags().StringVar(&a.context, "context", "", "kubeconfig context to use (default: the current one, or the one named after --cluster)")
	_ = cmd.RegisterFlagCompletionFunc("cluster", g.CompleteClusters(true))

	cmd.AddCommand(
		newListHosts(streams, a),
		newPowerStatus(streams, a, factory),
		newOperation(streams, a, factory, opSpec{
			use: "poweron", op: v1.BaremetalOperationPowerOn, short: "Power hosts on and wait until they are on",
			example: `  # Power on one host, searched in every namespace
  airshipctl baremetal poweron --name node-1

  # Power on the hosts of rack r1 in namespace metal3 of the site's target cluster
  airshipctl baremetal poweron -l rack=r1 -n metal3 --cluster target-cluster`,
		}),
		newOperation(streams, a, factory, opSpec{
			use: "poweroff", op: v1.BaremetalOperationPowerOff, graceful: true, short: "Power hosts off and wait until they are off",
			example: `  # Force every host of namespace metal3 off
  airshipctl baremetal poweroff --all -n metal3

  # Ask the OS of one host to shut down, waiting up to 10 minutes
  airshipctl baremetal poweroff --name node-1 --graceful --timeout 10m`,
		}),
		newOperation(streams, a, factory, opSpec{
			use: "reboot", op: v1.BaremetalOperationReboot, graceful: true, short: "Restart hosts (a host that is off is powered on) and wait until they are on",
			example: `  # Restart the hosts labelled role=worker, printing the results as JSON
  airshipctl baremetal reboot -l role=worker -o json`,
		}),
		newOperation(streams, a, factory, opSpec{
			use: "remotedirect", op: v1.BaremetalOperationRemoteDirect, iso: true,
			short: "Boot hosts from an ISO over virtual media and wait until they are on with it inserted",
			example: `  # Boot the ephemeral host from its ISO
  airshipctl baremetal remotedirect --name ephemeral --iso-url http://10.23.24.1:8099/ephemeral.iso`,
		}),
		newOperation(streams, a, factory, opSpec{
			use: "ejectmedia", op: v1.BaremetalOperationEjectVirtualMedia, short: "Eject the virtual media of hosts",
			example: `  # Eject whatever the hosts of rack r2 have inserted
  airshipctl baremetal ejectmedia -l rack=r2`,
		}),
	)
	return cmd
}

// addSelector registers -l, --name and -n.
func addSelector(cmd *cobra.Command, sel *hostops.Selector) {
	fs := cmd.Flags()
	fs.StringVarP(&sel.LabelSelector, "selector", "l", "", "label selector over the hosts' labels (a=b,c!=d, rack in (r1,r2))")
	fs.StringVar(&sel.LabelSelector, "labels", "", "label selector (the upstream name of -l)")
	_ = fs.MarkHidden("labels")
	fs.StringVar(&sel.Name, "name", "", "name of the host")
	fs.StringVarP(&sel.Namespace, "namespace", "n", "", "namespace of the hosts (default: every namespace)")
}

func newListHosts(streams cli.IOStreams, a *access) *cobra.Command {
	var sel hostops.Selector
	var format string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "listhosts",
		Short: "List the BareMetalHosts of the cluster: state, online, powered on, BMC address",
		Long: `List the BareMetalHosts of the cluster with their provisioning state, operational status,
spec.online, status.poweredOn (as the controller last saw it) and BMC address. BMCs are not
contacted: powerstatus asks them. No host picked is an error.`,
		Example: `  # Every host of every namespace
  airshipctl baremetal listhosts

  # The hosts of rack r1 in namespace metal3, as YAML
  airshipctl baremetal listhosts -l rack=r1 -n metal3 -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			c, err := a.client(ctx)
			if err != nil {
				return err
			}
			selected, err := hostops.Select(ctx, c, sel)
			if err != nil {
				return err
			}
			return printHosts(streams.Out, format, selected)
		},
	}
	addSelector(cmd, &sel)
	output.AddFlag(cmd, &format)
	cli.AddTimeoutFlag(cmd.Flags(), &timeout, StatusTimeout, "how long to wait for the cluster")
	return cmd
}

func newPowerStatus(streams cli.IOStreams, a *access, factory func() (provisioner.BMCFactory, error)) *cobra.Command {
	var sel hostops.Selector
	var format string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "powerstatus",
		Short: "Ask each host's BMC for its power state (and virtual CD); exits 1 when a BMC cannot be read",
		Example: `  # Power state of every host
  airshipctl baremetal powerstatus

  # One host of namespace metal3, as JSON
  airshipctl baremetal powerstatus --name node-1 -n metal3 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			f, err := factory()
			if err != nil {
				return err
			}
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			r := &hostops.Runner{Client: c, Factory: f, Timeout: timeout}
			results, err := r.Status(cmd.Context(), sel, nil)
			if err != nil {
				return err
			}
			if err := printResults(streams.Out, format, results); err != nil {
				return err
			}
			return hostops.Failed(results)
		},
	}
	addSelector(cmd, &sel)
	output.AddFlag(cmd, &format)
	cli.AddTimeoutFlag(cmd.Flags(), &timeout, StatusTimeout, "how long to wait for the cluster and the BMCs")
	return cmd
}

// opSpec describes a power or boot command.
type opSpec struct {
	use, short, example string
	op                  v1.BaremetalOperation
	// graceful adds --graceful; iso adds --iso-url.
	graceful, iso bool
}

func newOperation(streams cli.IOStreams, a *access, factory func() (provisioner.BMCFactory, error), s opSpec) *cobra.Command {
	var sel hostops.Selector
	var all bool
	var format string
	req := hostops.Request{Operation: s.op}
	r := &hostops.Runner{}
	cmd := &cobra.Command{
		Use:     s.use,
		Short:   s.short,
		Example: s.example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			picked := sel.Name != "" || sel.LabelSelector != ""
			if picked == all {
				if all {
					return &cli.ExitError{Code: cli.ExitUsage, Err: errors.New("--all and --name or -l exclude each other")}
				}
				return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("%s acts on the hosts --name or -l pick, or every host with --all", s.use)}
			}
			if err := req.Validate(); err != nil {
				return &cli.ExitError{Code: cli.ExitUsage, Err: fmt.Errorf("--iso-url: %w", err)}
			}
			f, err := factory()
			if err != nil {
				return err
			}
			c, err := a.client(cmd.Context())
			if err != nil {
				return err
			}
			r.Client, r.Factory = c, f
			r.Progress = func(p hostops.Progress) { fmt.Fprintf(streams.ErrOut, "[%s] %s\n", p.Host, p.Message) }
			results, runErr := r.Run(cmd.Context(), sel, req)
			if results != nil {
				if err := printResults(streams.Out, format, results); err != nil {
					return err
				}
			}
			return runErr
		},
	}
	addSelector(cmd, &sel)
	cmd.Flags().BoolVar(&all, "all", false, "act on every host (of the -n namespace when given)")
	output.AddFlag(cmd, &format)
	cli.AddTimeoutFlag(cmd.Flags(), &r.Timeout, hostops.DefaultTimeout, "how long to wait for every host to be done")
	cmd.Flags().IntVar(&r.Parallelism, "parallel", hostops.DefaultParallelism, "how many hosts to work on at once")
	if s.graceful {
		cmd.Flags().BoolVar(&req.Graceful, "graceful", false, "ask the host's OS to shut down or restart instead of forcing it")
	}
	if s.iso {
		cmd.Flags().StringVar(&req.ISOURL, "iso-url", "", "URL of the ISO to boot (required)")
		_ = cmd.MarkFlagRequired("iso-url")
	}
	return cmd
}
