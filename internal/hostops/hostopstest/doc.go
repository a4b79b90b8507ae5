// Package hostopstest is a provisioner.BMCFactory held in memory, for tests of
// the code that runs host operations (hostops, the BaremetalManager
// executor, `airshipctl baremetal`) and of the BareMetalHost controller
// without a BMC; StartEmulator and
// EmulatedBMC serve emulated hosts over real Redfish instead, and Recorder
// records which requests reached a BMC or a proxy.
package hostopstest
