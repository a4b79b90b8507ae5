package capi

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

func TestRefEqual(t *testing.T) {
	ref := func(ns, name, kind string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Namespace: ns, Name: name, Kind: kind}
	}
	for _, tc := range []struct {
		name string
		a, b *corev1.ObjectReference
		want bool
	}{
		{"both nil", nil, nil, true},
		{"one nil", ref("ns", "a", ""), nil, false},
		{"other nil", nil, ref("ns", "a", ""), false},
		{"same", ref("ns", "a", ""), ref("ns", "a", ""), true},
		{"kind does not count", ref("ns", "a", "IPAddress"), ref("ns", "a", ""), true},
		{"name", ref("ns", "a", ""), ref("ns", "b", ""), false},
		{"namespace", ref("ns", "a", ""), ref("other", "a", ""), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RefEqual(tc.a, tc.b); got != tc.want {
				t.Errorf("RefEqual = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSetClaimStatus: a change is written, an unchanged status is not, and
// a claim read before someone else wrote it conflicts instead of
// overwriting the newer status.
func TestSetClaimStatus(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := ipamv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	claim := &ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(claim).WithStatusSubresource(claim).Build()
	read := func() *ipamv1.IPClaim {
		t.Helper()
		got := &ipamv1.IPClaim{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(claim), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	given := &corev1.ObjectReference{Namespace: "ns", Name: "pool-192-168-0-1"}
	stale := read()
	fresh := read()
	if err := SetClaimStatus(ctx, c, fresh, &fresh.Status.Address, &fresh.Status.ErrorMessage, given, nil); err != nil {
		t.Fatal(err)
	}
	written := read()
	if !RefEqual(written.Status.Address, given) {
		t.Fatalf("status.address = %v, want %v", written.Status.Address, given)
	}
	if err := SetClaimStatus(ctx, c, written, &written.Status.Address, &written.Status.ErrorMessage, given, nil); err != nil {
		t.Fatal(err)
	}
	if rv := read().ResourceVersion; rv != written.ResourceVersion {
		t.Errorf("resourceVersion %s -> %s: an unchanged status was written", written.ResourceVersion, rv)
	}
	err := SetClaimStatus(ctx, c, stale, &stale.Status.Address, &stale.Status.ErrorMessage, nil, ptr.To("pool exhausted"))
	if !errors.Is(err, operatorkit.ErrStatusConflict) {
		t.Fatalf("write from a stale read = %v, want a conflict", err)
	}
	if got := read(); !RefEqual(got.Status.Address, given) || got.Status.ErrorMessage != nil {
		t.Errorf("a stale write changed the status: %+v", got.Status)
	}
}
