package operatorkit

import (
	"context"
	"fmt"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Finalizer writes carry an optimistic lock: a JSON merge patch (what a
// custom resource takes) replaces metadata.finalizers whole, so a pass
// that read an old version would drop a finalizer someone else added
// since. A conflict is returned as the API server's Conflict error; the
// watch event of the newer version brings the object back. After a
// write, StatusSnapshot.Rebase moves a snapshot taken earlier past it.

// EnsureFinalizer adds finalizer f to obj when it is missing. It reports
// whether it wrote.
func EnsureFinalizer(ctx context.Context, c client.Client, obj client.Object, f string) (bool, error) {
	if controllerutil.ContainsFinalizer(obj, f) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(obj, f)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return false, fmt.Errorf("adding finalizer %s to %s: %w", f, ObjectName(obj), err)
	}
	return true, nil
}

// RemoveFinalizer drops finalizer f from obj when it is there. An object already gone is not an error.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object, f string) error {
	if !controllerutil.ContainsFinalizer(obj, f) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, f)
	if err := c.Patch(ctx, obj, patch); err != nil && !kerrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer %s from %s: %w", f, ObjectName(obj), err)
	}
	return nil
}
