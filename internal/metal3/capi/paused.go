package capi

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Cluster reads the Cluster API Cluster namespace/name. A missing Cluster,
// or a management cluster without Cluster API's CRDs, is nil and no error:
// the objects of the Metal3 provider work without one.
func Cluster(ctx context.Context, c client.Reader, namespace, name string) (*clusterv1.Cluster, error) {
	if name == "" {
		return nil, nil
	}
	cl := &clusterv1.Cluster{}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cl)
	switch {
	case err == nil:
		return cl, nil
	case apierrors.IsNotFound(err), apimeta.IsNoMatchError(err), apierrors.IsMethodNotSupported(err):
		return nil, nil
	default:
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", namespace, name, err)
	}
}

// Paused reports whether nothing of o may change now, as during clusterctl
// move: o carries Cluster API's paused annotation, or its Cluster (nil for
// none) is paused. That is Cluster API's annotations.IsPaused, plus the
// paused annotation on the Cluster itself: the Metal3Machine and
// Metal3Cluster controllers have always honoured it (a Cluster paused that
// way pauses its infrastructure too), and a Metal3Data or IPPool of the
// same Cluster must not go on while its Metal3Machine stands still.
func Paused(cluster *clusterv1.Cluster, o metav1.Object) bool {
	if cluster == nil {
		return annotations.HasPaused(o)
	}
	return annotations.IsPaused(cluster, o) || annotations.HasPaused(cluster)
}
