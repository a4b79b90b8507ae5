package armadaoperator

import (
	"context"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/airshipit/airship-go/internal/armada/operator"
	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/operatorcmd"
)

// Options are the command's flags and what it runs.
type Options struct {
	Operator operator.Options
	// run starts the operator; tests replace it.
	run func(ctx context.Context, cfg *rest.Config, o operator.Options, log logr.Logger) error
}

// NewCmd returns the armada-operator root command.
func NewCmd(streams cli.IOStreams) *cobra.Command {
	o := &Options{Operator: operator.DefaultOptions(), run: operator.Run}
	return newCmd(streams, o)
}

func newCmd(streams cli.IOStreams, o *Options) *cobra.Command {
	return operatorcmd.New(streams, operatorcmd.Spec{
		Name:  "armada-operator",
		Short: "Install the Helm charts that ArmadaChart, ArmadaChartGroup and ArmadaManifest objects describe, in order, and keep them in their target state",
		Example: `  # In a pod: in-cluster configuration, leader election in the pod's namespace
  armada-operator --leader-elect --metrics-bind-address=:8080 --health-probe-bind-address=:8081

  # Out of a cluster, charts on disk below ./site
  armada-operator --kubeconfig ~/.airship/local/kubeconfig --chart-root ./site`,
		Bind:   o.Operator.BindFlags,
		Common: &o.Operator.Options,
		// A closure: a method value would copy the options before the flags are parsed.
		Validate: func() error { return o.Operator.Validate() },
		Run: func(ctx context.Context, cfg *rest.Config, log logr.Logger) error {
			return o.run(ctx, cfg, o.Operator, log)
		},
	})
}

// Main runs armada-operator with args and returns the process exit code.
func Main(ctx context.Context, args []string, streams cli.IOStreams) int {
	return cli.Run(ctx, NewCmd(streams), args, streams)
}
