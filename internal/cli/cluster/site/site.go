package site

import (
	"context"
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/output"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/phase"
)

// NewCmds returns list, get-kubeconfig and status.
func NewCmds(streams cli.IOStreams, g *siteflags.Options) []*cobra.Command {
	getKubeconfig := newGetKubeconfig(streams, g)
	getKubeconfig.ValidArgsFunction = g.CompleteClusters(true)
	return []*cobra.Command{newList(streams, g), getKubeconfig, newStatus(streams, g)}
}

func clusterMap(g *siteflags.Options) (*phase.Site, *v1.ClusterMap, error) {
	site, err := g.Site()
	if err != nil {
		return nil, nil, err
	}
	cm, err := site.ClusterMap()
	if err != nil {
		return nil, nil, err
	}
	if cm == nil {
		return nil, nil, fmt.Errorf("the phase bundle %s has no ClusterMap", site.PhaseBundlePath)
	}
	return site, cm, nil
}

func names(cm *v1.ClusterMap) []string {
	out := make([]string, 0, len(cm.Map))
	for n := range cm.Map {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

type clusterRow struct {
	Name    string   `json:"name"`
	Parent  string   `json:"parent,omitempty"`
	Sources []string `json:"kubeconfigSources"`
}

func newList(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the clusters of the site's ClusterMap",
		Example: `  airshipctl cluster list
  airshipctl cluster list -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			_, cm, err := clusterMap(g)
			if err != nil {
				return err
			}
			var rows []clusterRow
			for _, n := range names(cm) {
				r := clusterRow{Name: n, Sources: []string{}}
				if c := cm.Map[n]; c != nil {
					r.Parent = c.Parent
					// The sources the resolver uses, implied ones included
					// (the bundle's KubeConfig document, dynamicKubeConf).
					srcs, _ := kubeconfig.Sources(c)
					for _, s := range srcs {
						r.Sources = append(r.Sources, string(s.Type))
					}
				}
				rows = append(rows, r)
			}
			return output.Print(streams.Out, format, rows, func(tw *tabwriter.Writer) {
				output.Row(tw, "NAME", "PARENT", "KUBECONFIG SOURCES")
				for _, r := range rows {
					output.Row(tw, r.Name, r.Parent, fmt.Sprint(r.Sources))
				}
			})
		},
	}
	output.AddFlag(cmd, &format)
	return cmd
}

func newGetKubeconfig(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "get-kubeconfig [NAME...]",
		Short: "Print (or write, mode 0600) a kubeconfig with a context per cluster, named after it",
		Example: `  # Every cluster of the ClusterMap, one kubeconfig with a context per cluster
  airshipctl cluster get-kubeconfig > site.kubeconfig

  # One cluster, written mode 0600
  airshipctl cluster get-kubeconfig target-cluster --file ~/.kube/target`,
		RunE: func(cmd *cobra.Command, args []string) error {
			site, cm, err := clusterMap(g)
			if err != nil {
				return err
			}
			for _, a := range args {
				if cm.Map[a] == nil {
					return fmt.Errorf("cluster %q is not in ClusterMap %s (clusters: %v)", a, cm.Name, names(cm))
				}
			}
			r, err := site.Kubeconfigs()
			if err != nil {
				return err
			}
			cfg, err := r.Merged(cmd.Context(), args...)
			if err != nil {
				return err
			}
			if file != "" {
				if err := kubeconfig.Write(file, cfg); err != nil {
					return err
				}
				fmt.Fprintf(streams.Out, "Wrote %s\n", file)
				return nil
			}
			data, err := clientcmd.Write(*cfg)
			if err != nil {
				return err
			}
			_, err = streams.Out.Write(data)
			return err
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "write to this file (mode 0600) instead of stdout")
	return cmd
}

type statusRow struct {
	Name      string `json:"name"`
	Reachable bool   `json:"reachable"`
	Version   string `json:"version,omitempty"`
	Server    string `json:"server,omitempty"`
	Message   string `json:"message,omitempty"`
}

func newStatus(streams cli.IOStreams, g *siteflags.Options) *cobra.Command {
	var format string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether each cluster of the ClusterMap is reachable, and its version",
		Example: `  # Reachability and version of every cluster; exits 1 when one is unreachable
  airshipctl cluster status --timeout 5s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.Validate(format); err != nil {
				return err
			}
			site, cm, err := clusterMap(g)
			if err != nil {
				return err
			}
			r, err := site.Kubeconfigs()
			if err != nil {
				return err
			}
			var rows []statusRow
			for _, n := range names(cm) {
				rows = append(rows, probe(cmd.Context(), r, n, timeout))
			}
			err = output.Print(streams.Out, format, rows, func(tw *tabwriter.Writer) {
				output.Row(tw, "NAME", "REACHABLE", "VERSION", "SERVER", "MESSAGE")
				for _, r := range rows {
					output.Row(tw, r.Name, r.Reachable, r.Version, r.Server, r.Message)
				}
			})
			if err != nil {
				return err
			}
			for _, r := range rows {
				if !r.Reachable {
					return &cli.ExitError{Code: 1, Err: fmt.Errorf("cluster %q is not reachable", r.Name)}
				}
			}
			return nil
		},
	}
	output.AddFlag(cmd, &format)
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to try each cluster")
	return cmd
}

func probe(ctx context.Context, r *kubeconfig.Resolver, name string, timeout time.Duration) statusRow {
	row := statusRow{Name: name}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rc, err := r.RESTConfig(ctx, name)
	if err != nil {
		row.Message = err.Error()
		return row
	}
	row.Server = rc.Host
	rc.Timeout = timeout
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		row.Message = err.Error()
		return row
	}
	v, err := dc.ServerVersion()
	if err != nil {
		row.Message = err.Error()
		return row
	}
	row.Reachable, row.Version = true, v.GitVersion
	return row
}
