package capi

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/operatorkit"
)

// RefEqual reports whether two references name the same object. Only the
// name and namespace count: they are all a claim's server writes, and a
// reference someone completed with a kind or uid names the same object.
func RefEqual(a, b *corev1.ObjectReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Name == b.Name && a.Namespace == b.Namespace
}

// SetClaimStatus writes a claim's status: ref, what it was given (an
// IPAddress, a Metal3Data), and msg, why it was given nothing. given and
// message point at those two fields of claim's status. Nothing is written
// when both already say so.
//
// The write is the kit's status patch, with the optimistic lock: a pass
// that listed the claim from a stale cache conflicts (an error wrapping
// operatorkit.ErrStatusConflict, which operatorkit.Settle turns into a
// quick retry) rather than overwriting a newer status.
func SetClaimStatus(ctx context.Context, c client.Client, claim client.Object, given **corev1.ObjectReference, message **string, ref *corev1.ObjectReference, msg *string) error {
	if ptr.Equal(*message, msg) && RefEqual(*given, ref) {
		return nil
	}
	snap := operatorkit.SnapshotStatus(claim)
	*given, *message = ref, msg
	return snap.Patch(ctx, c, claim)
}
