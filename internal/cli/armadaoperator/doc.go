// Package armadaoperator is the command line of the armada-operator binary,
// on the same framework as airshipctl and promenade: --help exits 0, a bad
// flag exits 2 with the usage, `version` prints what it was built with.
//
// Run out of a cluster with only --kubeconfig, the operator takes the
// namespace of its leader election Lease from the kubeconfig's current
// context (default when the context names none), as kubectl picks a
// namespace; in a pod it is the pod's namespace.
package armadaoperator
