package promenade

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/promenade/anchor"
	"github.com/airshipit/airship-go/internal/promenade/builder"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

func newBuildAllCmd(streams cli.IOStreams) *cobra.Command {
	var (
		outDir string
		opts   builder.Options
	)
	cmd := &cobra.Command{
		Use:   "build-all --output-dir DIR [--validators] [--leave-kubectl] CONFIG.yaml...",
		Short: "Render genesis.sh, join-<node>.sh, remove-<node>.sh, anchors.yaml and (with --validators) validate-*.sh into DIR",
		Example: `  # Genesis and join scripts for every node, with the validation scripts
  promenade build-all --output-dir out/scripts --validators site/promenade/*.yaml out/certificates.yaml`,
		Long: `Renders self-contained node scripts from the configuration documents, which
must include the generated certificates (promenade generate-certs). Scripts are
written with mode 0700 because they embed private keys. Nothing is written
unless every script renders.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outDir == "" {
				return fmt.Errorf("--output-dir (-o) is required")
			}
			set, err := docset.Load(args...)
			if err != nil {
				return err
			}
			b, err := builder.New(set, opts)
			if err != nil {
				return err
			}
			scripts, err := b.BuildAll()
			if err != nil {
				return err
			}
			objs, err := anchor.Objects(set)
			if err != nil {
				return err
			}
			anchors, err := anchor.YAML(objs)
			if err != nil {
				return err
			}
			if err := builder.WriteScripts(outDir, scripts); err != nil {
				return err
			}
			// The anchors carry private keys in Secrets: 0600.
			if err := fileutil.WriteAtomic(filepath.Join(outDir, "anchors.yaml"), anchors, 0o600); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "wrote %s/anchors.yaml\n", outDir)
			for _, s := range scripts {
				fmt.Fprintf(streams.Out, "wrote %s/%s\n", outDir, s.Name)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&outDir, "output-dir", "", "directory to write the scripts into")
	f.BoolVar(&opts.Validators, "validators", false, "also render validate-genesis.sh, validate-<node>.sh and validate-cluster.sh")
	f.BoolVar(&opts.LeaveKubectl, "leave-kubectl", false, "keep kubectl and the admin kubeconfig on joined nodes")
	return cmd
}
