// Package ironic is the BareMetalHost controller's provisioner.Provisioner
// over OpenStack Ironic's REST API (gophercloud v2 baremetal): one Ironic
// node per BareMetalHost, named "namespace~name" as upstream BMO names it,
// driven through Ironic's provision state machine.
//
// # Endpoint, auth and versions
//
// New takes the endpoint (with or without /v1), its auth — noauth, refused
// unless the endpoint's host is a loopback address, or http_basic, whose
// credentials ReadBasicAuthFile reads from a 0600 YAML file (username:,
// password:) — and a CA bundle for https. Every request goes through
// internal/httplimit's bounded client (a timeout and a response size
// cap). The first Open reads GET / and refuses an Ironic whose v1 API's
// maximum version is older than Microversion, naming the endpoint, its
// version and the one needed (a failed check is answered again for 2 s
// without a request, so an Ironic that is down is not asked once per
// host); every request then pins Microversion:
//
//	feature used                                        microversion
//	logical node names ("ns~name")                      1.5
//	manageable state, manage/provide verbs              1.4, 1.11 (enroll)
//	inspect (out-of-band, redfish)                      1.6
//	RAID target config + manual clean steps             1.12, 1.15
//	adopt verb (take an active host over)               1.17
//	port pxe_enabled                                    1.19
//	soft power off / soft reboot with timeout           1.27
//	dynamic interfaces (boot/deploy/inspect/raid/...)   1.31
//	bios_interface                                      1.40
//	abort in inspect wait                               1.41
//	automated_clean per node                            1.47
//	config drive as a dict (meta_data, user_data)       1.56
//	deploy_steps when deploying (customDeploy)          1.69
//	node inventory (GET /v1/nodes/{id}/inventory)       1.81  <- the pin
//
// Ironic 21.4 ("Zed", Debian 12) has 1.82; upstream BMO's provisioner
// needs 1.89 and is not used.
//
// # Nodes
//
// Register finds the node by status.provisioning.ID, else by name, else
// creates it: driver redfish, driver_info redfish_address (the BMC
// address's scheme, host and port), redfish_system_id (its path),
// redfish_username/redfish_password, redfish_verify_ca false with
// disableCertificateVerification, deploy_iso (Options.DeployISO) and
// deploy_forces_oob_reboot (and image_download_source when
// Options.ImageDownloadSource is set); boot interface
// redfish-virtual-media for both redfish schemes (there is no PXE
// network), inspect, management, power,
// RAID and BIOS redfish, deploy direct (ramdisk for a live ISO,
// custom-agent for a custom deploy), automated_clean from
// automatedCleaningMode, properties.capabilities boot_mode; a port with
// pxe_enabled for bootMACAddress, and one per status.hardware NIC (a
// node enrolled again after a pivot). Then manage (enroll → verifying →
// manageable): Ironic reads the power state, never changes it, so a
// provisioned host registered again is not touched. driver_info is sent
// again when the BMC address or the deploy ISO changed, or the
// credentials changed since this process last sent them (Ironic masks the
// password in its answers; driver_info is never logged). A node deleted
// behind the controller's back is created again.
//
// # States
//
//	method       Ironic states walked                          Dirty while                        ErrorMessage
//	Register     enroll → verifying → manageable               verifying                          enroll with last_error (BMC named)
//	Inspect      manageable → inspecting → manageable          inspecting, inspect wait           inspect failed
//	Prepare      manageable [→ cleaning (RAID)] → provide      cleaning, clean wait               clean failed; spec.firmware, software RAID
//	             → cleaning (automated_clean) → available
//	Provision    available → deploying → wait call-back        deploying, wait call-back,         deploy failed (names the image);
//	             → active                                      cleaning, deleting                 Ironic's validation
//	Adopt        manageable → adopting → active                adopting                           adopt failed
//	Deprovision  active → deleting → cleaning → available      deleting, cleaning, clean wait     error (tear down), clean failed
//	Delete       DELETE (maintenance first where needed)       verifying, *ing states
//	Detach       maintenance, DELETE (no power change)
//
// A failure is reported once as an ErrorMessage; the next call on the
// same failure (the controller's retry after its backoff) starts a new
// attempt (manage, inspect, manage after clean failed, active after deploy
// failed, adopt, deleted after error). 409 (node locked) is Dirty with a
// short RequeueAfter, and so is a node Ironic put in maintenance for a
// power failure (no state change is asked until the BMC is back); no answer, a timeout or a 5xx wrap
// provisioner.ErrEngineUnavailable. Errors name the endpoint (no user
// information) and the node, and quote Ironic's faultstring only.
//
// Provision sets instance_info: image_source; image_checksum for md5, no
// type or auto, and for any checksum that is a URL (Ironic fetches it);
// image_os_hash_algo/image_os_hash_value for sha256 and sha512;
// image_disk_format; capabilities (boot_mode, secure_boot); root_device
// from the hints. A live ISO is deploy interface ramdisk with boot_iso and
// no config drive; a custom deploy is custom-agent with one deploy step
// named by spec.customDeploy.method (interface deploy, priority 80). The
// config drive is a dict: meta_data and network_data decoded from the
// ProvisionData's JSON or YAML, user_data the raw text. A stale
// instance_info of an available node is overwritten.
//
// Prepare writes properties.root_device and automated_clean. Hardware RAID
// (spec.raid.hardwareRAIDVolumes) becomes target_raid_config and the
// redfish RAID interface's delete_configuration and create_configuration
// clean steps. Software RAID needs the agent RAID interface and agent
// RAID steps, and spec.firmware (deprecated upstream) vendor-specific BIOS
// attribute names: both are an ErrorMessage naming the field.
//
// # Stuck nodes
//
// A node can stay in a transitional state for good: a conductor's write
// that failed ("database is locked" on sqlite) leaves it verifying, an
// agent that lost its token leaves it in clean wait or wait call-back.
// Each Dirty answer in such a state carries a Progress saying for how
// long the node has been there, measured from Ironic's
// provision_updated_at, so a restarted operator measures the same. Past
// the state's deadline the first call is an ErrorMessage naming the node,
// its state, since when and what happens next (the controller records it
// as the step's error type: registration, inspection, preparation,
// provisioning), and the next call, the controller's retry after its
// backoff, takes the node out:
//
//	state(s)                     Ironic times it out           deadline                  way out (Ironic 21.4's state machine)
//	verifying, inspecting,       no (only a conductor          StuckTimeout (10 min)     no verb leaves them (manage is refused in
//	cleaning, deploying,         restart fails them)                                     verifying): maintenance and DELETE, then
//	deleting, adopting                                                                   Register enrolls the node again
//	clean wait                   clean_callback_timeout        CallbackTimeout (30 min)  abort → clean failed, cleaned again
//	inspect wait                 inspect_wait_timeout          + StuckTimeout            abort → inspect failed, inspected again
//	wait call-back               deploy_callback_timeout                                 deleted (no abort there) → deleting →
//	                                                                                     cleaning → available, deployed again
//	target_power_state set       no                            StuckTimeout from         the power request sent again
//	                                                           updated_at
//
// For the three wait states Ironic is the authority: until its callback
// timeout and StuckTimeout more the provisioner only reports the wait,
// acting only where Ironic clearly did not (its timeouts off, or the node
// in maintenance, which its timeouts skip); a negative CallbackTimeout
// leaves them to Ironic alone. A power change is measured from
// updated_at, as provision_updated_at does not move for it. A node locked
// by a conductor (reservation set) is being worked on and never stuck, as
// Ironic's own timeouts skip locked nodes; nor is one Ironic holds in
// maintenance for a power failure. Delete deletes a stuck node at once,
// without a report first.
//
// Power goes through PUT states/power ("power on", "power off",
// "soft power off", "rebooting", "soft rebooting"; soft with a 180 s
// timeout, falling back to hard when the BMC refuses soft). While
// target_power_state is set, or a provision state change holds the node,
// the result is Dirty and nothing is sent again: one request per
// transition (unless the change is stuck, above).
//
// # Hardware details
//
// Ironic 21.4's redfish inspection writes the node's properties (cpus,
// cpu_arch, memory_mb, local_gb, capabilities) and one port per enabled
// NIC; it stores no inventory (only the agent's in-band inspection does,
// read from GET /v1/nodes/{id}/inventory when present). So status.hardware
// has: cpu.count and cpu.arch from properties, ramMebibytes from
// memory_mb, one storage entry of local_gb + 1 GiB (Ironic records the
// smallest disk of 4 GiB or more less 1 GiB), systemVendor.manufacturer
// from properties.vendor (recorded when Ironic verifies the BMC), and nics
// with the ports' MACs and pxe_enabled; no firmware version (Ironic 21.4
// has no firmware API). With an inventory, the CPU model, clock and
// flags, the disks (names, sizes,
// vendors, serials, WWNs), the NICs (names, IPs, speeds), the system
// vendor, the firmware and the hostname come from it. Without one, and
// with Options.BMCs (metal3-operator sets it), what the host's BMC reports
// fills the rest (mergeBMCDetails): each NIC's name, address, speed and
// model by MAC, the disks, the CPU model and clock, the product, serial
// number, firmware and hostname; Ironic's figures win where both have one,
// and a BMC that does not answer leaves Ironic's details as they are.
//
// # Memory
//
// A factory remembers, per node and in memory only: the failures (and
// stuck nodes) it reported, the inspections it started for a Refresh (until one is
// answered done) and the RAID clean steps it started, the power
// requests it sent and a hash of the credentials it sent. A restart
// forgets them: at worst one failure is reported again, an inspection
// asked with Refresh runs again, or credentials are sent again.
package ironic
