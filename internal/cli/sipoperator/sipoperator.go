package sipoperator

import (
	"context"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
	"github.com/airshipit/airship-go/internal/sip/operator"
)

// Options are the command's flags and what it runs.
type Options struct {
	Operator operator.Options
	// run starts the operator; tests replace it.
	run func(ctx context.Context, cfg *rest.Config, o operator.Options, log logr.Logger) error
}

// NewCmd returns the sip-operator root command.
func NewCmd(streams cli.IOStreams) *cobra.Command {
	return newCmd(streams, &Options{Operator: operator.DefaultOptions(), run: operator.Run})
}

func newCmd(streams cli.IOStreams, o *Options) *cobra.Command {
	return operatorcmd.New(streams, operatorcmd.Spec{
		Name:  "sip-operator",
		Short: "Pick BareMetalHosts for tenant clusters by role and topology (SIPCluster), label them, and run each cluster's load balancers, jump host and OIDC provider",
		Example: `  # In a pod: in-cluster configuration, leader election in the pod's namespace
  sip-operator --leader-elect --metrics-bind-address=:8080 --health-probe-bind-address=:8081

  # Out of a cluster, against the local control plane
  sip-operator --kubeconfig ~/.airship/local/kubeconfig --metrics-bind-address=0 --health-probe-bind-address=127.0.0.1:8083`,
		Bind:   o.Operator.BindFlags,
		Common: &o.Operator.Options,
		// A closure: a method value would copy the options before the flags are parsed.
		Validate: func() error { return o.Operator.Validate() },
		Run: func(ctx context.Context, cfg *rest.Config, log logr.Logger) error {
			return o.run(ctx, cfg, o.Operator, log)
		},
	})
}

// Main runs sip-operator with args and returns the process exit code.
func Main(ctx context.Context, args []string, streams cli.IOStreams) int {
	return cli.Run(ctx, NewCmd(streams), args, streams)
}
