package clusterctl

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	ctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/apply"
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
	defer func() {
		// The directory holds kubeconfig copies: the phase's outcome
		// stands, but the user is told when they stay behind.
		if err := os.RemoveAll(dir); err != nil && opts.Events != nil {
			opts.Events <- executor.Event{Type: "Warning", Message: err.Error()}
		}
	}()
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
	ns, err := e.moveNamespace(ctx, from)
	if err != nil {
		return err
	}
	src, err := e.client(ctx, from)
	if err != nil {
		return err
	}
	send := func(msg string) {
		if opts.Events != nil {
			opts.Events <- executor.Event{Type: "Move", Message: msg}
		}
	}
	if done, err := e.movedBefore(ctx, src, from, ns, send); done || err != nil {
		return err
	}
	send(fmt.Sprintf("moving Cluster API objects of namespace %q from %q to %q", ns, from, e.cfg.ClusterName))
	err = c.Move(ctx, ctlclient.MoveOptions{
		FromKubeconfig: ctlclient.Kubeconfig{Path: fromPath, Context: from},
		ToKubeconfig:   ctlclient.Kubeconfig{Path: toPath, Context: e.cfg.ClusterName},
		Namespace:      ns,
		DryRun:         opts.DryRun,
	})
	if err != nil {
		return fmt.Errorf("phase %q: clusterctl move from %q to %q: %w", e.cfg.PhaseName, from, e.cfg.ClusterName, err)
	}
	if opts.DryRun {
		return nil
	}
	if err := markMoved(ctx, src, ns, e.cfg.ClusterName); err != nil {
		return fmt.Errorf("phase %q: objects moved, but marking namespace %q of %q: %w", e.cfg.PhaseName, ns, from, err)
	}
	send(fmt.Sprintf("namespace %q of %q marked moved to %q: later runs of its phases there leave its objects alone", ns, from, e.cfg.ClusterName))
	return nil
}

// movedBefore reports whether namespace ns of cluster from was moved to
// the phase's cluster already: then its objects are managed there, and
// the source's phases leave them alone. A move to another cluster is an
// error.
func (e *Executor) movedBefore(ctx context.Context, src client.Client, from, ns string, send func(string)) (bool, error) {
	moved, err := apply.MovedNamespaces(ctx, src, []string{ns})
	if err != nil {
		return false, fmt.Errorf("phase %q: cluster %q: %w", e.cfg.PhaseName, from, err)
	}
	switch to := moved[ns]; {
	case to == e.cfg.ClusterName:
		send(fmt.Sprintf("namespace %q of %q was moved to %q already (annotation %s): nothing to move", ns, from, to, apply.MovedToAnnotation))
		return true, nil
	case to != "":
		return false, fmt.Errorf("phase %q: namespace %q of cluster %q was moved to cluster %q, not %q (annotation %s on the namespace)",
			e.cfg.PhaseName, ns, from, to, e.cfg.ClusterName, apply.MovedToAnnotation)
	}
	return false, nil
}

// markMoved annotates the source namespace with the cluster its objects
// went to (apply.MovedToAnnotation).
func markMoved(ctx context.Context, c client.Client, ns, to string) error {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{apply.MovedToAnnotation: to}}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, n, client.RawPatch(types.MergePatchType, patch))
}
