// Package provisioner is what the parts that act on hosts ask of them. The
// BareMetalHost controller drives a Provisioner (lifecycle.go): register,
// inspect, prepare, provision, adopt, deprovision, delete, detach and power,
// each answering with a Result that says whether the work is done, still
// under way, or failed on the engine's side. The BaremetalManager executor
// and `airshipctl baremetal` act on a BMC directly (provisioner.go): power,
// inventory and virtual media, implemented over Redfish in
// provisioner/redfish. Errors are classified with the sentinels here and
// never hold a password.
package provisioner
