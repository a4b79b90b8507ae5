// Package sipoperator is the sip-operator command: the shared operator
// flags (operatorcmd) around the SIPCluster controller (internal/sip/operator).
package sipoperator
