package operatorkit

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatusSnapshot holds an object as a pass read it, so the pass can write
// the status it computed once, at the end, and only when it changed.
//
// The policy is the same for every reconciler: the write is a merge patch
// of the status subresource with an optimistic lock (a pass that read an
// old version must not overwrite a newer status); an object that is gone
// is not an error; a conflict is not an error either but ConflictRetry
// (the watch brings the new version too). A change of nothing but
// lastTransitionTime in conditions, or of a field named in Ignore (such as
// a lastUpdated stamp), is no change: the write would only cost the API
// server a request and wake every watcher.
//
// Two reconcilers write differently, on purpose: the IPPool allocator (its
// allocations must be written with Update so two allocators cannot both
// take an address) and the BareMetalHost controller (upstream's status
// model: the host's whole status is one record of the provisioning state
// machine, written with Update and its own lastUpdated). The latter still
// decides whether to write with Changed.
type StatusSnapshot struct {
	before client.Object
	ignore []string
}

// ConflictRetry is how soon a pass whose status write conflicted runs
// again.
const ConflictRetry = 100 * time.Millisecond

// ErrStatusConflict is wrapped by Patch's error when someone wrote the
// object after the pass read it.
var ErrStatusConflict = errors.New("the object changed since it was read")

// SnapshotStatus copies obj. ignore names top-level status fields (JSON
// names) whose change alone is not worth a write.
func SnapshotStatus(obj client.Object, ignore ...string) *StatusSnapshot {
	return &StatusSnapshot{before: obj.DeepCopyObject().(client.Object), ignore: ignore}
}

// Before is the object as the snapshot holds it. Callers must not change
// it.
func (s *StatusSnapshot) Before() client.Object { return s.before }

// Rebase moves the snapshot past the pass's own write of obj's metadata
// or spec (a finalizer, a label): Patch locks on the resourceVersion the
// snapshot holds, so after such a write the status write would conflict
// with the pass itself. The status stays as read; only the
// resourceVersion moves to obj's. That is sound only because the pass's
// own writes are locked too (the finalizer helpers are): nothing else can
// have come between the read and that write.
func (s *StatusSnapshot) Rebase(obj client.Object) {
	if rv := obj.GetResourceVersion(); rv != s.before.GetResourceVersion() {
		s.before.SetResourceVersion(rv)
	}
}

// Changed reports whether obj's status differs from the snapshot's,
// ignoring lastTransitionTime in conditions and the Ignore fields.
func (s *StatusSnapshot) Changed(obj client.Object) bool {
	a, aok := comparableStatus(s.before, s.ignore)
	b, bok := comparableStatus(obj, s.ignore)
	if !aok || !bok {
		return true
	}
	return !equality.Semantic.DeepEqual(a, b)
}

// Patch writes obj's status when Changed, as the type's comment says. On
// success the snapshot moves to obj, so a second Patch writes only what
// changed since.
func (s *StatusSnapshot) Patch(ctx context.Context, c client.Client, obj client.Object) error {
	if !s.Changed(obj) {
		return nil
	}
	err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(s.before, client.MergeFromWithOptimisticLock{}))
	switch {
	case err == nil:
		s.before = obj.DeepCopyObject().(client.Object)
		return nil
	case kerrors.IsNotFound(err):
		return nil
	case kerrors.IsConflict(err):
		return fmt.Errorf("writing the status of %s: %w", ObjectName(obj), ErrStatusConflict)
	default:
		return fmt.Errorf("writing the status of %s: %w", ObjectName(obj), err)
	}
}

// Settle folds a status write's error into a pass's result: a conflict
// becomes a quick requeue, any other write error joins the pass's error.
func Settle(res ctrl.Result, err, patchErr error) (ctrl.Result, error) {
	switch {
	case patchErr == nil:
		return res, err
	case errors.Is(patchErr, ErrStatusConflict):
		return ctrl.Result{RequeueAfter: ConflictRetry}, nil
	default:
		return res, errors.Join(err, patchErr)
	}
}

// ObjectName is Kind namespace/name for messages; the kind comes from
// the Go type when the object carries none (typed objects read through a
// client do not).
func ObjectName(obj client.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		t := reflect.TypeOf(obj)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		kind = t.Name()
	}
	if ns := obj.GetNamespace(); ns != "" {
		return kind + " " + ns + "/" + obj.GetName()
	}
	return kind + " " + obj.GetName()
}

// comparableStatus is obj's status as JSON-shaped data with condition
// times and the ignored fields removed.
func comparableStatus(obj client.Object, ignore []string) (any, bool) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, false
	}
	st, ok := u["status"].(map[string]any)
	if !ok {
		return u["status"], true
	}
	for _, f := range ignore {
		delete(st, f)
	}
	dropConditionTimes(st)
	return st, true
}

// dropConditionTimes removes lastTransitionTime from every entry of every
// "conditions" list under v.
func dropConditionTimes(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if k == "conditions" {
				if list, ok := x.([]any); ok {
					for _, c := range list {
						if m, ok := c.(map[string]any); ok {
							delete(m, "lastTransitionTime")
						}
					}
				}
				continue
			}
			dropConditionTimes(x)
		}
	case []any:
		for _, x := range t {
			dropConditionTimes(x)
		}
	}
}
