package plan

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
)

// NewCmd returns `airshipctl plan`.
func NewCmd(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	cmd := &cobra.Command{Use: "plan", Short: "List and validate the plans of a site"}
	cmd.AddCommand(newList(streams, g), newValidate(streams, g), newRun(streams, g), newStatus(streams, g))
	for _, c := range cmd.Commands() {
		switch c.Name() {
		case "validate", "run", "status":
			c.ValidArgsFunction = g.CompletePlans(false)
		}
		if c.Name() == "run" {
			_ = c.RegisterFlagCompletionFunc("resume-from", g.CompletePhases(true))
		}
	}
	return cmd
}

type planRow struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Phases      []string `json:"phases"`
}

func newList(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the plans of the current site",
		Example: `  airshipctl plan list`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			site, err := g.Site()
			if err != nil {
				return err
			}
			plans, err := site.Plans()
			if err != nil {
				return err
			}
			rows := []planRow{}
			for _, p := range plans {
				r := planRow{Name: p.API.Name, Description: p.API.Description, Phases: []string{}}
				for _, s := range p.API.AllPhases() {
					r.Phases = append(r.Phases, s.Name)
				}
				rows = append(rows, r)
			}
			return output.Print(streams.Out, format, rows, func(tw *tabwriter.Writer) {
				output.Row(tw, "NAME", "PHASES", "DESCRIPTION")
				for _, r := range rows {
					output.Row(tw, r.Name, strings.Join(r.Phases, ","), r.Description)
				}
			})
		},
	}
	output.AddFlag(cmd, &format)
	return cmd
}

func newValidate(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	return &cobra.Command{
		Use:     "validate NAME",
		Short:   "Check a plan: every phase exists once, resolves its executor, and targets a cluster of the ClusterMap",
		Example: `  airshipctl plan validate deploy-local`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			site, err := g.Site()
			if err != nil {
				return err
			}
			p, err := site.Plan(args[0])
			if err != nil {
				return err
			}
			if err := site.CheckPlan(cmd.Context(), p); err != nil {
				return fmt.Errorf("plan %q is invalid: %w", args[0], err)
			}
			fmt.Fprintf(streams.Out, "Plan %q is valid: %d phases.\n", args[0], len(p.API.AllPhases()))
			return nil
		},
	}
}
