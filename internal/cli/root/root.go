package root

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	armadacmd "github.com/airshipit/airship-go/internal/cli/armada"
	clusterlocal "github.com/airshipit/airship-go/internal/cli/cluster/local"
	clustersite "github.com/airshipit/airship-go/internal/cli/cluster/site"
	configcmd "github.com/airshipit/airship-go/internal/cli/config"
	phasecmd "github.com/airshipit/airship-go/internal/cli/phase"
	plancmd "github.com/airshipit/airship-go/internal/cli/plan"
	"github.com/airshipit/airship-go/internal/cli/sitecmd"
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

	g := &sitecmd.Options{}
	g.AddFlags(root.PersistentFlags())

	clusterCmd := &cobra.Command{Use: "cluster", Short: "Manage clusters"}
	clusterCmd.AddCommand(clusterlocal.NewCmd(streams))
	clusterCmd.AddCommand(clustersite.NewCmds(streams, g)...)
	root.AddCommand(clusterCmd,
		configcmd.NewCmd(streams, g),
		phasecmd.NewCmd(streams, g),
		plancmd.NewCmd(streams, g),
		armadacmd.NewCmd(streams),
	)
	return root
}

// Main runs airshipctl with args and returns the process exit code. Errors
// are printed here, once.
func Main(ctx context.Context, args []string, streams cli.IOStreams) int {
	cmd := NewCmd(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "Error: %v\n", err)
	}
	return cli.ExitCode(err)
}
