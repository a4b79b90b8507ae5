// Package hoststest is a provisioner.Factory held in memory, for tests of
// the code that runs host operations (hosts, the BaremetalManager
// executor, `airshipctl baremetal`) without a BMC; StartEmulator and
// EmulatedBMC serve emulated hosts over real Redfish instead, and Recorder
// records which requests reached a BMC or a proxy.
package hoststest
