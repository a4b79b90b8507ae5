package root

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/armadacmd"
	baremetalcmd "github.com/airshipit/airship-go/internal/cli/baremetal"
	clusterlocal "github.com/airshipit/airship-go/internal/cli/cluster/local"
	clustersite "github.com/airshipit/airship-go/internal/cli/cluster/site"
	"github.com/airshipit/airship-go/internal/cli/configcmd"
	"github.com/airshipit/airship-go/internal/cli/dashboardcmd"
	"github.com/airshipit/airship-go/internal/cli/documentcmd"
	"github.com/airshipit/airship-go/internal/cli/ironiccmd"
	"github.com/airshipit/airship-go/internal/cli/phasecmd"
	plancmd "github.com/airshipit/airship-go/internal/cli/plan"
	secretcmd "github.com/airshipit/airship-go/internal/cli/secret"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	versioncmd "github.com/airshipit/airship-go/internal/cli/version"
)

// NewCmd returns the airshipctl root command.
func NewCmd(streams cli.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:           "airshipctl",
		Short:         "Declarative lifecycle of Kubernetes sites on bare metal",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)

	g := &siteflags.Options{}
	g.AddFlags(root.PersistentFlags())

	clusterCmd := &cobra.Command{Use: "cluster", Short: "Manage clusters"}
	clusterCmd.AddCommand(clusterlocal.NewCmd(streams))
	clusterCmd.AddCommand(clustersite.NewCmds(streams, g)...)
	root.AddCommand(clusterCmd,
		configcmd.NewCmd(streams, g),
		dashboardcmd.NewCmd(streams, g),
		documentcmd.NewCmd(streams, g),
		ironiccmd.NewCmd(streams),
		phasecmd.NewCmd(streams, g),
		plancmd.NewCmd(streams, g),
		secretcmd.NewCmd(streams, nil),
		armadacmd.NewCmd(streams),
		baremetalcmd.NewCmd(streams, g, nil),
		versioncmd.NewCmd(streams, "airshipctl"),
	)
	return root
}

// Main runs airshipctl with args and returns the process exit code.
func Main(ctx context.Context, args []string, streams cli.IOStreams) int {
	return cli.Run(ctx, NewCmd(streams), args, streams)
}
