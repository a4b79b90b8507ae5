// Package operator builds the manager cmd/metal3-operator runs: the
// BareMetalHost controller over the Redfish provisioner, on the shared
// operator settings of internal/operatorkit.
package operator
