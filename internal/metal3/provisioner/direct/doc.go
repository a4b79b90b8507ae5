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
// Delete and Detach have nothing to do on the BMC (they forget what is
// remembered of the host); Deprovision ejects the media and
// powers the host off.
//
// Power requests go out once per transition: the Factory remembers, per
// host and in memory, the request in flight (its target, when it was first
// and last sent, how many went). While it is in flight (the BMC still
// reports the old state, within Options.PowerTimeout) a call asking for
// the same state reads the state and answers Dirty, with a Progress,
// without sending anything; after the timeout the request is sent again,
// at most Options.PowerRetries times, then the call fails with
// ErrPowerTimeout in its ErrorMessage (the next call starts afresh). A BMC
// that refuses a request sent again (409 or 400: it is still at the first)
// is taken as still at it, not as an error. A reboot is done once the BMC
// accepted it; a power-on asked for soon after it is taken as in flight.
// Provision waits for a request in flight before it boots (Boot powers on
// or restarts by the power state, stale until then), and sends Boot once
// per image until the host is deprovisioned, whatever the BMC then shows
// of its media; Deprovision ejects once and is Dirty until the host is
// off, so powering off before delete sends nothing more.
package direct
