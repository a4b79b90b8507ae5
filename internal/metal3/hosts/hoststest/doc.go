// Package hoststest is a provisioner.Factory held in memory, for tests of
// the code that runs host operations (hosts, the BaremetalManager
// executor, `airshipctl baremetal`) without a BMC.
package hoststest
