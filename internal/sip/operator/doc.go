// Package operator builds the manager cmd/sip-operator runs: the
// SIPCluster controller on operatorkit's shared settings (metrics, probes,
// leader election, client rate), after waiting for the SIPCluster CRD.
package operator
