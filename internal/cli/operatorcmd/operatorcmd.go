package operatorcmd

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

	"github.com/airshipit/airship-go/internal/cli"
	versioncmd "github.com/airshipit/airship-go/internal/cli/version"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Spec describes one operator binary whose options are an O (the
// operator's Options, which embed operatorkit.Options). Method
// expressions fill it: Bind: (*operator.Options).BindFlags,
// Validate: operator.Options.Validate, Run: operator.Run.
type Spec[O any] struct {
	// Name is the binary's name; Short and Example its help.
	Name, Short, Example string
	// Defaults are the options before the flags are parsed (and the
	// flags' defaults).
	Defaults func() O
	// Bind registers o's flags on fs, the shared operatorkit ones among
	// them.
	Bind func(o *O, fs *flag.FlagSet)
	// Shared points at o's manager options, so the leader election
	// namespace can be filled in.
	Shared func(o *O) *operatorkit.Options
	// Validate checks the options before the cluster is looked for.
	Validate func(o O) error
	// Run runs the operator until ctx ends; tests replace it.
	Run func(ctx context.Context, cfg *rest.Config, o O, log logr.Logger) error
}

// Main runs the operator binary of spec with args and returns the process
// exit code.
func Main[O any](ctx context.Context, args []string, streams cli.IOStreams, spec Spec[O]) int {
	return cli.Run(ctx, New(streams, spec), args, streams)
}

// New returns the operator's root command.
func New[O any](streams cli.IOStreams, spec Spec[O]) *cobra.Command {
	o := spec.Defaults()
	var kubeconfig string
	var zopts zap.Options
	cmd := &cobra.Command{
		Use:     spec.Name,
		Short:   spec.Short,
		Example: spec.Example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := zap.New(zap.UseFlagOptions(&zopts), zap.WriteTo(streams.ErrOut))
			ctrl.SetLogger(log)
			if err := spec.Validate(o); err != nil {
				return err
			}
			cfg, err := RESTConfig(kubeconfig)
			if err != nil {
				return err
			}
			if shared := spec.Shared(&o); shared.LeaderElection && shared.LeaderElectionNamespace == "" {
				ns, err := LeaderElectionNamespace(kubeconfig)
				if err != nil {
					return err
				}
				shared.LeaderElectionNamespace = ns
			}
			return spec.Run(cmd.Context(), cfg, o, log)
		},
	}
	gofs := flag.NewFlagSet(spec.Name, flag.ContinueOnError)
	spec.Bind(&o, gofs)
	zopts.BindFlags(gofs)
	cmd.Flags().AddGoFlagSet(gofs)
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to run against (default: $KUBECONFIG, then the in-cluster configuration, then ~/.kube/config)")
	cmd.AddCommand(versioncmd.NewCmd(streams, spec.Name))
	return cmd
}

// RESTConfig reads the kubeconfig file given, or finds the configuration
// the usual way when none is.
func RESTConfig(path string) (*rest.Config, error) {
	if path == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

// LeaderElectionNamespace is empty in a pod (controller-runtime reads the
// pod's namespace itself), else the namespace of the kubeconfig's current
// context, or default.
func LeaderElectionNamespace(kubeconfig string) (string, error) {
	if kubeconfig == "" {
		if _, err := os.Stat(operatorkit.InClusterNamespaceFile); err == nil {
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
