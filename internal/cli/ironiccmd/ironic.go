package ironiccmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
	"github.com/airshipit/airship-go/internal/localironic"
)

// NewCmd returns `ironic` with its subcommands.
func NewCmd(streams cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ironic",
		Short: "Run OpenStack Ironic, metal3-operator's provisioning engine, on this machine",
	}
	cmd.AddCommand(NewCmdLocal(streams), NewCmdServeHTTP())
	return cmd
}

// NewCmdLocal returns `ironic local` with up, down and status.
func NewCmdLocal(streams cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run a site's Ironic on this machine (API, conductor and image server on 127.0.0.1)",
		Long: `Run Debian's Ironic (` + "`bash hack/setup.sh`" + ` installs it) for one site: the
all-in-one ironic process with a sqlite database, and a static HTTP server for
boot and deploy images, both on 127.0.0.1. Configuration, database, logs,
images and PID records live in the state directory; down keeps the database,
so the next up restarts Ironic with its nodes.`,
	}
	var stateDir string
	cli.AddStateDirFlag(cmd, &stateDir, localironic.DefaultStateDir(), "Ironic's configuration, database, logs, images and PID records", "AIRSHIP_IRONIC_STATE_DIR")
	cmd.AddCommand(NewCmdUp(streams, &stateDir, nil), NewCmdDown(streams, &stateDir), NewCmdStatus(streams, &stateDir))
	return cmd
}

// UpOptions are the flags and dependencies of `up`.
type UpOptions struct {
	Streams      cli.IOStreams
	StateDir     *string
	Host         string
	APIPort      int
	HTTPPort     int
	Auth         string
	FakeHardware bool
	Debug        bool
	Timeout      time.Duration
	Tuning       localironic.Tuning
}

// NewCmdUp returns `ironic local up`; runF replaces the run step in tests.
func NewCmdUp(streams cli.IOStreams, stateDir *string, runF func(context.Context, *UpOptions) error) *cobra.Command {
	o := &UpOptions{Streams: streams, StateDir: stateDir}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the site's Ironic, or report the one already running",
		Example: `  # Start (or reuse) Ironic in ~/.airship/ironic, free ports on 127.0.0.1
  airshipctl ironic local up

  # With HTTP basic authentication (credentials in the state directory) on fixed ports
  airshipctl ironic local up --auth http_basic --api-port 6385 --http-port 6180

  # Tuned for many hosts
  airshipctl ironic local up --conductor-workers 300 --sync-power-state-interval 5m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runUp(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Host, "host", localironic.DefaultHost, "address both servers listen on and every URL names (noauth needs a loopback address)")
	f.IntVar(&o.APIPort, "api-port", 0, "Ironic API port (0 reuses the port of the last run, else picks a free one)")
	f.IntVar(&o.HTTPPort, "http-port", 0, "image server port (0 reuses the port of the last run, else picks a free one)")
	f.StringVar(&o.Auth, "auth", string(localironic.AuthNoAuth), "API authentication: noauth or http_basic (a generated user, its password in credentials.yaml of the state directory)")
	f.BoolVar(&o.FakeHardware, "fake-hardware", false, "also enable Ironic's fake-hardware driver (nodes without a BMC)")
	f.BoolVar(&o.Debug, "debug", false, "Ironic's debug logging")
	cli.AddTimeoutFlag(f, &o.Timeout, localironic.DefaultStartTimeout, "how long to wait for the API to answer")
	f.IntVar(&o.Tuning.Conductors, "conductors", 0, "conductor processes: the all-in-one one and N-1 ironic-conductor (0: 1; more need a 127.x --host, each conductor on the next loopback address)")
	f.IntVar(&o.Tuning.ConductorWorkers, "conductor-workers", 0, "[conductor] workers_pool_size (0: Ironic's 100)")
	f.DurationVar(&o.Tuning.SyncPowerStateInterval, "sync-power-state-interval", 0, "[conductor] sync_power_state_interval (0: 60s; negative disables)")
	f.DurationVar(&o.Tuning.DeployCallbackTimeout, "deploy-callback-timeout", 0, "[conductor] deploy_callback_timeout (0: 30m)")
	f.IntVar(&o.Tuning.MaxConcurrentDeploy, "max-concurrent-deploy", 0, "[conductor] max_concurrent_deploy (0: 250)")
	return cmd
}

func runUp(ctx context.Context, o *UpOptions) error {
	inst, err := localironic.Up(ctx, localironic.Options{
		StateDir: *o.StateDir, Host: o.Host, APIPort: o.APIPort, HTTPPort: o.HTTPPort,
		Auth: localironic.AuthMode(o.Auth), FakeHardware: o.FakeHardware, Debug: o.Debug,
		StartTimeout: o.Timeout, Tuning: o.Tuning, Progress: o.Streams.ErrOut,
	})
	if err != nil {
		return fmt.Errorf("ironic local up: %w", err)
	}
	w := o.Streams.Out
	if inst.Resumed {
		fmt.Fprintf(w, "Ironic is already running (state in %s).\n", inst.StateDir)
	} else {
		fmt.Fprintf(w, "Ironic is up (state in %s).\n", inst.StateDir)
	}
	printInstance(w, inst.APIURL, inst.HTTPURL, inst.HTTPRoot, inst.DeployISOURL, inst.CredentialsFile, inst.LogFile)
	return nil
}

func printInstance(w io.Writer, api, httpURL, root, iso, creds, log string) {
	fmt.Fprintf(w, "API:          %s\n", api)
	if root != "" {
		fmt.Fprintf(w, "Images:       %s (serving %s)\n", httpURL, root)
	} else {
		fmt.Fprintf(w, "Images:       %s\n", httpURL)
	}
	fmt.Fprintf(w, "Deploy ISO:   %s\n", iso)
	if creds != "" {
		fmt.Fprintf(w, "Credentials:  %s\n", creds)
	}
	fmt.Fprintf(w, "Log:          %s\n", log)
}

// NewCmdDown returns `ironic local down`.
func NewCmdDown(streams cli.IOStreams, stateDir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Stop the site's Ironic and image server (only the processes up started); keep the database",
		Example: `  airshipctl ironic local down
  airshipctl ironic local down --state-dir /tmp/ironic2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			before, err := localironic.GetStatus(*stateDir)
			if err != nil {
				return fmt.Errorf("ironic local down: %w", err)
			}
			if err := localironic.Down(cmd.Context(), *stateDir); err != nil {
				return fmt.Errorf("ironic local down: %w", err)
			}
			var stopped []string
			for _, p := range before.Processes {
				if p.Alive {
					stopped = append(stopped, fmt.Sprintf("%s (pid %d)", p.Component, p.PID))
				}
			}
			if len(stopped) == 0 {
				fmt.Fprintln(streams.Out, "No local Ironic process was running.")
				return nil
			}
			fmt.Fprintf(streams.Out, "Stopped %s; the database and logs stay in %s.\n", strings.Join(stopped, ", "), before.StateDir)
			return nil
		},
	}
}

// NewCmdStatus returns `ironic local status`.
func NewCmdStatus(streams cli.IOStreams, stateDir *string) *cobra.Command {
	return output.StatusCmd(&cobra.Command{
		Use:   "status",
		Short: "Show the site's Ironic: its processes, URLs and log",
		Long:  "Show the site's Ironic: its processes, URLs and log.\nExits 0 when Ironic runs, 1 otherwise.",
		Example: `  airshipctl ironic local status
  airshipctl ironic local status -o json`,
	}, streams.Out, func(context.Context) (*localironic.Status, error) {
		st, err := localironic.GetStatus(*stateDir)
		if err != nil {
			return nil, fmt.Errorf("ironic local status: %w", err)
		}
		return st, nil
	}, statusTable, func(st *localironic.Status) error {
		if !st.Running {
			return fmt.Errorf("no local Ironic runs in %s", st.StateDir)
		}
		return nil
	})
}

func statusTable(tw *tabwriter.Writer, st *localironic.Status) {
	if !st.Recorded {
		fmt.Fprintf(tw, "No local Ironic in %s: start one with `airshipctl ironic local up`.\n", st.StateDir)
		return
	}
	output.Row(tw, "COMPONENT", "PID", "STATUS")
	for _, p := range st.Processes {
		status := "running"
		if !p.Alive {
			status = "exited"
		}
		output.Row(tw, p.Component, p.PID, status)
	}
	fmt.Fprintln(tw)
	printInstance(tw, st.APIURL, st.HTTPURL, "", st.DeployISOURL, st.CredentialsFile, st.Log)
}

// NewCmdServeHTTP returns the hidden `ironic serve-http`, the image server
// `ironic local up` runs in the background. It serves until SIGTERM.
func NewCmdServeHTTP() *cobra.Command {
	var root, listen string
	cmd := &cobra.Command{
		Use:    "serve-http",
		Short:  "Serve a directory's files over HTTP (GET and HEAD, no listing): ironic local up's image server",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return localironic.ServeImages(cmd.Context(), root, listen)
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "directory to serve")
	cmd.Flags().StringVar(&listen, "listen", "", "address to listen on, host:port")
	_ = cmd.MarkFlagRequired("root")   // the flag exists
	_ = cmd.MarkFlagRequired("listen") // the flag exists
	return cmd
}
