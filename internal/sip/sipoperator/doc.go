// Package sipoperator is the SIP operator process cmd/sip-operator runs, as
// an operatorkit.Operator: the SIPCluster controller on operatorkit's
// shared settings (metrics, probes, leader election, client rate), after
// waiting for the SIPCluster and BareMetalHost CRDs.
package sipoperator
