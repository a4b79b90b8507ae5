// Package kubernetesapply is the KubernetesApply executor: it applies the
// deployable documents of a phase's bundle to the phase's cluster with
// internal/apply (server-side apply, inventory, prune, wait) and reports
// the phase's status from its inventory and the live objects.
package kubernetesapply
