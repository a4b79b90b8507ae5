package version

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/buildinfo"
	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
)

// NewCmd returns the version command of the named binary.
func NewCmd(streams cli.IOStreams, binary string) *cobra.Command {
	format := output.Table
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of " + binary + " and of the libraries it was built with",
		Example: fmt.Sprintf(`  %[1]s version
  %[1]s version -o json`, binary),
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			info := buildinfo.Get(binary)
			return output.Print(streams.Out, format, info, func(tw *tabwriter.Writer) {
				rev := info.Revision
				if info.Modified {
					rev += " (modified)"
				}
				output.Row(tw, binary+":", info.Version)
				if rev != "" {
					output.Row(tw, "revision:", rev)
				}
				output.Row(tw, "go:", info.GoVersion+" "+info.Platform)
				for _, m := range buildinfo.Modules {
					if v, ok := info.Modules[m.Name]; ok {
						output.Row(tw, m.Name+":", v)
					}
				}
			})
		},
	}
	output.AddFlag(cmd, &format)
	return cmd
}
