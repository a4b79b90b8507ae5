package armadacmd

import (
	"errors"
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
	// AllowDangling accepts references to charts and groups outside Files.
	AllowDangling bool
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
enables them in order. "-" reads standard input.

Every armada/ document is decoded strictly: an unknown field, a value of the
wrong type, a missing required field, a duplicate name, values that are not
a map, and a reference (manifest to groups, group to charts, chart to
dependencies) to a document that is not among the files are all problems.
All of them are reported at once, naming the file, the document and the
field, the command exits 1 and prints nothing. --allow-dangling accepts
references outside the files. Fields of older Armada versions that the
objects have no place for (the v1 chart timeout) are dropped with a warning
on stderr.`,
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
	cmd.Flags().BoolVar(&o.AllowDangling, "allow-dangling", false, "accept references (manifest to groups, group to charts, chart to dependencies) to documents not among FILE... (a partial tree)")
	return cmd
}

func runConvert(o *ConvertOptions) error {
	if o.Output != "yaml" && o.Output != "json" {
		return fmt.Errorf("--output must be yaml or json, got %q", o.Output)
	}
	// Every file is read and every problem collected before anything is
	// printed: a user learns all that is wrong at once, and gets no partial
	// output to apply.
	var docs []*convert.Document
	var probs []string
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
				probs = append(probs, oerr.Error())
				continue
			}
			ds, err = convert.Read(name, f)
			_ = f.Close() // only read: closing cannot lose data
		}
		docs = append(docs, ds...)
		var p convert.Problems
		if errors.As(err, &p) {
			probs = append(probs, p...)
		} else if err != nil {
			probs = append(probs, err.Error())
		}
	}
	res, err := convert.Convert(docs, convert.Options{Namespace: o.Namespace, AllowDangling: o.AllowDangling})
	var p convert.Problems
	if errors.As(err, &p) {
		probs = append(probs, p...)
	} else if err != nil {
		probs = append(probs, err.Error())
	}
	if len(probs) > 0 {
		return fmt.Errorf("armada convert: nothing written: %w", convert.Problems(probs))
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
