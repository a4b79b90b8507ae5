// Package bmc parses BareMetalHost BMC addresses (spec.bmc.address) into
// what a client needs to reach the BMC: the driver, the endpoint URL and
// the system's path. Only the Redfish schemes are supported; any other
// scheme is an error that names it and lists the supported ones.
//
// It stands outside the metal3 operator's tree because three programs read
// these addresses: the BareMetalHost controller and its provisioner,
// airshipctl's host operations (the baremetal command and the
// BaremetalManager executor), and SIP's jump host (internal/sip/services),
// whose power script reaches each host's BMC.
package bmc
