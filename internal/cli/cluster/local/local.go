package local

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
	cluster "github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/pki"
)

// NewCmd returns `cluster local` with its subcommands.
func NewCmd(streams cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run a real Kubernetes control plane on this machine (etcd, apiserver, controller-manager, scheduler, kwok)",
		Long: `Run the ephemeral cluster every demo and test uses: etcd, kube-apiserver,
kube-controller-manager, kube-scheduler and kwok (fake kubelets) as background
processes on 127.0.0.1 with TLS, built from Go modules by ` + "`make testbin`.",
	}
	var stateDir string
	cli.AddStateDirFlag(cmd, &stateDir, cluster.DefaultStateDir(), "the cluster's PKI, kubeconfig, data, logs and PID records", "AIRSHIP_LOCAL_STATE_DIR")
	cmd.AddCommand(NewCmdUp(streams, &stateDir, nil), NewCmdDown(streams, &stateDir), NewCmdStatus(streams, &stateDir))
	return cmd
}

// UpOptions are the flags and dependencies of `up`.
type UpOptions struct {
	Streams  cli.IOStreams
	StateDir *string
	BinDir   string
	Port     int
	Nodes    int
	Timeout  time.Duration
	// RealNodes is how many real nodes join; ImagesDir holds their images.
	RealNodes int
	ImagesDir string
	// RealNodeTaints are the real nodes' taints, KEY[=VALUE]:EFFECT.
	RealNodeTaints []string
	// CACert and CAKey name the cluster CA to use instead of a new one.
	CACert, CAKey string
}

// NewCmdUp returns `cluster local up`; runF replaces the run step in tests.
func NewCmdUp(streams cli.IOStreams, stateDir *string, runF func(context.Context, *UpOptions) error) *cobra.Command {
	o := &UpOptions{Streams: streams, StateDir: stateDir}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the local control plane, or report the one already running",
		Example: `  # Start (or reuse) the local control plane with 3 kwok Nodes
  airshipctl cluster local up

  # A second one beside it, in its own state directory, on a fixed port
  airshipctl cluster local up --state-dir /tmp/cp2 --port 16443 --nodes 1 --timeout 3m

  # No kwok Nodes at all, for real kubelets to join
  airshipctl cluster local up --nodes 0

  # One real node (a kubelet, containerd and kube-proxy on this host; needs root
  # and the images of make images), besides the kwok ones
  airshipctl cluster local up --real-nodes 1 --images bin/images

  # ... on which only pods that tolerate the taint run
  airshipctl cluster local up --real-nodes 1 --real-node-taint airshipit.org/real-node=true:NoSchedule

  # Signed by the site's cluster CA (here from promenade generate-certs)
  airshipctl cluster local up --ca-cert pki/ca-kubernetes.pem --ca-key pki/ca-kubernetes-key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runUp(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.BinDir, "bin-dir", cluster.DefaultBinDir(), "directory holding the control-plane binaries ($AIRSHIP_TESTBIN_DIR)")
	cmd.Flags().IntVar(&o.Port, "port", 0, "kube-apiserver port on 127.0.0.1 (0 picks a free one)")
	cmd.Flags().IntVar(&o.Nodes, "nodes", 3, "number of kwok Nodes (the first is control-plane, the rest workers); 0 for none, e.g. for real kubelets to join")
	cmd.Flags().IntVar(&o.RealNodes, "real-nodes", 0, fmt.Sprintf("number of real nodes: a kubelet with its own containerd each, and kube-proxy, on this host (root; at most %d; `cluster local down` puts the host back)", cluster.MaxRealNodes))
	cmd.Flags().StringVar(&o.ImagesDir, "images", "bin/images", "directory of the OCI archives `make images` writes, imported into each real node (the sandbox image pause among them)")
	cmd.Flags().StringArrayVar(&o.RealNodeTaints, "real-node-taint", nil, "taint each real node registers with, KEY[=VALUE]:EFFECT as kubectl taint writes it (repeatable), e.g. airshipit.org/real-node=true:NoSchedule to keep pods whose images no node here has on the kwok Nodes")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 2*time.Minute, "how long to wait for the cluster to be ready")
	cmd.Flags().StringVar(&o.CACert, "ca-cert", "", "cluster CA certificate (PEM) to sign the cluster's certificates with, instead of a new CA (with --ca-key)")
	cmd.Flags().StringVar(&o.CAKey, "ca-key", "", "private key (PEM) of --ca-cert")
	cmd.MarkFlagsRequiredTogether("ca-cert", "ca-key")
	return cmd
}

func runUp(ctx context.Context, o *UpOptions) error {
	if o.Nodes < 0 {
		return fmt.Errorf("--nodes must be zero or more, got %d", o.Nodes)
	}
	var ca *pki.KeyPair
	if o.CACert != "" || o.CAKey != "" {
		var err error
		if ca, err = cluster.LoadCA(o.CACert, o.CAKey); err != nil {
			return fmt.Errorf("cluster local up: --ca-cert/--ca-key: %w", err)
		}
	}
	res, err := cluster.Up(ctx, o.clusterOptions(ca))
	if err != nil {
		return fmt.Errorf("cluster local up: %w", err)
	}
	w := o.Streams.Out
	if res.AlreadyRunning {
		fmt.Fprintf(w, "A local cluster is already running at %s (state in %s).\n", res.State.APIServerURL, *o.StateDir)
	} else {
		fmt.Fprintf(w, "Local cluster is up at %s with %d nodes (%d real) (%.1fs).\n", res.State.APIServerURL, res.State.Nodes+len(res.State.RealNodes), len(res.State.RealNodes), res.Elapsed.Seconds())
	}
	fmt.Fprintf(w, "Use it with:\n  export KUBECONFIG=%s\n  kubectl get nodes\n", res.State.Kubeconfig)
	return nil
}

// clusterOptions is what runUp asks cluster.Up for; ca is the loaded
// --ca-cert/--ca-key, nil for a new CA.
func (o *UpOptions) clusterOptions(ca *pki.KeyPair) cluster.Options {
	return cluster.Options{
		CA:             ca,
		RealNodes:      o.RealNodes,
		ImagesDir:      o.ImagesDir,
		RealNodeTaints: o.RealNodeTaints,
		StateDir:       *o.StateDir,
		BinDir:         o.BinDir,
		APIServerPort:  o.Port,
		Nodes:          o.Nodes,
		Timeout:        o.Timeout,
		Progress:       o.Streams.ErrOut,
	}
}

// DownOptions are the flags and dependencies of `down`.
type DownOptions struct {
	Streams  cli.IOStreams
	StateDir *string
	Purge    bool
}

// NewCmdDown returns `cluster local down`.
func NewCmdDown(streams cli.IOStreams, stateDir *string) *cobra.Command {
	o := &DownOptions{Streams: streams, StateDir: stateDir}
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the processes of the local control plane (only those it started)",
		Example: `  # Stop the processes, keep the data
  airshipctl cluster local down

  # Stop and remove data, PKI, kubeconfig and logs
  airshipctl cluster local down --purge`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runDown(o) },
	}
	cmd.Flags().BoolVar(&o.Purge, "purge", false, "also remove the state directory: data, PKI, kubeconfig and logs")
	return cmd
}

func runDown(o *DownOptions) error {
	res, err := cluster.Down(cluster.DownOptions{StateDir: *o.StateDir, Purge: o.Purge, Progress: o.Streams.ErrOut})
	if err != nil {
		return fmt.Errorf("cluster local down: %w", err)
	}
	w := o.Streams.Out
	switch {
	case len(res.Stopped) > 0:
		fmt.Fprintf(w, "Stopped %s.\n", strings.Join(res.Stopped, ", "))
	default:
		fmt.Fprintln(w, "No local cluster process was running.")
	}
	if len(res.Stale) > 0 {
		fmt.Fprintf(w, "Removed stale records of %s (already exited).\n", strings.Join(res.Stale, ", "))
	}
	if res.Purged {
		fmt.Fprintf(w, "Removed %s.\n", *o.StateDir)
	}
	return nil
}

// NewCmdStatus returns `cluster local status`.
func NewCmdStatus(streams cli.IOStreams, stateDir *string) *cobra.Command {
	return output.StatusCmd(&cobra.Command{
		Use:   "status",
		Short: "Show each component of the local control plane, its PID and health, and the nodes",
		Example: `  airshipctl cluster local status
  airshipctl cluster local status -o json`,
		Long: "Show each component of the local control plane, its PID and health, and the nodes.\nExits 0 when everything is healthy, 1 otherwise.",
	}, streams.Out, func(ctx context.Context) (*cluster.ClusterStatus, error) {
		st, err := cluster.GetStatus(ctx, *stateDir)
		if err != nil {
			return nil, fmt.Errorf("cluster local status: %w", err)
		}
		return st, nil
	}, statusTable, func(st *cluster.ClusterStatus) error {
		if !st.Healthy {
			return fmt.Errorf("local cluster in %s is not healthy", st.StateDir)
		}
		return nil
	})
}

func statusTable(tw *tabwriter.Writer, st *cluster.ClusterStatus) {
	if !st.Running {
		fmt.Fprintln(tw, st.Message)
		return
	}
	output.Row(tw, "COMPONENT", "PID", "STATUS", "ENDPOINT", "MESSAGE")
	for _, c := range st.Components {
		output.Row(tw, c.Name, c.PID, c.Status, c.Endpoint, c.Message)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "Nodes: %d/%d Ready\n", st.NodesReady, st.Nodes)
	fmt.Fprintf(tw, "Server: %s\nKubeconfig: %s\n", st.Server, st.Kubeconfig)
	if st.Message != "" {
		fmt.Fprintln(tw, st.Message)
	}
}
