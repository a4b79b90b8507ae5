// Package metal3operatorcmd is the metal3-operator binary's Spec for
// operatorcmd: its name and help around the Metal3 operator's options and
// Run (internal/metal3/metal3operator: the BareMetalHost controller and the
// Cluster API provider's). cmd/metal3-operator runs it with
// operatorcmd.Main; operatorcmd's tests cover its command line.
package metal3operatorcmd
