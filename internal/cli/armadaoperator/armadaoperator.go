package armadaoperator

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/airshipit/airship-go/internal/armada/operator"
	"github.com/airshipit/airship-go/internal/cli"
	versioncmd "github.com/airshipit/airship-go/internal/cli/version"
)

// inClusterNamespaceFile is where a pod finds its namespace.
var inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Options are the command's flags and what it runs.
type Options struct {
	Operator   operator.Options
	Kubeconfig string
	Zap        zap.Options
	// run starts the operator; tests replace it.
	run func(ctx context.Context, cfg *rest.Config, o operator.Options, log logr.Logger) error
}

// NewCmd returns the armada-operator root command.
func NewCmd(streams cli.IOStreams) *cobra.Command {
	o := &Options{Operator: operator.DefaultOptions(), run: operator.Run}
	return newCmd(streams, o)
}

func newCmd(streams cli.IOStreams, o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "armada-operator",
		Short: "Install the Helm charts that ArmadaChart, ArmadaChartGroup and ArmadaManifest objects describe, in order, and keep them in their target state",
		Example: `  # In a pod: in-cluster configuration, leader election in the pod's namespace
  armada-operator --leader-elect --metrics-bind-address=:8080 --health-probe-bind-address=:8081

  # Out of a cluster, charts on disk below ./site
  armada-operator --kubeconfig ~/.airship/local/kubeconfig --chart-root ./site`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := zap.New(zap.UseFlagOptions(&o.Zap), zap.WriteTo(streams.ErrOut))
			ctrl.SetLogger(log)
			return o.Run(cmd.Context(), log)
		},
	}
	gofs := flag.NewFlagSet("armada-operator", flag.ContinueOnError)
	o.Operator.BindFlags(gofs)
	o.Zap.BindFlags(gofs)
	cmd.Flags().AddGoFlagSet(gofs)
	cmd.Flags().StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to run against (default: $KUBECONFIG, then the in-cluster configuration, then ~/.kube/config)")
	cmd.AddCommand(versioncmd.NewCmd(streams, "armada-operator"))
	return cmd
}

// Run checks the options, finds the cluster and runs the operator until ctx ends.
func (o *Options) Run(ctx context.Context, log logr.Logger) error {
	if err := o.Operator.Validate(); err != nil {
		return err
	}
	cfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	if o.Operator.LeaderElection && o.Operator.LeaderElectionNamespace == "" {
		ns, err := leaderElectionNamespace(o.Kubeconfig)
		if err != nil {
			return err
		}
		o.Operator.LeaderElectionNamespace = ns
	}
	return o.run(ctx, cfg, o.Operator, log)
}

// restConfig reads the kubeconfig file given, or finds the configuration the
// usual way when none is.
func restConfig(path string) (*rest.Config, error) {
	if path == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// leaderElectionNamespace is empty in a pod (controller-runtime reads the
// pod's namespace itself), else the namespace of the kubeconfig's current
// context, or default.
func leaderElectionNamespace(kubeconfig string) (string, error) {
	if kubeconfig == "" {
		if _, err := os.Stat(inClusterNamespaceFile); err == nil {
			return "", nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).Namespace()
	if err != nil {
		return "", fmt.Errorf("namespace for the leader election Lease (set --leader-election-namespace): %w", err)
	}
	return ns, nil
}

// Main runs armada-operator with args and returns the process exit code.
func Main(ctx context.Context, args []string, streams cli.IOStreams) int {
	return cli.Run(ctx, NewCmd(streams), args, streams)
}
