// Package armadaoperatorcmd is the armada-operator binary's Spec for
// operatorcmd: its name and help around the Armada operator's options and
// Run (internal/armada/armadaoperator). cmd/armada-operator runs it with
// operatorcmd.Main; operatorcmd's tests cover its command line.
package armadaoperatorcmd
