package clusterctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// runMove moves the Cluster API objects (and objects labelled
// clusterctl.cluster.x-k8s.io/move) of each move namespace, in order, from
// the parent cluster to the phase's cluster with clusterctl's library,
// as one step that a rerun finishes if it stops half-way:
//
//  1. it decides from the source's namespaces what to do with each
//     (planMove): skip one moved already, resume one a stopped run marked
//     being moved, refuse one moved or being moved elsewhere;
//  2. clusterctl's own checks (providers, every Cluster provisioned and
//     not paused) run as a dry run for every namespace to move;
//  3. every namespace to move is marked being moved
//     (apply.MovingToAnnotation), so the source's phases leave them all
//     alone from here on: a SIPCluster is not waited on while its hosts
//     leave;
//  4. each is moved, then marked moved (apply.MovedToAnnotation, the
//     moving mark taken off in the same patch).
func (e *Executor) runMove(ctx context.Context, opts executor.RunOptions) error {
	if e.cfg.Kubeconfig == nil || e.cfg.ClusterName == "" {
		return fmt.Errorf("phase %q: clusterctl move needs metadata.clusterName and kubeconfigs", e.cfg.PhaseName)
	}
	from, err := e.parent()
	if err != nil {
		return err
	}
	to := e.cfg.ClusterName
	nss, err := e.moveNamespaces(ctx, from)
	if err != nil {
		return err
	}
	src, err := e.client(ctx, from)
	if err != nil {
		return err
	}
	states, err := readSourceNamespaces(ctx, src, nss)
	if err != nil {
		return fmt.Errorf("phase %q: cluster %q: %w", e.cfg.PhaseName, from, err)
	}
	steps, err := planMove(e.cfg.PhaseName, from, to, states)
	if err != nil {
		return err
	}
	send := func(msg string) {
		if opts.Events != nil {
			opts.Events <- executor.Event{Type: "Move", Message: msg}
		}
	}
	var todo []moveStep
	for _, s := range steps {
		if s.action == moveSkip {
			send(fmt.Sprintf("namespace %q of %q was moved to %q already (annotation %s): nothing to move", s.ns, from, to, apply.MovedToAnnotation))
			continue
		}
		todo = append(todo, s)
	}
	if len(todo) == 0 {
		return nil
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
	move, err := e.mover(ctx, dir, from)
	if err != nil {
		return err
	}
	for _, s := range todo {
		if err := move(ctx, s.ns, true); err != nil {
			return fmt.Errorf("phase %q: clusterctl move of namespace %q from %q to %q, checked before anything moves: %w (nothing moved)",
				e.cfg.PhaseName, s.ns, from, to, err)
		}
	}
	if opts.DryRun {
		send(fmt.Sprintf("dry run: would move namespace %s from %q to %q", quoteNames(todo), from, to))
		return nil
	}
	if err := e.markMoving(ctx, src, from, todo); err != nil {
		return err
	}
	for i, s := range todo {
		verb := "moving"
		if s.action == moveResume {
			verb = "finishing the move of"
		}
		send(fmt.Sprintf("%s the Cluster API objects of namespace %q from %q to %q", verb, s.ns, from, to))
		err := error(nil)
		if e.beforeMove != nil {
			err = e.beforeMove(s.ns)
		}
		if err == nil {
			err = move(ctx, s.ns, false)
		}
		if err != nil {
			return fmt.Errorf("phase %q: clusterctl move of namespace %q from %q to %q: %w (still marked %s on %q, so its phases there leave them alone: namespace %s; run phase %q again to finish the move)",
				e.cfg.PhaseName, s.ns, from, to, err, apply.MovingToAnnotation, from, quoteNames(todo[i:]), e.cfg.PhaseName)
		}
		if err := markMoved(ctx, src, s.ns, to); err != nil {
			return fmt.Errorf("phase %q: namespace %q moved from %q to %q, but marking it moved: %w (run phase %q again to finish)",
				e.cfg.PhaseName, s.ns, from, to, err, e.cfg.PhaseName)
		}
		send(fmt.Sprintf("namespace %q of %q marked moved to %q: later runs of its phases there leave its objects alone", s.ns, from, to))
	}
	return nil
}

// mover returns a function that runs clusterctl move (or its dry run) of
// one namespace from cluster from to the phase's cluster, with kubeconfig
// copies written into dir.
func (e *Executor) mover(ctx context.Context, dir, from string) (func(ctx context.Context, ns string, dryRun bool) error, error) {
	fromPath, err := e.writeKubeconfig(ctx, dir, from)
	if err != nil {
		return nil, err
	}
	toPath, err := e.writeKubeconfig(ctx, dir, e.cfg.ClusterName)
	if err != nil {
		return nil, err
	}
	cfg, err := ctlconfig.New(ctx, "", ctlconfig.InjectReader(ctlconfig.NewMemoryReader()))
	if err != nil {
		return nil, fmt.Errorf("clusterctl configuration: %w", err)
	}
	c, err := ctlclient.New(ctx, "", ctlclient.InjectConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("clusterctl client: %w", err)
	}
	return func(ctx context.Context, ns string, dryRun bool) error {
		return c.Move(ctx, ctlclient.MoveOptions{
			FromKubeconfig: ctlclient.Kubeconfig{Path: fromPath, Context: from},
			ToKubeconfig:   ctlclient.Kubeconfig{Path: toPath, Context: e.cfg.ClusterName},
			Namespace:      ns,
			DryRun:         dryRun,
		})
	}, nil
}

// readSourceNamespaces reads the move's namespaces on the source cluster.
func readSourceNamespaces(ctx context.Context, c client.Reader, nss []string) ([]sourceNamespace, error) {
	out := make([]sourceNamespace, 0, len(nss))
	for _, ns := range nss {
		n := &corev1.Namespace{}
		err := c.Get(ctx, client.ObjectKey{Name: ns}, n)
		if apierrors.IsNotFound(err) {
			out = append(out, sourceNamespace{name: ns})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading namespace %q: %w", ns, err)
		}
		a := n.Annotations
		out = append(out, sourceNamespace{name: ns, exists: true, movedTo: a[apply.MovedToAnnotation],
			movingTo: a[apply.MovingToAnnotation], movingPhase: a[apply.MovingPhaseAnnotation]})
	}
	return out, nil
}

// markMoving marks every namespace the move starts on as being moved to
// the phase's cluster, before anything moves. When one cannot be marked,
// the marks set here are taken off again: nothing has moved.
func (e *Executor) markMoving(ctx context.Context, c client.Client, from string, steps []moveStep) error {
	var marked []string
	for _, s := range steps {
		if s.action != moveStart {
			continue
		}
		err := patchAnnotations(ctx, c, s.ns, map[string]any{apply.MovingToAnnotation: e.cfg.ClusterName, apply.MovingPhaseAnnotation: e.cfg.PhaseName})
		if err == nil {
			marked = append(marked, s.ns)
			continue
		}
		err = fmt.Errorf("phase %q: marking namespace %q of %q being moved to %q: %w (nothing moved)", e.cfg.PhaseName, s.ns, from, e.cfg.ClusterName, err)
		for _, ns := range marked {
			if uerr := patchAnnotations(ctx, c, ns, map[string]any{apply.MovingToAnnotation: nil, apply.MovingPhaseAnnotation: nil}); uerr != nil {
				err = errors.Join(err, fmt.Errorf("taking annotation %s off namespace %q of %q again: %w", apply.MovingToAnnotation, ns, from, uerr))
			}
		}
		return err
	}
	return nil
}

// markMoved annotates the source namespace with the cluster its objects
// went to (apply.MovedToAnnotation) and takes the moving mark off, in one
// patch.
func markMoved(ctx context.Context, c client.Client, ns, to string) error {
	return patchAnnotations(ctx, c, ns, map[string]any{apply.MovedToAnnotation: to, apply.MovingToAnnotation: nil, apply.MovingPhaseAnnotation: nil})
}

// patchAnnotations merge-patches a Namespace's annotations; a nil value
// removes one.
func patchAnnotations(ctx context.Context, c client.Client, ns string, annotations map[string]any) error {
	n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, n, client.RawPatch(types.MergePatchType, patch))
}

// quoteNames lists the steps' namespaces: "a", "b".
func quoteNames(steps []moveStep) string {
	q := make([]string, len(steps))
	for i, s := range steps {
		q[i] = fmt.Sprintf("%q", s.ns)
	}
	return strings.Join(q, ", ")
}
