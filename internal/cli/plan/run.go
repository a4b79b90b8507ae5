package plan

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
	"github.com/airshipit/airship-go/internal/cli/phasecmd"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/phase"
)

// Step results.
const (
	resultOK      = "succeeded"
	resultFailed  = "failed"
	resultSkipped = "skipped (--resume-from)"
	resultNotRun  = "not run"
)

type stepResult struct {
	Phase    string        `json:"phase"`
	Result   string        `json:"result"`
	Duration time.Duration `json:"-"`
	// Seconds is Duration for -o json|yaml.
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

func newRun(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var resumeFrom string
	format := output.Table
	o := phasecmd.RunOptions{}
	cmd := &cobra.Command{
		Use:   "run NAME",
		Short: "Run a plan's phases in order (independent ones in parallel when dependsOn says so); stop at the first failure",
		Example: `  airshipctl plan run deploy-local
  airshipctl plan run deploy-local --resume-from workload-ephemeral
  airshipctl plan run deploy-local -o json > summary.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			return runPlan(cmd.Context(), streams, g, args[0], resumeFrom, format, o)
		},
	}
	cmd.Flags().StringVar(&resumeFrom, "resume-from", "", "skip the phases before this one")
	output.AddFlag(cmd, &format)
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "ask the server what would change; change nothing")
	cli.AddTimeoutFlag(cmd.Flags(), &o.WaitTimeout, 0, "per-phase wait timeout (default: each executor's own)")
	return cmd
}

// runPlan runs the plan's phases wave by wave, from resumeFrom on, stops
// after the first wave with a failure, and prints a row a phase.
func runPlan(ctx context.Context, streams cli.IOStreams, g *siteflags.Options, name, resumeFrom, format string, o phasecmd.RunOptions) error {
	site, err := g.Site()
	if err != nil {
		return err
	}
	plan, err := site.Plan(name)
	if err != nil {
		return err
	}
	if err := site.CheckPlan(ctx, plan); err != nil {
		return fmt.Errorf("plan %q is invalid, nothing run: %w", name, err)
	}
	steps := plan.API.AllPhases()
	waves, err := phase.OrderSteps(steps)
	if err != nil {
		return err
	}
	skip, err := phase.SkipBefore(steps, resumeFrom, name)
	if err != nil {
		return err
	}
	streams = streams.Synchronized()
	// With -o json|yaml stdout holds the summary alone.
	progress := streams
	if format != output.Table {
		progress.Out = streams.ErrOut
	}
	results := make([]*stepResult, len(steps))
	for i, s := range steps {
		results[i] = &stepResult{Phase: s.Name, Result: resultNotRun}
	}
	runWaves(waves, skip, results, func(r *stepResult) {
		r.Result, r.Error, r.Duration = runStep(ctx, progress, site, r.Phase, o)
	})
	rows := make([]stepResult, 0, len(steps))
	for _, res := range results {
		r := *res
		r.Seconds = r.Duration.Round(time.Millisecond).Seconds()
		rows = append(rows, r)
	}
	if format == output.Table {
		fmt.Fprintln(streams.Out)
	}
	_ = output.Print(streams.Out, format, rows, func(tw *tabwriter.Writer) {
		output.Row(tw, "PHASE", "RESULT", "DURATION")
		for _, r := range rows {
			output.Row(tw, r.Phase, r.Result, r.Duration.Round(100*time.Millisecond))
		}
	})
	for _, r := range rows {
		if r.Result == resultFailed {
			return fmt.Errorf("plan %q stopped: phase %q failed: %s\nfix it and continue with: airshipctl plan run %s --resume-from %s",
				name, r.Phase, r.Error, name, r.Phase)
		}
	}
	return nil
}

// runWaves runs the plan's steps wave by wave (phase.RunWaves), marking
// the skipped ones.
func runWaves(waves [][]int, skip []bool, results []*stepResult, run func(*stepResult)) {
	for i, r := range results {
		if skip[i] {
			r.Result = resultSkipped
		}
	}
	phase.RunWaves(waves, skip, func(i int) bool {
		run(results[i])
		return results[i].Result != resultFailed
	})
}

func runStep(ctx context.Context, streams cli.IOStreams, site *phase.Site, name string, o phasecmd.RunOptions) (string, string, time.Duration) {
	start := time.Now()
	p, err := site.Phase(name)
	if err == nil {
		err = phasecmd.RunPhase(ctx, streams, site, p, o)
	}
	if err != nil {
		return resultFailed, err.Error(), time.Since(start)
	}
	return resultOK, "", time.Since(start)
}

type planStatusRow struct {
	Phase   string `json:"phase"`
	Objects int    `json:"objects"`
	Applied int    `json:"applied"`
	Ready   int    `json:"ready"`
	Drifted int    `json:"drifted"`
	Message string `json:"message,omitempty"`
	// failed: the phase's status could not be read (Message says why).
	failed bool
}

func newStatus(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show, per phase of a plan, how many objects are applied, ready and drifted",
		Example: `  # Exits 1 while a phase is not applied or not ready
  airshipctl plan status deploy-local`,
		Long: `Show, per phase of a plan, how many objects are applied, ready and drifted.

Exits 1 when a phase has objects not applied or not ready, or its status cannot be read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			site, err := g.Site()
			if err != nil {
				return err
			}
			plan, err := site.Plan(args[0])
			if err != nil {
				return err
			}
			var rows []planStatusRow
			for _, s := range plan.API.AllPhases() {
				rows = append(rows, phaseStatus(cmd.Context(), site, s.Name))
			}
			if err := output.Print(streams.Out, format, rows, func(tw *tabwriter.Writer) {
				output.Row(tw, "PHASE", "OBJECTS", "APPLIED", "READY", "DRIFTED", "MESSAGE")
				for _, r := range rows {
					output.Row(tw, r.Phase, r.Objects, r.Applied, r.Ready, r.Drifted, r.Message)
				}
			}); err != nil {
				return err
			}
			var behind []string
			for _, r := range rows {
				if r.Applied < r.Objects || r.Ready < r.Objects || r.failed {
					behind = append(behind, r.Phase)
				}
			}
			if len(behind) > 0 {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("plan %s: phases not applied or not ready: %s", args[0], strings.Join(behind, ", "))}
			}
			return nil
		},
	}
	output.AddFlag(cmd, &format)
	return cmd
}

// phaseStatus counts the phase's objects that are applied, ready and
// drifted; a status that cannot be read is a failed row saying why.
func phaseStatus(ctx context.Context, site *phase.Site, name string) planStatusRow {
	row := planStatusRow{Phase: name}
	p, err := site.Phase(name)
	if err != nil {
		row.Message, row.failed = err.Error(), true
		return row
	}
	exe, err := site.Executor(p)
	if err != nil {
		row.Message, row.failed = err.Error(), true
		return row
	}
	st, err := exe.Status(ctx)
	if err != nil {
		row.Message, row.failed = err.Error(), true
		return row
	}
	row.Message = st.Message
	for _, o := range st.Objects {
		row.Objects++
		if o.Applied {
			row.Applied++
		}
		if o.Ready {
			row.Ready++
		}
		if o.Drifted {
			row.Drifted++
		}
	}
	return row
}
