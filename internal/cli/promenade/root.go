package promenade

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	versioncmd "github.com/airshipit/airship-go/internal/cli/version"
)

// NewCmd returns the promenade root command.
func NewCmd(streams cli.IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:           "promenade",
		Short:         "Site PKI, genesis and join scripts from Promenade configuration documents",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.AddCommand(newGenerateCertsCmd(streams), newValidateCmd(streams), newBuildAllCmd(streams), newChartsValuesCmd(streams), newServeCmd(streams), versioncmd.NewCmd(streams, "promenade"))
	return root
}

// Main runs promenade with args and returns the exit code.
func Main(ctx context.Context, args []string, streams cli.IOStreams) int {
	return cli.Run(ctx, NewCmd(streams), args, streams)
}
