// Package configdrive reads, builds and places an OpenStack config drive:
// an ISO 9660 image with the volume label config-2 holding
// openstack/latest/meta_data.json, user_data and network_data.json, what
// Ironic hands its deploy agent and cloud-init reads at boot.
//
// Read reads the three files of such an image (user_data and
// network_data.json are optional, meta_data.json is required) with
// go-diskfs, Rock Ridge and Joliet names included; Find and ReadDisk look
// for it on a disk image: the disk itself, else each partition of its GPT
// or MBR table whose ISO 9660 volume label is config-2. Build makes an
// image of the three files (Rock Ridge and Joliet, label config-2).
//
// AddPartition adds a partition at the end of a disk image, as the deploy
// agent does for the config drive: on GPT it first moves the backup
// header to the disk's end (the image written may be smaller than the
// disk), then adds an entry; on MBR it adds a primary partition. Erase
// helpers are in the callers.
//
// Every read is bounded: sizes and offsets taken from the image are
// checked against the image's size before use, files are read up to
// MaxFileSize, and a malformed image gives an error, never a panic.
package configdrive
