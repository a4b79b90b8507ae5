// Package metal3 is the bare-metal part of the project: BareMetalHosts
// (metal3.io/v1alpha1, the upstream types) driven over Redfish by this
// project's own controller, with no Ironic. Its packages, from the bottom:
// bmc (BMC addresses), provisioner (what the controller asks of a BMC, with a
// Redfish implementation in provisioner/redfish), baremetalhost (the host state
// machine) and operator (the manager cmd/metal3-operator runs).
package metal3
