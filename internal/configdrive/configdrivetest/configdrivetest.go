// Package configdrivetest makes disk images for tests of the config
// drive, the deploy agent and the emulator: GPT and MBR tables written by
// go-diskfs (an implementation apart from package configdrive's).
package configdrivetest

import (
	"os"
	"testing"

	diskfs "github.com/diskfs/go-diskfs"
	"github.com/diskfs/go-diskfs/partition/gpt"
	"github.com/diskfs/go-diskfs/partition/mbr"
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
