// Package bmc parses BareMetalHost BMC addresses (spec.bmc.address) into
// what a client needs to reach the BMC: the protocol, the endpoint URL and
// the system's path. Only the Redfish schemes are supported; any other
// scheme is an error that names it and lists the supported ones.
package bmc
