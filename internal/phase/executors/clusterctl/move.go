package clusterctl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	ctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	ctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"

	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// parent returns the ClusterMap parent of the phase's cluster: where move
// takes Cluster API objects from.
func (e *Executor) parent() (string, error) {
	if e.cfg.ClusterMap == nil {
		return "", fmt.Errorf("phase %q: clusterctl move needs a ClusterMap naming the parent of %q", e.cfg.PhaseName, e.cfg.ClusterName)
	}
	c := e.cfg.ClusterMap.Map[e.cfg.ClusterName]
	if c == nil || c.Parent == "" {
		return "", fmt.Errorf("phase %q: cluster %q has no parent in ClusterMap %s to move Cluster API objects from",
			e.cfg.PhaseName, e.cfg.ClusterName, e.cfg.ClusterMap.Name)
	}
	return c.Parent, nil
}

// writeKubeconfig writes a private copy of a cluster's kubeconfig for
// clusterctl (with every cluster's context for a siteWideKubeconfig phase).
func (e *Executor) writeKubeconfig(ctx context.Context, dir, cluster string) (string, error) {
	kc, err := e.cfg.ClusterKubeconfig(ctx, cluster)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, cluster+".kubeconfig")
	return path, kubeconfig.Write(path, kc)
}

// runMove moves Cluster API objects (and objects labelled
// clusterctl.cluster.x-k8s.io/move) from the parent cluster to the phase's
// cluster with clusterctl's library. clusterctl's own preflight checks
// apply: providers installed on both sides, every Cluster provisioned.
func (e *Executor) runMove(ctx context.Context, opts executor.RunOptions) error {
	if e.cfg.Kubeconfig == nil || e.cfg.ClusterName == "" {
		return fmt.Errorf("phase %q: clusterctl move needs metadata.clusterName and kubeconfigs", e.cfg.PhaseName)
	}
	from, err := e.parent()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "airship-clusterctl-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fromPath, err := e.writeKubeconfig(ctx, dir, from)
	if err != nil {
		return err
	}
	toPath, err := e.writeKubeconfig(ctx, dir, e.cfg.ClusterName)
	if err != nil {
		return err
	}
	cfg, err := ctlconfig.New(ctx, "", ctlconfig.InjectReader(ctlconfig.NewMemoryReader()))
	if err != nil {
		return fmt.Errorf("clusterctl configuration: %w", err)
	}
	c, err := ctlclient.New(ctx, "", ctlclient.InjectConfig(cfg))
	if err != nil {
		return fmt.Errorf("clusterctl client: %w", err)
	}
	ns := ""
	if e.api.MoveOptions != nil {
		ns = e.api.MoveOptions.Namespace
	}
	if opts.Events != nil {
		opts.Events <- executor.Event{Type: "Move", Message: fmt.Sprintf("moving Cluster API objects of namespace %q from %q to %q", ns, from, e.cfg.ClusterName)}
	}
	err = c.Move(ctx, ctlclient.MoveOptions{
		FromKubeconfig: ctlclient.Kubeconfig{Path: fromPath, Context: from},
		ToKubeconfig:   ctlclient.Kubeconfig{Path: toPath, Context: e.cfg.ClusterName},
		Namespace:      ns,
		DryRun:         opts.DryRun,
	})
	if err != nil {
		return fmt.Errorf("phase %q: clusterctl move from %q to %q: %w", e.cfg.PhaseName, from, e.cfg.ClusterName, err)
	}
	return nil
}
