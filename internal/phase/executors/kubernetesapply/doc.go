// Package kubernetesapply is the KubernetesApply executor: it applies the
// deployable documents of a phase's bundle to the phase's cluster and waits
// for them. This package validates and renders; applying comes with the
// apply engine (internal/apply).
package kubernetesapply
