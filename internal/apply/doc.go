// Package apply puts a bundle into a cluster the way airshipctl's
// KubernetesApply executor promises: server-side apply with airshipctl's
// own field manager, CRDs and Namespaces first (and waited until
// established), an inventory per phase stored in the cluster so a later
// run prunes what the bundle no longer has, an inventory policy for objects
// another inventory or nobody owns, and a wait until every object is
// Current by kstatus plus any custom JSONPath conditions.
//
// The objects of a namespace whose objects another cluster manages now
// (MovedToAnnotation, set by a pivot) or will once a move begun is finished
// (MovingToAnnotation) are left alone: not applied, pruned or waited on,
// and reported as such.
//
// An object is sent only when it may have changed (unchanged.go): the
// inventory records, per object, a hash of what was applied and the uid,
// resourceVersion and generation the apply left; a run reads the live
// objects' metadata with one LIST per kind and namespace, and counts an
// object unchanged without a request when its document hashes the same
// and nothing changed it since (the same generation and its labels and
// annotations in place, or without a generation the same
// resourceVersion). Whatever it cannot prove unchanged is applied, so
// drift is still put right.
//
// Everything is checked before anything changes: an inventory conflict
// fails the run with the list of conflicting objects and applies nothing.
package apply
