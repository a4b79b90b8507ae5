// Package provisioner is what the BareMetalHost controller, the
// BaremetalManager executor and `airshipctl baremetal` ask of a host's BMC:
// register, inspect, power, boot from virtual media and eject. The Redfish
// implementation is in provisioner/redfish; unit tests of one controller step
// may use a fake. Errors are classified with the sentinels here and never
// hold a password.
package provisioner
