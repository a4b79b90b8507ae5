package armada

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/armada/convert"
	"github.com/airshipit/airship-go/internal/cli"
)

// NewCmd returns `armada` with its subcommands.
func NewCmd(streams cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "armada",
		Short: "Work with Armada documents and the Armada operator's objects",
	}
	cmd.AddCommand(NewCmdConvert(streams, nil))
	return cmd
}

// ConvertOptions are the flags and dependencies of `convert`.
type ConvertOptions struct {
	Streams   cli.IOStreams
	Files     []string
	Namespace string
	Output    string
}

// NewCmdConvert returns `armada convert`; runF replaces the run step in tests.
func NewCmdConvert(streams cli.IOStreams, runF func(*ConvertOptions) error) *cobra.Command {
	o := &ConvertOptions{Streams: streams}
	cmd := &cobra.Command{
		Use:   "convert FILE...",
		Short: "Print Armada armada/Chart, armada/ChartGroup and armada/Manifest documents as operator objects",
		Example: `  # Convert a site's Armada documents; nothing is written when any is wrong
  airshipctl armada convert site/armada/*.yaml > armada-objects.yaml

  # Into a namespace, as JSON
  airshipctl armada convert -n armada -o json site/armada/manifest.yaml`,
		Long: `Read Armada documents (schema/metadata/data form, v1 or v2) and print the
equivalent ArmadaChart, ArmadaChartGroup and ArmadaManifest objects, ready for
kubectl apply. Documents of other schemas are skipped. Charts of a group and
groups of a manifest get target_state uninitialized, so the group or manifest
enables them in order. Fields the objects have no place for are reported on
stderr. "-" reads standard input.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if runF != nil {
				return runF(o)
			}
			return runConvert(o)
		},
	}
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "metadata.namespace of the printed objects (unset by default)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "yaml", "output format: yaml or json")
	return cmd
}

func runConvert(o *ConvertOptions) error {
	if o.Output != "yaml" && o.Output != "json" {
		return fmt.Errorf("--output must be yaml or json, got %q", o.Output)
	}
	var docs []*convert.Document
	for _, name := range o.Files {
		var (
			ds  []*convert.Document
			err error
		)
		if name == "-" {
			ds, err = convert.Read("<stdin>", o.Streams.In)
		} else {
			f, oerr := os.Open(name)
			if oerr != nil {
				return fmt.Errorf("armada convert: %w", oerr)
			}
			ds, err = convert.Read(name, f)
			f.Close()
		}
		if err != nil {
			return fmt.Errorf("armada convert: %w", err)
		}
		docs = append(docs, ds...)
	}
	res, err := convert.Convert(docs, convert.Options{Namespace: o.Namespace})
	if err != nil {
		return fmt.Errorf("armada convert: %w", err)
	}
	if len(res.Objects) == 0 {
		return fmt.Errorf("armada convert: no armada/Chart, armada/ChartGroup or armada/Manifest document in %v", o.Files)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(o.Streams.ErrOut, "warning:", w)
	}
	out, err := convert.Marshal(res.Objects, o.Output)
	if err != nil {
		return fmt.Errorf("armada convert: %w", err)
	}
	_, err = o.Streams.Out.Write(out)
	return err
}
