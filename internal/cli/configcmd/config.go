package configcmd

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/config"
	"github.com/airshipit/airship-go/internal/redact"
)

// NewCmd returns `airshipctl config`.
func NewCmd(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Read and change the airshipctl configuration file"}
	cmd.AddCommand(
		newInit(streams, g),
		newGetContext(streams, g),
		newSetContext(streams, g),
		newUseContext(streams, g),
		newGetManifest(streams, g),
		newSetManifest(streams, g),
	)
	for _, c := range cmd.Commands() {
		switch c.Name() {
		case "get-context", "set-context", "use-context":
			c.ValidArgsFunction = g.CompleteContexts(false)
		}
	}
	return cmd
}

func newInit(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var overwrite bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a default configuration file (mode 0600)",
		Example: `  airshipctl config init
  airshipctl --airshipconf ./airship-config.yaml config init --overwrite`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			path := g.ConfigPath
			if _, err := os.Stat(path); err == nil && !overwrite {
				return fmt.Errorf("%s already exists: use --overwrite to replace it", path)
			}
			if err := config.NewDefault(path).Save(); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Wrote %s\n", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace an existing file")
	return cmd
}

type contextView struct {
	Name    string      `json:"name"`
	Current bool        `json:"current"`
	Context *v1.Context `json:"context"`
}

func newGetContext(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var current bool
	var format string
	cmd := &cobra.Command{
		Use:   "get-context [NAME]",
		Short: "Show one context, the current one (--current), or all",
		Example: `  airshipctl config get-context
  airshipctl config get-context --current -o yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			var names []string
			switch {
			case len(args) == 1:
				if _, _, err := cfg.Context(args[0]); err != nil {
					return err
				}
				names = args
			case current:
				name, _, err := cfg.Context("")
				if err != nil {
					return err
				}
				names = []string{name}
			default:
				names = sortedKeys(cfg.Contexts)
			}
			views := make([]contextView, 0, len(names))
			for _, n := range names {
				views = append(views, contextView{Name: n, Current: n == cfg.CurrentContext, Context: cfg.Contexts[n]})
			}
			var v any = views
			if len(args) == 1 || current {
				v = views[0]
			}
			return output.Print(streams.Out, format, v, func(tw *tabwriter.Writer) {
				output.Row(tw, "CURRENT", "NAME", "MANIFEST", "MANAGEMENT CONFIGURATION")
				for _, c := range views {
					mark := ""
					if c.Current {
						mark = "*"
					}
					output.Row(tw, mark, c.Name, c.Context.Manifest, c.Context.ManagementConfiguration)
				}
			})
		},
	}
	cmd.Flags().BoolVar(&current, "current", false, "show the current context")
	output.AddFlag(cmd, &format)
	return cmd
}

func newSetContext(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var manifest, mgmt string
	var current bool
	cmd := &cobra.Command{
		Use:     "set-context NAME",
		Short:   "Create or change a context",
		Example: `  airshipctl config set-context site-a --manifest site-a --current`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			name := args[0]
			ctx, exists := cfg.Contexts[name]
			if !exists {
				ctx = &v1.Context{}
				if cfg.Contexts == nil {
					cfg.Contexts = map[string]*v1.Context{}
				}
				cfg.Contexts[name] = ctx
			}
			if cmd.Flags().Changed("manifest") {
				ctx.Manifest = manifest
			}
			if cmd.Flags().Changed("management-config") {
				ctx.ManagementConfiguration = mgmt
			}
			if current {
				cfg.CurrentContext = name
			}
			if err := cfg.Save(); err != nil {
				return err
			}
			verb := "modified"
			if !exists {
				verb = "created"
			}
			fmt.Fprintf(streams.Out, "Context %q %s.\n", name, verb)
			return nil
		},
	}
	cmd.Flags().StringVar(&manifest, "manifest", "", "name of the manifest the context uses")
	cmd.Flags().StringVar(&mgmt, "management-config", "", "name of the management configuration the context uses")
	cmd.Flags().BoolVar(&current, "current", false, "also make it the current context")
	return cmd
}

func newUseContext(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "use-context NAME",
		Short:   "Make a context the current one",
		Example: `  airshipctl config use-context site-a`,
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			if _, _, err := cfg.Context(args[0]); err != nil {
				return err
			}
			cfg.CurrentContext = args[0]
			if err := cfg.Save(); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Switched to context %q.\n", args[0])
			return nil
		},
	}
}

type manifestView struct {
	Name     string       `json:"name"`
	Manifest *v1.Manifest `json:"manifest"`
}

// redacted returns a copy of a manifest with repository secrets masked:
// the auth passwords, and URLs as redact.URL shows them.
func redacted(m *v1.Manifest) *v1.Manifest {
	c := m.DeepCopy()
	for _, r := range c.Repositories {
		if r == nil {
			continue
		}
		r.URL = redact.URL(r.URL)
		if r.Auth == nil {
			continue
		}
		for _, s := range []*string{&r.Auth.HTTPPassword, &r.Auth.SSHPassword, &r.Auth.KeyPassword} {
			if *s != "" {
				*s = redact.Mask
			}
		}
	}
	return c
}

func newGetManifest(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "get-manifest [NAME]",
		Short: "Show one manifest or all (repository passwords are never shown)",
		Example: `  airshipctl config get-manifest
  airshipctl config get-manifest site-a -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			names := sortedKeys(cfg.Manifests)
			if len(args) == 1 {
				if _, ok := cfg.Manifests[args[0]]; !ok {
					return fmt.Errorf("manifest %q not found in %s; manifests: %v", args[0], cfg.Path, names)
				}
				names = args
			}
			views := make([]manifestView, 0, len(names))
			for _, n := range names {
				views = append(views, manifestView{Name: n, Manifest: redacted(cfg.Manifests[n])})
			}
			var v any = views
			if len(args) == 1 {
				v = views[0]
			}
			return output.Print(streams.Out, format, v, func(tw *tabwriter.Writer) {
				output.Row(tw, "NAME", "PHASE REPOSITORY", "URL", "TARGET PATH", "METADATA PATH")
				for _, m := range views {
					url := ""
					if r := m.Manifest.Repositories[m.Manifest.PhaseRepositoryName]; r != nil {
						url = r.URL
					}
					output.Row(tw, m.Name, m.Manifest.PhaseRepositoryName, url, m.Manifest.TargetPath, m.Manifest.MetadataPath)
				}
			})
		},
	}
	output.AddFlag(cmd, &format)
	return cmd
}

type setManifestOptions struct {
	repo, url, branch, tag, commit string
	phase, inventory, force        bool
	targetPath, metadataPath       string
}

func newSetManifest(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	o := &setManifestOptions{}
	cmd := &cobra.Command{
		Use:   "set-manifest NAME",
		Short: "Create or change a manifest",
		Example: `  # A manifest whose phase repository is a local checkout
  airshipctl config set-manifest site-a --repo primary --url /src/site-a --phase \
    --target-path /src --metadata-path manifests/site/site-a/metadata.yaml

  # where manifests/site/site-a/metadata.yaml is a ManifestMetadata document:
  #   apiVersion: airshipit.org/v1alpha1
  #   kind: ManifestMetadata
  #   metadata: {name: manifest-metadata}
  #   spec:
  #     phase: {path: manifests/site/site-a/phases, docEntryPointPrefix: manifests/site/site-a}`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.Config()
			if err != nil {
				return err
			}
			name := args[0]
			m, exists := cfg.Manifests[name]
			if !exists {
				m = &v1.Manifest{}
				if cfg.Manifests == nil {
					cfg.Manifests = map[string]*v1.Manifest{}
				}
				cfg.Manifests[name] = m
			}
			if err := o.apply(cmd.Flags(), m); err != nil {
				return err
			}
			if err := cfg.Save(); err != nil {
				return err
			}
			verb := "modified"
			if !exists {
				verb = "created"
			}
			fmt.Fprintf(streams.Out, "Manifest %q %s.\n", name, verb)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "name of the repository to create or change")
	f.StringVar(&o.url, "url", "", "repository URL")
	f.StringVar(&o.branch, "branch", "", "branch to check out")
	f.StringVar(&o.tag, "tag", "", "tag to check out")
	f.StringVar(&o.commit, "commithash", "", "commit to check out")
	f.BoolVar(&o.force, "force", false, "force the checkout")
	f.BoolVar(&o.phase, "phase", false, "make --repo the phase repository")
	f.BoolVar(&o.inventory, "inventory", false, "make --repo the inventory repository")
	f.StringVar(&o.targetPath, "target-path", "", "local directory holding the repositories")
	f.StringVar(&o.metadataPath, "metadata-path", "", "metadata.yaml path relative to the phase repository")
	return cmd
}

// apply sets the fields of m that the flags in f name, and nothing else.
func (o *setManifestOptions) apply(f *pflag.FlagSet, m *v1.Manifest) error {
	if f.Changed("target-path") {
		m.TargetPath = o.targetPath
	}
	if f.Changed("metadata-path") {
		m.MetadataPath = o.metadataPath
	}
	checkout := f.Changed("branch") || f.Changed("tag") || f.Changed("commithash") || f.Changed("force")
	if !f.Changed("url") && !checkout && !o.phase && !o.inventory {
		return nil
	}
	if o.repo == "" {
		return errors.New("--repo names the repository that --url, --branch, --tag, --commithash, --force, --phase and --inventory change")
	}
	if m.Repositories == nil {
		m.Repositories = map[string]*v1.Repository{}
	}
	r := m.Repositories[o.repo]
	if r == nil {
		r = &v1.Repository{}
		m.Repositories[o.repo] = r
	}
	if f.Changed("url") {
		r.URL = o.url
	}
	if checkout {
		o.applyCheckout(f, r)
	}
	if o.phase {
		m.PhaseRepositoryName = o.repo
	}
	if o.inventory {
		m.InventoryRepositoryName = o.repo
	}
	return nil
}

// applyCheckout sets the checkout fields of r that the flags in f name.
func (o *setManifestOptions) applyCheckout(f *pflag.FlagSet, r *v1.Repository) {
	if r.Checkout == nil {
		r.Checkout = &v1.RepoCheckout{}
	}
	if f.Changed("branch") {
		r.Checkout.Branch = o.branch
	}
	if f.Changed("tag") {
		r.Checkout.Tag = o.tag
	}
	if f.Changed("commithash") {
		r.Checkout.CommitHash = o.commit
	}
	if f.Changed("force") {
		r.Checkout.Force = o.force
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
