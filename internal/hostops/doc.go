// Package hostops selects BareMetalHosts in a cluster and runs one operation
// on each through its BMC: reboot, power off, power on, boot an ISO from
// virtual media (remote-direct) and eject virtual media. It is what the
// BaremetalManager executor and `airshipctl baremetal` share; it is
// airshipctl's, not the metal3 operator's, though both speak to BMCs
// through internal/metal3/provisioner.
//
// A host is reached with the address of its spec.bmc and the username and
// password of the Secret spec.bmc.credentialsName names (same namespace),
// through a provisioner.BMCFactory. Hosts are worked on in parallel (bounded),
// under one overall timeout; every operation waits until the host reports
// the state it asked for. Results are per host; a password never appears
// in an error or a progress message.
//
// NewFactory is the Redfish factory of airshipctl (`airshipctl baremetal`,
// the BaremetalManager executor) under the airship config's
// managementConfiguration: BMC requests go through the environment's proxy
// only with useproxy: true, and skip certificate checks only with
// insecure: true (or the host's spec.bmc.disableCertificateVerification).
// Every request is bounded by the provisioner's timeout and answer cap.
package hostops
