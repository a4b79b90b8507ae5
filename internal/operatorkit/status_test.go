package operatorkit

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestStatusSnapshot writes a Pod's status through a real API server (a
// Pod is a built-in kind with a status subresource and conditions): a
// change is written once, condition-time or ignored-field churn is not
// written at all, a write after someone else's is a conflict, and a
// deleted object is not an error.
func TestStatusSnapshot(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	ctx := context.Background()
	c := env.Client
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kit"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	rv := func() string {
		t.Helper()
		got := &corev1.Pod{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
			t.Fatal(err)
		}
		return got.ResourceVersion
	}

	// A change is written, and the snapshot moves on.
	snap := SnapshotStatus(pod, "startTime")
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "Waiting", LastTransitionTime: metav1.Now()}}
	if !snap.Changed(pod) {
		t.Fatal("a new condition is not a change")
	}
	if err := snap.Patch(ctx, c, pod); err != nil {
		t.Fatal(err)
	}
	written := rv()

	// Only churn: nothing is written.
	pod.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now().Add(time.Hour))
	now := metav1.Now()
	pod.Status.StartTime = &now
	if snap.Changed(pod) {
		t.Fatal("condition time and an ignored field count as a change")
	}
	if err := snap.Patch(ctx, c, pod); err != nil {
		t.Fatal(err)
	}
	if got := rv(); got != written {
		t.Fatalf("resourceVersion %s -> %s: churn was written", written, got)
	}

	// Someone else writes after this pass read: the write conflicts and
	// Settle turns that into a quick requeue.
	other := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), other); err != nil {
		t.Fatal(err)
	}
	other.Labels = map[string]string{"by": "someone-else"}
	if err := c.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	pod.Status.Conditions[0].Reason = "Other"
	err := snap.Patch(ctx, c, pod)
	if !errors.Is(err, ErrStatusConflict) {
		t.Fatalf("Patch after another write = %v, want ErrStatusConflict", err)
	}
	if res, err := Settle(ctrl.Result{}, nil, err); err != nil || res.RequeueAfter != ConflictRetry {
		t.Fatalf("Settle(conflict) = %v, %v", res, err)
	}

	// The pass's own locked finalizer write moves the resourceVersion;
	// Rebase keeps the status write from conflicting with it.
	mine := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), mine); err != nil {
		t.Fatal(err)
	}
	own := SnapshotStatus(mine)
	if wrote, err := EnsureFinalizer(ctx, c, mine, "test.airshipit.org/kit"); err != nil || !wrote {
		t.Fatalf("EnsureFinalizer = %v, %v", wrote, err)
	}
	mine.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	if err := SnapshotStatus(own.Before()).Patch(ctx, c, mine); !errors.Is(err, ErrStatusConflict) {
		t.Fatalf("Patch without Rebase after the pass's own write = %v, want a conflict", err)
	}
	own.Rebase(mine)
	if err := own.Patch(ctx, c, mine); err != nil {
		t.Fatalf("Patch after Rebase = %v", err)
	}
	// A finalizer write on a stale copy conflicts instead of dropping what
	// the newer version holds.
	stale := own.Before().DeepCopyObject().(*corev1.Pod)
	stale.ResourceVersion = written
	if _, err := EnsureFinalizer(ctx, c, stale, "test.airshipit.org/other"); !apierrors.IsConflict(err) {
		t.Fatalf("EnsureFinalizer on a stale copy = %v, want a conflict", err)
	}
	if err := RemoveFinalizer(ctx, c, mine, "test.airshipit.org/kit"); err != nil {
		t.Fatal(err)
	}
	other = mine

	// Gone: not an error.
	if err := c.Delete(ctx, other, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	fresh := SnapshotStatus(other)
	other.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := fresh.Patch(ctx, c, other); err != nil {
		t.Fatalf("Patch of a deleted object = %v, want nil", err)
	}
}
