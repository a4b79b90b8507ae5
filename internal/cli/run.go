package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// ExitUsage is the exit code for a command line that cannot be parsed (an
// unknown flag, a bad flag value), as Go's flag package and most Unix tools use.
const ExitUsage = 2

// Run executes the root command cmd with args and returns the process exit
// code. The error is printed once, here. A flag error also prints the usage
// of the command it belongs to and exits ExitUsage; --help exits 0.
func Run(ctx context.Context, cmd *cobra.Command, args []string, streams IOStreams) int {
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		fmt.Fprint(streams.ErrOut, c.UsageString())
		return &ExitError{Code: ExitUsage, Err: err}
	})
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintf(streams.ErrOut, "Error: %v\n", err)
	}
	return ExitCode(err)
}
