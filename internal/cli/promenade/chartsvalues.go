package promenade

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/promenade/anchor"
	"github.com/airshipit/airship-go/internal/promenade/charts"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

type chartsValuesOptions struct {
	outDir   string
	armada   bool
	docs     bool
	embed    bool
	manifest charts.ManifestOptions
}

func newChartsValuesCmd(streams cli.IOStreams) *cobra.Command {
	var o chartsValuesOptions
	cmd := &cobra.Command{
		Use:   "charts-values [--output-dir DIR] [--armada [--charts-dir DIR]] CONFIG.yaml...",
		Short: "Render the values of the core-component charts (charts/promenade) or the ArmadaManifest that deploys them",
		Example: `  # One values file per chart (helm install -f DIR/<chart>.yaml)
  promenade charts-values --output-dir out/values site/promenade/*.yaml out/certificates.yaml

  # The ArmadaManifest, its groups and charts, with the values embedded
  promenade charts-values --armada --charts-dir /opt/charts/promenade site/promenade/*.yaml out/certificates.yaml | kubectl apply -f -

  # The same as Armada v2 documents, for genesis.sh's bootstrap Armada (Genesis armada.target_manifest)
  promenade charts-values --armada --armada-documents --manifest-name cluster-bootstrap -n kube-system \
    site/promenade/*.yaml out/certificates.yaml > site/promenade/armada.yaml`,
		Long: `Renders the values of every chart under charts/promenade from the configuration
documents, which must include the generated certificates (promenade
generate-certs). The anchor charts' values are the objects build-all writes
to anchors.yaml. Without --output-dir the values go to standard output as one
YAML map keyed by chart name; with --armada the output is the ArmadaManifest,
ArmadaChartGroups and ArmadaCharts (armada.airshipit.org/v1alpha1) that
deploy the charts in order, each chart's values in a Secret
<manifest>-<chart>-values it reads through spec.valuesFrom (--embed-values
puts them in spec.values instead); with --armada-documents, as Armada's own
v2 documents with the values embedded, which build-all reads for genesis's
bootstrap Armada. The output carries private keys: files are written with
mode 0600.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runChartsValues(streams, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.outDir, "output-dir", "d", "", "write <chart>.yaml per chart (or armada.yaml with --armada) into this directory")
	f.BoolVar(&o.armada, "armada", false, "render the ArmadaManifest, groups and charts with the values embedded")
	f.BoolVar(&o.docs, "armada-documents", false, "with --armada: write Armada's v2 documents (armada/Manifest/v2, ...) instead of armada.airshipit.org objects, e.g. for genesis's armada.target_manifest")
	f.BoolVar(&o.embed, "embed-values", false, "with --armada: each chart's values in its spec.values rather than in a Secret it reads them from (anyone who may read ArmadaCharts then reads the private keys)")
	f.StringVar(&o.manifest.Name, "manifest-name", "promenade", "with --armada: name of the ArmadaManifest")
	f.StringVar(&o.manifest.ChartsDir, "charts-dir", charts.Dir, "with --armada: the directory holding the charts, as the Armada operator sees it")
	f.StringVarP(&o.manifest.Namespace, "namespace", "n", "default", "with --armada: namespace of the Armada objects")
	f.StringVar(&o.manifest.ReleasePrefix, "release-prefix", "promenade", "with --armada: the manifest's release prefix")
	f.Int64Var(&o.manifest.Timeout, "wait-timeout", 600, "with --armada: seconds each chart waits for its workload")
	return cmd
}

func runChartsValues(streams cli.IOStreams, o chartsValuesOptions, args []string) error {
	set, err := docset.Load(args...)
	if err != nil {
		return err
	}
	vals, err := charts.Values(set)
	if err != nil {
		return fmt.Errorf("charts values: %w", err)
	}
	if (o.docs || o.embed) && !o.armada {
		return fmt.Errorf("--armada-documents and --embed-values need --armada")
	}
	if o.armada {
		// Armada's documents have no valuesFrom.
		o.manifest.ValuesSecrets = !o.docs && !o.embed
		objs, err := charts.Manifest(vals, o.manifest)
		if err != nil {
			return fmt.Errorf("armada manifest: %w", err)
		}
		var out []byte
		if o.docs {
			out, err = charts.Documents(objs)
		} else {
			out, err = anchor.YAML(objs)
		}
		if err != nil {
			return fmt.Errorf("armada manifest: %w", err)
		}
		return emit(streams, o.outDir, "armada.yaml", out)
	}
	if o.outDir == "" {
		out, err := yaml.Marshal(vals)
		if err != nil {
			return fmt.Errorf("charts values: %w", err)
		}
		_, err = streams.Out.Write(out)
		return err
	}
	names := make([]string, 0, len(vals))
	for n := range vals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out, err := yaml.Marshal(vals[n])
		if err != nil {
			return fmt.Errorf("values of chart %s: %w", n, err)
		}
		if err := emit(streams, o.outDir, n+".yaml", out); err != nil {
			return err
		}
	}
	return nil
}

func emit(streams cli.IOStreams, dir, name string, data []byte) error {
	if dir == "" {
		_, err := streams.Out.Write(data)
		return err
	}
	path := filepath.Join(dir, name)
	if err := fileutil.WriteAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	fmt.Fprintf(streams.Out, "wrote %s\n", strings.TrimPrefix(path, "./"))
	return nil
}
