package apply

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MovedToAnnotation on a Namespace names the cluster its objects were moved
// to (clusterctl move, a pivot). This cluster no longer manages them: an
// apply leaves the bundle's objects of that namespace alone, neither
// creating them again nor pruning them, and reports them moved. Removing
// the annotation hands the namespace back.
const MovedToAnnotation = "airshipit.org/moved-to"

// MovingToAnnotation on a Namespace names the cluster a move of its objects
// has begun to and not yet finished: the move phase sets it on every
// namespace it moves before it moves any, and replaces it with
// MovedToAnnotation once that namespace is across. Until then the namespace
// is treated as moved (its objects are left alone, nothing waits on them:
// some may be gone already, and what they depend on may be gone with
// another namespace of the same move); running the move phase again
// finishes the move.
const MovingToAnnotation = "airshipit.org/moving-to"

// MovingPhaseAnnotation, beside MovingToAnnotation, names the phase moving
// the namespace: the one to run again to finish.
const MovingPhaseAnnotation = "airshipit.org/moving-phase"

// NamespaceMove says where the objects of a namespace went, or are going.
type NamespaceMove struct {
	// To is the cluster that manages them now, or will.
	To string
	// Moving is true while the move has begun and not finished
	// (MovingToAnnotation), false once it has (MovedToAnnotation).
	Moving bool
	// Phase is the phase moving them, when Moving and known.
	Phase string
}

// MoveOf reads a namespace's annotations: ok is false when the namespace is
// its cluster's own. A finished move (MovedToAnnotation) wins over a begun
// one.
func MoveOf(annotations map[string]string) (m NamespaceMove, ok bool) {
	if to := annotations[MovedToAnnotation]; to != "" {
		return NamespaceMove{To: to}, true
	}
	if to := annotations[MovingToAnnotation]; to != "" {
		return NamespaceMove{To: to, Moving: true, Phase: annotations[MovingPhaseAnnotation]}, true
	}
	return NamespaceMove{}, false
}

// String says where the namespace's objects went (`moved to cluster "x"`)
// or are going, and how to finish a move begun.
func (m NamespaceMove) String() string {
	if !m.Moving {
		return fmt.Sprintf("moved to cluster %q", m.To)
	}
	finish := "run its move phase again to finish"
	if m.Phase != "" {
		finish = fmt.Sprintf("run phase %q again to finish", m.Phase)
	}
	return fmt.Sprintf("being moved to cluster %q (annotation %s: the move stopped half-way; %s)", m.To, MovingToAnnotation, finish)
}

// MovedNamespaces returns, of the namespaces named, those moved or being
// moved away from the cluster c reaches, with where their objects go. A
// namespace that does not exist is not moved.
func MovedNamespaces(ctx context.Context, c client.Reader, namespaces []string) (map[string]NamespaceMove, error) {
	moved := map[string]NamespaceMove{}
	seen := map[string]bool{}
	for _, ns := range namespaces {
		if ns == "" || seen[ns] {
			continue
		}
		seen[ns] = true
		n := &corev1.Namespace{}
		err := c.Get(ctx, client.ObjectKey{Name: ns}, n)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading namespace %q: %w", ns, err)
		}
		if m, ok := MoveOf(n.Annotations); ok {
			moved[ns] = m
		}
	}
	return moved, nil
}

// splitMoved separates the objects of moved (or being moved) namespaces
// from the rest.
func (a *Applier) splitMoved(ctx context.Context, objs []*unstructured.Unstructured) (keep []*unstructured.Unstructured, moved map[string]NamespaceMove, gone []string, err error) {
	var nss []string
	for _, o := range objs {
		nss = append(nss, o.GetNamespace())
	}
	moved, err = MovedNamespaces(ctx, a.client, nss)
	if err != nil || len(moved) == 0 {
		return objs, moved, nil, err
	}
	for _, o := range objs {
		if _, ok := moved[o.GetNamespace()]; ok {
			gone = append(gone, RefOf(o).String())
			continue
		}
		keep = append(keep, o)
	}
	return keep, moved, gone, nil
}

// movedMessage says which namespaces were left alone and where they went
// or are going.
func movedMessage(moved map[string]NamespaceMove, n int) string {
	var done, moving []string
	for ns, m := range moved {
		if m.Moving {
			moving = append(moving, fmt.Sprintf("namespace %q %s", ns, m))
			continue
		}
		done = append(done, fmt.Sprintf("%q to cluster %q", ns, m.To))
	}
	sort.Strings(done)
	sort.Strings(moving)
	var parts []string
	if len(done) > 0 {
		parts = append(parts, fmt.Sprintf("namespace %s (annotation %s; remove it to manage them here again)",
			strings.Join(done, ", namespace "), MovedToAnnotation))
	}
	parts = append(parts, moving...)
	return fmt.Sprintf("%d objects left alone: %s", n, strings.Join(parts, "; "))
}
