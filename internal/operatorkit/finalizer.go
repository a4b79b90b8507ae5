package operatorkit

import (
	"context"
	"fmt"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// EnsureFinalizer adds finalizer f to obj with a merge patch when it is
// missing. It reports whether it wrote.
func EnsureFinalizer(ctx context.Context, c client.Client, obj client.Object, f string) (bool, error) {
	if controllerutil.ContainsFinalizer(obj, f) {
		return false, nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	controllerutil.AddFinalizer(obj, f)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return false, fmt.Errorf("adding finalizer %s to %s: %w", f, ObjectName(obj), err)
	}
	return true, nil
}

// RemoveFinalizer drops finalizer f from obj with a merge patch when it is
// there. An object already gone is not an error.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object, f string) error {
	if !controllerutil.ContainsFinalizer(obj, f) {
		return nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	controllerutil.RemoveFinalizer(obj, f)
	if err := c.Patch(ctx, obj, patch); err != nil && !kerrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer %s from %s: %w", f, ObjectName(obj), err)
	}
	return nil
}
