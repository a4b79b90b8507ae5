// Package emulator is a Redfish BMC emulator: N virtual hosts served over
// real Redfish HTTP(S), for the BareMetalHost controller and its tests
// (driven with gofish) where there is no hardware.
//
// # Resources
//
// One service serves every host; a host's BMC address is its system's URL
// (Address). Per host <h>:
//
//	/redfish/v1/Systems/<h>                           ComputerSystem: PowerState, Boot, ProcessorSummary,
//	                                                  MemorySummary, UUID, SerialNumber, BiosVersion; PATCH Boot
//	/redfish/v1/Systems/<h>/Actions/ComputerSystem.Reset   On, ForceOff, GracefulShutdown, ForceRestart, GracefulRestart
//	/redfish/v1/Systems/<h>/{Processors,Memory,EthernetInterfaces,Storage,SimpleStorage,Bios}
//	/redfish/v1/Managers/<h>                          the host's BMC
//	/redfish/v1/Managers/<h>/VirtualMedia/Cd          InsertMedia, EjectMedia
//
// plus the service root, the Systems and Managers collections (the hosts
// the client's credentials open) and the SessionService. The inventory is
// derived from the Config only, so two servers of one config agree: one
// processor (CPU0) with Host.CPUs cores of one thread each
// (ProcessorSummary: Count 1, CoreCount and LogicalProcessorCount CPUs),
// one DIMM, one storage subsystem "1" with the host's disks as Drives.
//
// # Authentication
//
// Everything but the service root and POST .../SessionService/Sessions
// needs basic credentials or the X-Auth-Token of a session. A host's
// resources need the host's credentials (Host.Username and Password, else
// the Config's). Passwords, tokens and user-data are never logged nor
// quoted in errors; an image URL is logged without user information or
// query.
//
// # Power and boot
//
// Writable: Boot.BootSourceOverrideTarget (None, Pxe, Cd, Hdd),
// BootSourceOverrideEnabled (Disabled, Once, Continuous) and
// BootSourceOverrideMode (UEFI, Legacy); other properties are refused
// with 400, annotations (names with "@") ignored. Resets other than the
// five are refused with 400. A power-on consumes a Once override.
//
// A host powered on with media inserted boots it, whatever the override;
// without media it boots from disk, which only a provisioned host (one
// that booted from media and was not deprovisioned since, see Nodes)
// has; an override to Pxe or to an empty CD boots nothing. Booting takes
// Config.BootDelay, after which HostState.Booted is true.
//
// InsertMedia records Image, Inserted, WriteProtected and TransferMethod
// and answers 409 while media is inserted (eject first). Its Oem section
// "Airship" carries ImageChecksum, ImageChecksumType, ImageFormat and
// base64 UserData, NetworkData and MetaData: how the provisioner passes
// cloud-init data without Ironic. A real BMC ignores Oem.
//
// # Nodes
//
// With a target cluster (Options.Target or TargetConfig), a host that
// boots from media gets a Node named by the meta-data's local-hostname
// (or local_hostname; else the host's name), with spec.providerID from
// providerid (or provider-id), the meta-data's labels, the annotation
// kwok.x-k8s.io/node=fake (kwok then marks it Ready) and addresses: the
// first NIC's IP as InternalIP, the name as Hostname. Meta-data may be
// JSON or YAML. Powering the host off removes the kwok annotation and sets
// the Ready condition False with reason PoweredOff; booting it again
// (from media, or from disk) hands the Node back to kwok.
//
// Deprovisioning deletes the Node and forgets the provisioning, so that
// the host has no disk to boot from until it boots from media again. A
// host that booted from media is deprovisioned by either of:
//
//   - a power-off request (ForceOff or GracefulShutdown, the host on or
//     already off) while the virtual CD is empty, after an EjectMedia since
//     the host last powered on;
//   - an EjectMedia of the media the host last booted from while the host
//     is off (a provisioner sends no power-off request to a host that is
//     already off, so this is how deprovisioning an off host shows).
//
// Nothing else deprovisions: an EjectMedia while the host is on only arms
// the first way (a restart then boots from disk and keeps the Node), and
// ejecting media that was inserted after the last boot, or powering off
// with media inserted, keeps the Node. Node writes are retried with
// backoff and end in the host's latest state.
//
// # Faults
//
// SetFault makes one host's requests fail: the connection closed
// (Unreachable), held (Delay), resets answered 500 (FailResets), or 401
// whatever the credentials (WrongCredentials). The service root and
// sessions are shared by all hosts and stay up.
package emulator
