// Package configdrive reads, builds and places an OpenStack config drive:
// an ISO 9660 image with the volume label config-2 holding
// openstack/latest/meta_data.json, user_data and network_data.json, what
// Ironic hands its deploy agent and cloud-init reads at boot.
//
// Read reads the three files of such an image (meta_data.json is
// required, the other two optional) with go-diskfs, Rock Ridge and Joliet
// names included. Find locates one on a disk image: the disk itself, else
// the first partition of its GPT or MBR table (ReadTable) whose ISO 9660
// volume label is config-2; ReadDisk and ReadFile find and read it.
// ReadISOFile reads one file of any ISO 9660 image by a path of any case
// (a deploy ISO's grub.cfg). Build makes an image of the three files
// (Rock Ridge and Joliet, label config-2), as Ironic does.
//
// AddPartition adds a partition at the end of a disk image, as IPA does
// for the config drive: on GPT it first moves the backup header and array
// to the disk's end (the image written may be smaller than the disk),
// then adds an entry (type Linux filesystem, named as asked); on MBR it
// adds a primary partition. Either is about 64 MiB (MaxPartitionSize),
// aligned to 1 MiB.
//
// Reading is bounded for hostile images: before go-diskfs reads an image,
// its volume descriptors, path tables, directory trees and SUSP
// continuation areas are walked and any location or size past the
// image's end, any loop or excessive depth is an error; an image is at
// most 64 MiB, a file at most MaxFileSize; partition tables are checked
// against the disk's size and their checksums; a panic in go-diskfs is an
// error. A fuzz target covers Read, ReadDisk and ReadTable.
//
// Package configdrivetest writes GPT and MBR disk images for tests with
// go-diskfs, an implementation apart from this package's.
package configdrive
