// Package sipoperatorcmd is the sip-operator binary's Spec for operatorcmd:
// its name and help around the SIPCluster operator's options and Run
// (internal/sip/sipoperator). cmd/sip-operator runs it with operatorcmd.Main;
// operatorcmd's tests cover its command line.
package sipoperatorcmd
