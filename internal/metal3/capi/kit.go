package capi

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/airshipit/airship-go/internal/operatorkit"
)

// KIT: AddFinalizer and RemoveFinalizer are operatorkit.EnsureFinalizer
// and operatorkit.RemoveFinalizer with the optimistic lock. A JSON merge
// patch (the only kind a custom resource takes besides JSON patch)
// replaces metadata.finalizers whole, so without the lock a pass that read
// an old version drops a finalizer someone else added since. A conflict
// is returned (apierrors.IsConflict): the reconcilers here either retry or
// leave the object to the watch event that its change brings.

// AddFinalizer adds finalizer f to obj when it is missing, and reports
// whether it wrote.
func AddFinalizer(ctx context.Context, c client.Client, obj client.Object, f string) (bool, error) {
	if controllerutil.ContainsFinalizer(obj, f) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(obj, f)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return false, fmt.Errorf("adding the finalizer %s to %s: %w", f, operatorkit.ObjectName(obj), err)
	}
	return true, nil
}

// RemoveFinalizer drops finalizer f from obj when it is there. An object
// already gone is not an error.
func RemoveFinalizer(ctx context.Context, c client.Client, obj client.Object, f string) error {
	if !controllerutil.ContainsFinalizer(obj, f) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, f)
	if err := c.Patch(ctx, obj, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the finalizer %s from %s: %w", f, operatorkit.ObjectName(obj), err)
	}
	return nil
}

// KIT: Rebase moves snap past the pass's own writes of obj's metadata or
// spec. operatorkit.StatusSnapshot.Patch locks on the resourceVersion the
// pass read, so after such a write the pass's status write would conflict
// with the pass itself. When obj's resourceVersion is not the snapshot's,
// Rebase returns a snapshot of the status as read at obj's
// resourceVersion; otherwise snap. That is only sound because every
// metadata and spec write of these reconcilers carries the optimistic
// lock: nothing else can have come between the read and that write.
// ignore repeats the snapshot's ignored fields.
func Rebase(snap *operatorkit.StatusSnapshot, obj client.Object, ignore ...string) *operatorkit.StatusSnapshot {
	rv := obj.GetResourceVersion()
	if rv == snap.Before().GetResourceVersion() {
		return snap
	}
	before := snap.Before().DeepCopyObject().(client.Object)
	before.SetResourceVersion(rv)
	return operatorkit.SnapshotStatus(before, ignore...)
}
