package output

import (
	"context"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
)

// StatusCmd completes cmd (its Use, Short, Long and Example set) as the
// status command of a service run on this machine, such as `cluster local
// status` and `ironic local status`: no arguments, -o table|yaml|json; it
// reads the status with get, prints it (the table through table) on out
// and, when down returns an error (why the service is not up or not
// healthy), exits 1 with it after printing, so that scripts can test the
// exit code and people still see the status.
func StatusCmd[S any](cmd *cobra.Command, out io.Writer, get func(context.Context) (S, error),
	table func(*tabwriter.Writer, S), down func(S) error,
) *cobra.Command {
	var format string
	cmd.Args = cobra.NoArgs
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := Validate(format); err != nil {
			return err
		}
		st, err := get(cmd.Context())
		if err != nil {
			return err
		}
		if err := Print(out, format, st, func(tw *tabwriter.Writer) { table(tw, st) }); err != nil {
			return err
		}
		if err := down(st); err != nil {
			return &cli.ExitError{Code: 1, Err: err}
		}
		return nil
	}
	AddFlag(cmd, &format)
	return cmd
}
