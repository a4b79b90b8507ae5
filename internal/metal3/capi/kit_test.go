package capi

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// TestRebaseAfterOwnWrite: a pass that adds its finalizer and then writes
// its status conflicts with itself unless the snapshot is rebased; rebased,
// it writes, and a write of someone else's still conflicts.
func TestRebaseAfterOwnWrite(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := infrav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	obj := &infrav1.Metal3Data{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(obj).WithStatusSubresource(obj).Build()
	read := func() *infrav1.Metal3Data {
		t.Helper()
		got := &infrav1.Metal3Data{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
			t.Fatal(err)
		}
		return got
	}

	d := read()
	snap := operatorkit.SnapshotStatus(d)
	if wrote, err := AddFinalizer(ctx, c, d, infrav1.DataFinalizer); err != nil || !wrote {
		t.Fatalf("AddFinalizer = %v, %v", wrote, err)
	}
	d.Status.Ready = true
	if err := snap.Patch(ctx, c, d); !errors.Is(err, operatorkit.ErrStatusConflict) {
		t.Fatalf("status write after the pass's own write, not rebased = %v, want a conflict", err)
	}
	if err := Rebase(snap, d).Patch(ctx, c, d); err != nil {
		t.Fatalf("rebased status write = %v", err)
	}
	if got := read(); !got.Status.Ready {
		t.Fatalf("status.ready not written")
	}

	// Someone else writes after this pass read: still a conflict.
	d = read()
	snap = operatorkit.SnapshotStatus(d)
	other := read()
	other.Status.ErrorMessage = ptr.To("someone else's")
	if err := c.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	d.Status.Ready = false
	if err := Rebase(snap, d).Patch(ctx, c, d); !errors.Is(err, operatorkit.ErrStatusConflict) {
		t.Fatalf("write after someone else's = %v, want a conflict", err)
	}
	if err := RemoveFinalizer(ctx, c, read(), infrav1.DataFinalizer); err != nil {
		t.Fatal(err)
	}
	if err := RemoveFinalizer(ctx, c, &infrav1.Metal3Data{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gone", ResourceVersion: "1", Finalizers: []string{infrav1.DataFinalizer}}}, infrav1.DataFinalizer); err != nil {
		t.Errorf("RemoveFinalizer of an object that is gone = %v, want nil", err)
	}
}
