// Package configdrivetest makes disk images for tests of the config
// drive, the deploy agent and the emulator: GPT and MBR tables written by
// go-diskfs (an implementation apart from package configdrive's); and
// checks, with package configdrive's reader, that a host's disk holds a
// deployed image and its config drive (ProvisionedDisk).
package configdrivetest

import (
	"bytes"
	"os"
	"slices"
	"testing"

	diskfs "github.com/diskfs/go-diskfs"
	"github.com/diskfs/go-diskfs/partition/gpt"
	"github.com/diskfs/go-diskfs/partition/mbr"

	"github.com/airshipit/airship-go/internal/configdrive"
)

// GPTImage writes a disk image of size bytes at path with a GPT table of
// one Linux partition from sector 2048 (1 MiB) to half the disk, and
// returns its bytes.
func GPTImage(t testing.TB, path string, size int64) []byte {
	t.Helper()
	d, err := diskfs.Create(path, size, diskfs.SectorSizeDefault)
	if err != nil {
		t.Fatalf("creating %s: %v", path, err)
	}
	end := uint64(size/512/2) - 1
	table := &gpt.Table{LogicalSectorSize: 512, PhysicalSectorSize: 512, ProtectiveMBR: true, Partitions: []*gpt.Partition{
		{Index: 1, Start: 2048, End: end, Type: gpt.LinuxFilesystem, Name: "root"},
	}}
	if err := d.Partition(table); err != nil {
		t.Fatalf("partitioning %s: %v", path, err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("closing %s: %v", path, err)
	}
	return fill(t, path, 2048*512, int64(end-2048+1)*512)
}

// MBRImage is GPTImage with an MBR table (one primary Linux partition).
func MBRImage(t testing.TB, path string, size int64) []byte {
	t.Helper()
	d, err := diskfs.Create(path, size, diskfs.SectorSizeDefault)
	if err != nil {
		t.Fatalf("creating %s: %v", path, err)
	}
	n := uint32(size/512/2) - 2048
	table := &mbr.Table{LogicalSectorSize: 512, PhysicalSectorSize: 512, Partitions: []*mbr.Partition{
		{Bootable: true, Type: mbr.Linux, Start: 2048, Size: n},
	}}
	if err := d.Partition(table); err != nil {
		t.Fatalf("partitioning %s: %v", path, err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("closing %s: %v", path, err)
	}
	return fill(t, path, 2048*512, int64(n)*512)
}

// fill writes a recognisable pattern into the partition and returns the
// whole image.
func fill(t testing.TB, path string, off, n int64) []byte {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	pat := make([]byte, 4096)
	for i := range pat {
		pat[i] = byte(i*7 + 1)
	}
	for o := off; o < off+n && o < off+1<<20; o += int64(len(pat)) {
		if _, err := f.WriteAt(pat, o); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// FirstPartition is the first partition of the disk image image (bytes),
// as GPTImage and MBRImage lay it out.
func FirstPartition(t testing.TB, image []byte) configdrive.Partition {
	t.Helper()
	tbl, err := configdrive.ReadTable(bytes.NewReader(image), int64(len(image)))
	if err != nil {
		t.Fatalf("the image's partition table: %v", err)
	}
	if len(tbl.Partitions) == 0 {
		t.Fatal("the image has no partition")
	}
	return tbl.Partitions[0]
}

// ProvisionedDisk checks that the disk file at path (an emulated host's
// disk once Ironic deployed image, a GPT disk image's bytes, to it through
// the deploy agent) holds image: a GPT keeping the image's first partition
// at its place with its bytes, and a config drive partition the agent
// added. It returns the config drive read from the disk. Only the image's
// partition is read of the disk (a host's disk is gigabytes, sparse).
func ProvisionedDisk(t testing.TB, path string, image []byte) configdrive.Data {
	t.Helper()
	want := FirstPartition(t, image)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the host's disk: %v", err)
	}
	defer func() { _ = f.Close() }() // read only
	st, err := f.Stat()
	if err != nil {
		t.Fatalf("the host's disk: %v", err)
	}
	tbl, err := configdrive.ReadTable(f, st.Size())
	if err != nil {
		t.Fatalf("the partition table of the host's disk %s: %v", path, err)
	}
	if tbl.Kind != "gpt" {
		t.Errorf("the host's disk %s has a %s table, want the image's GPT", path, tbl.Kind)
	}
	if !slices.ContainsFunc(tbl.Partitions, func(p configdrive.Partition) bool {
		return p.Start == want.Start && p.Size == want.Size && p.UUID == want.UUID
	}) {
		t.Errorf("the host's disk %s lost the image's partition %+v: %+v", path, want, tbl.Partitions)
	}
	if !slices.ContainsFunc(tbl.Partitions, func(p configdrive.Partition) bool { return p.Name == configdrive.Label }) {
		t.Errorf("the host's disk %s has no config drive partition: %+v", path, tbl.Partitions)
	}
	got := make([]byte, want.Size)
	if _, err := f.ReadAt(got, want.Start); err != nil {
		t.Fatalf("reading the image's partition on the host's disk %s: %v", path, err)
	}
	if !bytes.Equal(got, image[want.Start:want.Start+want.Size]) {
		t.Errorf("the host's disk %s does not hold the image's partition (%d bytes at %d)", path, want.Size, want.Start)
	}
	d, err := configdrive.ReadDisk(f, st.Size())
	if err != nil {
		t.Fatalf("the config drive on the host's disk %s: %v", path, err)
	}
	return d
}
