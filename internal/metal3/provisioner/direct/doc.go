// Package direct is the lifecycle provisioner.Provisioner over a host's BMC
// alone, with no provisioning engine: what the BareMetalHost controller did
// before it drove Ironic, and what it drives when no Ironic is configured.
//
// It keeps what a BMC can do alone: power, out-of-band inspection, and
// live ISOs booted from virtual media. Register checks the BMC accepts
// new or changed credentials and answers with the host's UID as its id;
// Inspect reads the inventory over the BMC; Prepare has nothing to apply
// (no RAID or firmware settings through the BMC here); Provision boots a
// live-iso spec.image from virtual media (inserted by URL, boot override
// Cd once, powered on; the ISO carries its own configuration, so
// user-data, network-data and meta-data are not sent) and refuses any
// other image with an ErrorMessage naming spec.image (ErrDiskImage: a
// disk image needs Ironic's deploy ramdisk to be written to a disk), with
// nothing sent to the BMC; a custom deploy without an image powers the
// host on only (there is no deploy ramdisk to run the method); Adopt,
// Delete and Detach have nothing to do; Deprovision ejects the media and
// powers the host off.
//
// Power requests go out once per transition: the Factory remembers, per
// host and in memory, the power state it last asked for and when. While
// that request is in flight (the BMC still reports the old state, within
// Options.PowerTimeout) a call asking for the same state reads the state
// and answers Dirty without sending anything; after the timeout it sends
// again. A reboot is done once the BMC accepted it; a power-on asked for
// soon after it is taken as in flight.
package direct
