// Package operatorkit is what every operator of the project shares: the
// flags of a controller-runtime manager (metrics, probes, leader election,
// client rate), building that manager with its health and readiness checks,
// and waiting for the operator's CRDs to be served. armada-operator and
// metal3-operator both use it; a new operator does too.
package operatorkit
