// Package operatorcmd is the command line every operator binary shares:
// its Go flags, --kubeconfig, zap logging flags, the version subcommand,
// finding the cluster in a pod or out of one, and the leader election
// namespace taken from the kubeconfig's context when run outside a pod.
package operatorcmd
