package phasecmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// NewCmd returns `airshipctl phase`.
func NewCmd(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	cmd := &cobra.Command{Use: "phase", Short: "List, inspect, render and validate the phases of a site"}
	cmd.AddCommand(NewCmdList(streams, g), NewCmdTree(streams, g), NewCmdRender(streams, g, nil), NewCmdValidate(streams, g),
		NewCmdRun(streams, g), NewCmdStatus(streams, g))
	for _, c := range cmd.Commands() {
		switch c.Name() {
		case "tree", "render", "validate", "run", "status":
			c.ValidArgsFunction = g.CompletePhases(false)
		case "list":
			_ = c.RegisterFlagCompletionFunc("cluster-name", g.CompleteClusters(true))
			_ = c.RegisterFlagCompletionFunc("plan", g.CompletePlans(true))
		}
	}
	return cmd
}

type phaseRow struct {
	Name       string `json:"name"`
	Cluster    string `json:"clusterName,omitempty"`
	Executor   string `json:"executor"`
	EntryPoint string `json:"documentEntryPoint,omitempty"`
	Source     string `json:"source,omitempty"`
}

// NewCmdList returns `phase list`.
func NewCmdList(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var format, cluster, plan string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the phases of the current site",
		Example: `  airshipctl phase list
  airshipctl phase list --plan deploy-local -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			site, err := g.Site()
			if err != nil {
				return err
			}
			phases, err := site.Phases()
			if err != nil {
				return err
			}
			if plan != "" {
				pl, err := site.Plan(plan)
				if err != nil {
					return err
				}
				if phases, err = site.PhasesOfPlan(pl.API); err != nil {
					return fmt.Errorf("plan %q: %w", plan, err)
				}
			}
			rows := []phaseRow{}
			for _, p := range phases {
				if cluster != "" && p.ClusterName() != cluster {
					continue
				}
				rows = append(rows, phaseRow{
					Name: p.Name(), Cluster: p.ClusterName(),
					Executor:   phase.ExecutorRefString(p.API.Config.ExecutorRef),
					EntryPoint: p.API.Config.DocumentEntryPoint, Source: p.Doc.Source(),
				})
			}
			return output.Print(streams.Out, format, rows, func(tw *tabwriter.Writer) {
				output.Row(tw, "NAME", "CLUSTER", "EXECUTOR", "ENTRY POINT")
				for _, r := range rows {
					output.Row(tw, r.Name, r.Cluster, r.Executor, r.EntryPoint)
				}
			})
		},
	}
	output.AddFlag(cmd, &format)
	cmd.Flags().StringVar(&cluster, "cluster-name", "", "only phases of this cluster")
	cmd.Flags().StringVar(&plan, "plan", "", "only phases of this plan, in plan order")
	return cmd
}

// NewCmdTree returns `phase tree NAME|PATH`.
func NewCmdTree(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "tree NAME|PATH",
		Short: "Show the kustomize tree of a phase's entry point, or of a kustomize root",
		Example: `  airshipctl phase tree initinfra-ephemeral
  airshipctl phase tree manifests/site/test-site/ephemeral/initinfra`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			root, base := args[0], ""
			if st, err := os.Stat(args[0]); err != nil || !st.IsDir() {
				site, err := g.Site()
				if err != nil {
					return err
				}
				p, err := site.Phase(args[0])
				if err != nil {
					return fmt.Errorf("%s is neither a directory nor a phase: %w", args[0], err)
				}
				if root, err = site.ExecutorBundlePath(p); err != nil {
					return err
				}
				if root == "" {
					return fmt.Errorf("phase %s has no config.documentEntryPoint", p.Doc.ID())
				}
				if base, err = site.Site.TargetPath(); err != nil {
					return err
				}
			} else if abs, err := filepath.Abs(root); err == nil {
				base = filepath.Dir(abs)
			}
			t, err := phase.Tree(root, base)
			if err != nil {
				return err
			}
			if format == output.Table {
				t.Print(streams.Out)
				return nil
			}
			return output.Print(streams.Out, format, t, nil)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", output.Table, "output format: table (a tree), yaml or json")
	return cmd
}

// Render sources.
const (
	SourcePhase    = "phase"
	SourceExecutor = "executor"
	SourceConfig   = "config"
)

// RenderOptions are the flags of `phase render`.
type RenderOptions struct {
	Streams    cli.IOStreams
	Global     *siteflags.Options
	Phase      string
	Source     string
	Labels     string
	Annotation string
	APIVersion string
	Kind       string
	// Output is yaml (a document stream) or json (a List).
	Output string
}

// NewCmdRender returns `phase render`; runF replaces the run step in tests.
func NewCmdRender(streams cli.IOStreams, g *siteflags.Options, runF func(context.Context, *RenderOptions) error) *cobra.Command {
	o := &RenderOptions{Streams: streams, Global: g}
	cmd := &cobra.Command{
		Use:   "render [NAME]",
		Short: "Print a phase's documents as a YAML stream",
		Example: `  # Every document of a phase
  airshipctl phase render initinfra-ephemeral

  # Only its Deployments, as the executor would apply them
  airshipctl phase render initinfra-ephemeral --source executor -k Deployment

  # The whole phase bundle
  airshipctl phase render --source config`,
		Long: `Print documents as a YAML stream, filtered by -l, -a, -g and -k.

--source phase (default)  the phase's executor bundle (its documentEntryPoint), every document;
                          for a phase without one, what --source executor shows
--source executor         what the executor acts on (deployable documents for KubernetesApply,
                          provider components for Clusterctl)
--source config           the Phase and its executor document; without NAME, the whole phase bundle`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Phase = args[0]
			}
			switch o.Source {
			case SourcePhase, SourceExecutor, SourceConfig:
			default:
				return fmt.Errorf("--source %q: use phase, executor or config", o.Source)
			}
			if o.Output != output.YAML && o.Output != output.JSON {
				return fmt.Errorf("--output %q: use yaml or json", o.Output)
			}
			if o.Phase == "" && o.Source != SourceConfig {
				return fmt.Errorf("a phase NAME is required with --source %s", o.Source)
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runRender(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Source, "source", "s", SourcePhase, "what to render: phase, executor or config")
	f.StringVarP(&o.Labels, "label", "l", "", "label selector, e.g. app=web")
	f.StringVarP(&o.Annotation, "annotation", "a", "", "annotation selector")
	f.StringVarP(&o.APIVersion, "apiversion", "g", "", "apiVersion, e.g. apps/v1")
	f.StringVarP(&o.Kind, "kind", "k", "", "kind, e.g. Deployment")
	f.StringVarP(&o.Output, "output", "o", output.YAML, "output format: yaml (a document stream) or json (a List)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{output.YAML, output.JSON}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o *RenderOptions) selector() document.Selector {
	s := document.Selector{Kind: o.Kind, LabelSelector: o.Labels, AnnotationSelector: o.Annotation}
	if o.APIVersion != "" {
		s = s.ByAPIVersionKind(o.APIVersion, o.Kind)
	}
	return s
}

// RenderMemoryLimit is the soft memory limit of `phase render` (see
// cli.SoftMemoryLimit). A render holds every document of the bundle
// (about 17 KiB of heap each): at 5,000 documents the heap would peak at
// twice that; at this limit the process peaks at about 150 MiB of RSS
// instead of 205, for about 2.5 s more CPU (docs/benchmarks.md). Smaller
// renders never reach it.
const RenderMemoryLimit = 96 << 20

func runRender(ctx context.Context, o *RenderOptions) error {
	cli.SoftMemoryLimit(RenderMemoryLimit)
	var buf bytes.Buffer
	if err := render(ctx, o, &buf); err != nil {
		return err
	}
	return output.WriteStream(o.Streams.Out, o.Output, buf.Bytes())
}

// render writes the selected documents to out as a YAML stream.
func render(ctx context.Context, o *RenderOptions, out io.Writer) error {
	site, err := o.Global.Site()
	if err != nil {
		return err
	}
	sel := o.selector()
	if o.Phase == "" {
		b, err := site.PhaseBundle.Filter(sel)
		if err != nil {
			return err
		}
		return b.Write(out)
	}
	p, err := site.Phase(o.Phase)
	if err != nil {
		return err
	}
	switch o.Source {
	case SourceConfig:
		docs := []*document.Document{p.Doc}
		if ex, err := site.ExecutorDocument(p); err == nil {
			docs = append(docs, ex)
		} else {
			return err
		}
		b, err := document.NewBundle(site.PhaseBundlePath, docs).Filter(sel)
		if err != nil {
			return err
		}
		return b.Write(out)
	case SourceExecutor:
		ex, err := site.Executor(p)
		if err != nil {
			return err
		}
		return ex.Render(ctx, out, executor.RenderOptions{Selector: sel})
	default:
		// A phase without an entry point (upstream's clusterctl-init-*
		// and clusterctl-move) has no executor bundle: show what its
		// executor would act on instead, the provider components for
		// Clusterctl.
		if p.API.Config.DocumentEntryPoint == "" {
			ex, err := site.Executor(p)
			if err != nil {
				return err
			}
			return ex.Render(ctx, out, executor.RenderOptions{Selector: sel})
		}
		b, err := site.ExecutorBundle(p)
		if err != nil {
			return err
		}
		f, err := b.Filter(sel)
		if err != nil {
			return err
		}
		return f.Write(out)
	}
}

// NewCmdValidate returns `phase validate NAME`.
func NewCmdValidate(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "validate NAME",
		Short:   "Check a phase: its references, its executor, and every document against its schema",
		Example: `  airshipctl phase validate initinfra-ephemeral`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			site, err := g.Site()
			if err != nil {
				return err
			}
			p, err := site.Phase(args[0])
			if err != nil {
				return err
			}
			if err := site.ValidateDocuments(cmd.Context(), p); err != nil {
				return fmt.Errorf("phase %q is invalid: %w", p.Name(), err)
			}
			fmt.Fprintf(streams.Out, "Phase %q is valid.\n", p.Name())
			return nil
		},
	}
}
