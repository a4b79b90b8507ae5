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

// MovedNamespaces returns, of the namespaces named, those moved away from
// the cluster c reaches, with the cluster each was moved to. A namespace
// that does not exist is not moved.
func MovedNamespaces(ctx context.Context, c client.Reader, namespaces []string) (map[string]string, error) {
	moved := map[string]string{}
	for _, ns := range namespaces {
		if ns == "" {
			continue
		}
		if _, done := moved[ns]; done {
			continue
		}
		n := &corev1.Namespace{}
		err := c.Get(ctx, client.ObjectKey{Name: ns}, n)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading namespace %q: %w", ns, err)
		}
		if to := n.Annotations[MovedToAnnotation]; to != "" {
			moved[ns] = to
		}
	}
	return moved, nil
}

// splitMoved separates the objects of moved namespaces from the rest.
func (a *Applier) splitMoved(ctx context.Context, objs []*unstructured.Unstructured) (keep []*unstructured.Unstructured, moved map[string]string, gone []string, err error) {
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

// movedMessage says which namespaces were left alone and where they went.
func movedMessage(moved map[string]string, n int) string {
	var parts []string
	for ns, to := range moved {
		parts = append(parts, fmt.Sprintf("%q to cluster %q", ns, to))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d objects left alone: namespace %s (annotation %s; remove it to manage them here again)",
		n, strings.Join(parts, ", namespace "), MovedToAnnotation)
}
