package promenade

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/promenade/certs"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

func newGenerateCertsCmd(streams cli.IOStreams) *cobra.Command {
	var (
		outDir  string
		opts    certs.Options
		keyType string
	)
	cmd := &cobra.Command{
		Use:   "generate-certs --output-dir DIR CONFIG.yaml...",
		Short: "Generate the CAs, certificates and keypairs of the PKICatalog into DIR/certificates.yaml",
		Example: `  # Generate the site's PKI; a second run with certificates.yaml among the inputs reuses it
  promenade generate-certs --output-dir out site/promenade/*.yaml
  promenade generate-certs --output-dir out --key-type rsa-2048 site/promenade/*.yaml out/certificates.yaml`,
		Long: `Reads the configuration documents, and for every CA, certificate and keypair
of the PKICatalog documents either reuses the matching material already in the
input (same CA, CN, groups and hosts, same key type, not expiring within
--renew-before) or generates it. Writes DIR/certificates.yaml (mode 0600) and
the PEM files under DIR/pki (private keys 0600). Nothing is written on error.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outDir == "" {
				return fmt.Errorf("--output-dir (-o) is required")
			}
			opts.KeyType = pki.KeyType(keyType)
			if _, err := pki.NewKey(opts.KeyType); opts.KeyType != pki.ECDSAP256 && err != nil {
				return fmt.Errorf("--key-type: %w", err)
			}
			set, err := docset.Load(args...)
			if err != nil {
				return err
			}
			res, err := certs.Generate(set, opts)
			if err != nil {
				return err
			}
			if err := certs.Write(outDir, res); err != nil {
				return err
			}
			reused, generated := res.Counts()
			for _, a := range res.Actions {
				if !a.Reused {
					fmt.Fprintf(streams.ErrOut, "generated %s %s (%s)\n", a.Kind, a.Name, a.Reason)
				}
			}
			fmt.Fprintf(streams.Out, "wrote %d documents to %s/certificates.yaml: %d generated, %d reused\n",
				len(res.Documents), outDir, generated, reused)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&outDir, "output-dir", "", "directory to write certificates.yaml and pki/ into")
	f.DurationVar(&opts.Validity, "expiry", certs.DefaultValidity, "validity of issued certificates")
	f.DurationVar(&opts.CAValidity, "ca-expiry", certs.DefaultCAValidity, "validity of generated CAs")
	f.DurationVar(&opts.RenewBefore, "renew-before", certs.DefaultRenewBefore, "regenerate material expiring within this window")
	f.StringVar(&keyType, "key-type", string(pki.ECDSAP256), "default key algorithm: ecdsa-p256, rsa-2048 or rsa-4096")
	return cmd
}

func newValidateCmd(streams cli.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:     "validate CONFIG.yaml...",
		Short:   "Validate configuration documents against the shipped JSON schemas",
		Example: `  promenade validate site/promenade/*.yaml out/certificates.yaml`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			set, err := docset.Load(args...)
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "%d documents valid\n", len(set.Documents))
			return nil
		},
	}
}
