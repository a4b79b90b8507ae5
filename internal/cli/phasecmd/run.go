package phasecmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/phase"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/phase/runlog"
	"github.com/airshipit/airship-go/internal/redact"
)

// RunOptions are the flags of `phase run`.
type RunOptions struct {
	DryRun      bool
	WaitTimeout time.Duration
}

// NewCmdRun returns `phase run NAME`.
func NewCmdRun(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	o := &RunOptions{}
	cmd := &cobra.Command{
		Use:   "run NAME",
		Short: "Run a phase: its executor acts on its cluster",
		Example: `  airshipctl phase run initinfra-ephemeral
  airshipctl phase run initinfra-ephemeral --dry-run
  airshipctl phase run initinfra-ephemeral --timeout 10m`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			site, err := g.Site()
			if err != nil {
				return err
			}
			p, err := site.Phase(args[0])
			if err != nil {
				return err
			}
			return RunPhase(cmd.Context(), streams, site, p, *o)
		},
	}
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "ask the server what would change; change nothing")
	cli.AddTimeoutFlag(cmd.Flags(), &o.WaitTimeout, 0, "how long to wait for objects to be ready (default: the executor's waitOptions.timeout)")
	return cmd
}

// RunPhase runs one phase, printing its progress: a live line on a
// terminal, plain lines otherwise.
func RunPhase(ctx context.Context, streams cli.IOStreams, site *phase.Site, p *phase.Phase, o RunOptions) error {
	events := make(chan executor.Event, 64)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		printEvents(streams.ErrOut, p.Name(), events)
	}()
	start := time.Now()
	err := site.Run(ctx, p, executor.RunOptions{DryRun: o.DryRun, Timeout: o.WaitTimeout, Events: events})
	close(events)
	wg.Wait()
	if !o.DryRun {
		recordRun(streams, site, p.Name(), start, err)
	}
	if err != nil {
		return err
	}
	verb := "finished"
	if o.DryRun {
		verb = "dry run finished"
	}
	fmt.Fprintf(streams.Out, "Phase %q %s in %.1fs.\n", p.Name(), verb, time.Since(start).Seconds())
	return nil
}

// recordRun appends the run to the site's run log (runlog), where the
// dashboard reads each phase's last run; a log that cannot be written is
// a warning, not the run's failure.
func recordRun(streams cli.IOStreams, site *phase.Site, name string, start time.Time, runErr error) {
	end := time.Now()
	rec := runlog.Record{ID: fmt.Sprintf("cli-%d", start.UnixNano()), Kind: "phase", Name: name, Start: start.UTC(), End: end.UTC(),
		Seconds: end.Sub(start).Seconds(), Result: "succeeded", By: "airshipctl"}
	if runErr != nil {
		rec.Result, rec.Message = "failed", redact.Text(runErr.Error())
	}
	if err := runlog.Append(runlog.RunsPath(site.Site.Name), rec); err != nil {
		fmt.Fprintf(streams.ErrOut, "warning: the run of phase %q is not in the site's run log: %v\n", name, err)
	}
}

func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func printEvents(w io.Writer, name string, events <-chan executor.Event) {
	writeEvents(w, name, events, isTTY(w))
}

// writeEvents prints one line per event; on a terminal, the wait progress
// rewrites a single live line instead.
func writeEvents(w io.Writer, name string, events <-chan executor.Event, tty bool) {
	live := false
	for ev := range events {
		line := fmt.Sprintf("[%s] %s", name, ev.Message)
		if ev.Object != "" {
			line = fmt.Sprintf("[%s] %s: %s", name, ev.Object, ev.Message)
		}
		if tty && ev.Type == "Wait" {
			fmt.Fprintf(w, "\r\033[K%s", line)
			live = true
			continue
		}
		if live {
			fmt.Fprint(w, "\r\033[K")
			live = false
		}
		fmt.Fprintln(w, line)
	}
	if live {
		fmt.Fprintln(w)
	}
}

// NewCmdStatus returns `phase status NAME`.
func NewCmdStatus(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show which objects of a phase are applied, ready and drifted",
		Example: `  # Exits 1 while an object is not applied or not ready
  airshipctl phase status initinfra-ephemeral
  airshipctl phase status initinfra-ephemeral -o json`,
		Long: `Show which objects of a phase are applied, ready and drifted.

Exits 1 when an object of the phase is not applied or not ready (as cluster status does for an
unreachable cluster), so scripts can wait on it; drift alone is reported, not an error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			site, err := g.Site()
			if err != nil {
				return err
			}
			p, err := site.Phase(args[0])
			if err != nil {
				return err
			}
			ex, err := site.Executor(p)
			if err != nil {
				return err
			}
			st, err := ex.Status(cmd.Context())
			if err != nil {
				return err
			}
			if err := output.Print(streams.Out, format, st, func(tw *tabwriter.Writer) {
				if st.Message != "" {
					fmt.Fprintln(tw, st.Message)
				}
				output.Row(tw, "OBJECT", "APPLIED", "READY", "DRIFTED", "MESSAGE")
				for _, o := range st.Objects {
					output.Row(tw, o.ID, yesNo(o.Applied), yesNo(o.Ready), yesNo(o.Drifted), o.Message)
				}
			}); err != nil {
				return err
			}
			var notApplied, notReady int
			for _, o := range st.Objects {
				if !o.Applied {
					notApplied++
				} else if !o.Ready {
					notReady++
				}
			}
			if notApplied+notReady > 0 {
				return &cli.ExitError{Code: 1, Err: fmt.Errorf("phase %s: %d of %d objects not applied, %d not ready", p.Name(), notApplied, len(st.Objects), notReady)}
			}
			return nil
		},
	}
	output.AddFlag(cmd, &format)
	return cmd
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
