package configdrive_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	diskfs "github.com/diskfs/go-diskfs"
	"github.com/diskfs/go-diskfs/partition/gpt"
	"github.com/diskfs/go-diskfs/partition/mbr"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

var sample = configdrive.Data{
	MetaData:    []byte(`{"uuid": "1b2c", "name": "node-0", "local-hostname": "node-0"}`),
	UserData:    []byte("#cloud-config\nruncmd: [true]\n"),
	NetworkData: []byte(`{"links": [], "networks": [], "services": []}`),
}

// genisoimageBin is genisoimage's path; without it the test fails when
// AIRSHIP_REQUIRE_TESTBIN is set and is skipped otherwise.
func genisoimageBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("genisoimage")
	if err != nil {
		testtool.Missing(t, "genisoimage is not installed (%v): apt-get install genisoimage", err)
	}
	return bin
}

// genisoimage builds a config drive the way Ironic does.
func genisoimage(t *testing.T, d configdrive.Data) []byte {
	t.Helper()
	bin := genisoimageBin(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	latest := filepath.Join(src, "openstack", "latest")
	if err := os.MkdirAll(latest, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"meta_data.json": d.MetaData, "user_data": d.UserData, "network_data.json": d.NetworkData} {
		if data != nil {
			if err := os.WriteFile(filepath.Join(latest, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := filepath.Join(dir, "cd.iso")
	cmd := exec.CommandContext(t.Context(), bin, "-o", out, "-V", "config-2", "-r", "-J", "-quiet", src)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("genisoimage: %v: %s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func same(t *testing.T, got, want configdrive.Data) {
	t.Helper()
	if !bytes.Equal(got.MetaData, want.MetaData) || !bytes.Equal(got.UserData, want.UserData) || !bytes.Equal(got.NetworkData, want.NetworkData) {
		t.Fatalf("read %q / %q / %q, want %q / %q / %q", got.MetaData, got.UserData, got.NetworkData, want.MetaData, want.UserData, want.NetworkData)
	}
}

func TestReadGenisoimage(t *testing.T) {
	for _, tc := range []struct {
		name string
		data configdrive.Data
	}{
		{"all three", sample},
		{"meta-data only", configdrive.Data{MetaData: sample.MetaData}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iso := genisoimage(t, tc.data)
			got, err := configdrive.Read(bytes.NewReader(iso), int64(len(iso)))
			if err != nil {
				t.Fatal(err)
			}
			same(t, got, tc.data)
		})
	}
}

func TestBuildReadsBack(t *testing.T) {
	iso, err := configdrive.Build(sample)
	if err != nil {
		t.Fatal(err)
	}
	if l := configdrive.VolumeLabel(bytes.NewReader(iso), int64(len(iso))); l != "config-2" {
		t.Fatalf("label %q", l)
	}
	got, err := configdrive.Read(bytes.NewReader(iso), int64(len(iso)))
	if err != nil {
		t.Fatal(err)
	}
	same(t, got, sample)
	if _, err := configdrive.Build(configdrive.Data{}); err == nil {
		t.Fatal("Build without meta-data: no error")
	}
}

func TestReadRefusesOtherLabel(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o.iso")
	bin := genisoimageBin(t)
	if b, err := exec.CommandContext(t.Context(), bin, "-o", out, "-V", "other", "-r", "-quiet", filepath.Join(dir, "x")).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	data, _ := os.ReadFile(out)
	if _, err := configdrive.Read(bytes.NewReader(data), int64(len(data))); err == nil || !strings.Contains(err.Error(), "label") {
		t.Fatalf("Read of a volume labelled other: %v", err)
	}
}

// TestAddPartitionAndFind writes a config drive into a partition added
// at the end of a disk bigger than its image, as the agent does, and
// finds it again; go-diskfs must read the table the package wrote.
func TestAddPartitionAndFind(t *testing.T) {
	iso, err := configdrive.Build(sample)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"gpt", "mbr"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			img := filepath.Join(dir, "img")
			var want []byte
			if kind == "gpt" {
				want = configdrivetest.GPTImage(t, img, 8<<20)
			} else {
				want = configdrivetest.MBRImage(t, img, 8<<20)
			}
			// The disk is bigger than the image: write it at its start.
			disk := filepath.Join(dir, "disk")
			const size = 256 << 20
			f, err := os.OpenFile(disk, os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			if err := f.Truncate(size); err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(want, 0); err != nil {
				t.Fatal(err)
			}
			if _, _, err := configdrive.Find(f, size); !errors.Is(err, configdrive.ErrNotFound) {
				t.Fatalf("Find before: %v, want ErrNotFound", err)
			}
			p, err := configdrive.AddPartition(f, size, int64(len(iso)), "config-2")
			if err != nil {
				t.Fatal(err)
			}
			if p.Start+p.Size > size || p.Start+p.Size < size-1<<20 || p.Size < configdrive.MaxPartitionSize || p.Size > configdrive.MaxPartitionSize+1<<20 {
				t.Fatalf("partition %+v: not the last 64 MiB of the disk", p)
			}
			if _, err := f.WriteAt(iso, p.Start); err != nil {
				t.Fatal(err)
			}
			got, err := configdrive.ReadDisk(f, size)
			if err != nil {
				t.Fatal(err)
			}
			same(t, got, sample)
			// The image's own partition is untouched.
			head := make([]byte, 1<<20)
			if _, err := f.ReadAt(head, 1<<20); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(head, want[1<<20:2<<20]) {
				t.Fatal("the image's partition changed")
			}
			checkWithDiskfs(t, disk, kind, p)
		})
	}
}

// checkWithDiskfs reads the table with go-diskfs: checksums, backup
// header and the new entry.
func checkWithDiskfs(t *testing.T, path, kind string, p configdrive.Partition) {
	t.Helper()
	d, err := diskfs.Open(path, diskfs.WithOpenMode(diskfs.ReadOnly))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	table, err := d.GetPartitionTable()
	if err != nil {
		t.Fatalf("go-diskfs reads no table: %v", err)
	}
	switch tb := table.(type) {
	case *gpt.Table:
		if kind != "gpt" || len(tb.Partitions) != 2 || tb.RecoveredFromBackup {
			t.Fatalf("go-diskfs reads %d GPT partitions (recovered from backup %v)", len(tb.Partitions), tb.RecoveredFromBackup)
		}
		last := tb.Partitions[1]
		if int64(last.Start)*512 != p.Start || !strings.EqualFold(last.GUID, p.UUID) || last.Name != "config-2" {
			t.Fatalf("go-diskfs reads %+v, added %+v", last, p)
		}
	case *mbr.Table:
		if kind != "mbr" || len(tb.Partitions) < 2 || int64(tb.Partitions[1].Start)*512 != p.Start {
			t.Fatalf("go-diskfs reads %+v, added %+v", tb.Partitions, p)
		}
	default:
		t.Fatalf("table %T", table)
	}
}

// TestHostile: malformed images give errors, never a panic.
func TestHostile(t *testing.T) {
	iso, err := configdrive.Build(sample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gptImg := configdrivetest.GPTImage(t, filepath.Join(dir, "g"), 4<<20)
	mbrImg := configdrivetest.MBRImage(t, filepath.Join(dir, "m"), 4<<20)
	mut := func(b []byte, f func([]byte)) []byte {
		c := bytes.Clone(b)
		f(c)
		return c
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"truncated ISO", iso[:len(iso)/2]},
		{"ISO cut before its volume descriptor", iso[:16*2048+100]},
		{"huge path table", mut(iso, func(b []byte) {
			binary.LittleEndian.PutUint32(b[16*2048+132:], 0xfffffff0)
		})},
		{"path table past the end", mut(iso, func(b []byte) {
			binary.LittleEndian.PutUint32(b[16*2048+140:], 0x7fffffff)
		})},
		{"root directory of 2 GiB", mut(iso, func(b []byte) {
			binary.LittleEndian.PutUint32(b[16*2048+156+10:], 0x7fffffff)
		})},
		{"zeroed root directory", mut(iso, func(b []byte) {
			clear(b[16*2048+156 : 16*2048+190])
		})},
		{"GPT entry past the end", mut(gptImg, func(b []byte) {
			e := b[1024:]
			binary.LittleEndian.PutUint64(e[40:], 1<<40)
		})},
		{"MBR partition past the end", mut(mbrImg, func(b []byte) {
			binary.LittleEndian.PutUint32(b[446+12:], 0xffffffff)
		})},
		{"GPT header with a huge array", mut(gptImg, func(b []byte) {
			binary.LittleEndian.PutUint32(b[512+80:], 0xffffffff)
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := configdrive.Read(bytes.NewReader(tc.data), int64(len(tc.data))); err == nil {
				t.Error("Read: no error")
			}
			if _, err := configdrive.ReadDisk(bytes.NewReader(tc.data), int64(len(tc.data))); err == nil {
				t.Error("ReadDisk: no error")
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	iso, err := configdrive.Build(sample)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(iso)
	f.Add(iso[:len(iso)/2])
	f.Add([]byte("CD001"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if d, err := configdrive.Read(bytes.NewReader(data), int64(len(data))); err == nil && d.MetaData == nil {
			t.Fatal("Read: no error and no meta-data")
		}
		_, _ = configdrive.ReadDisk(bytes.NewReader(data), int64(len(data)))
	})
}

func FuzzReadTable(f *testing.F) {
	dir := f.TempDir()
	f.Add(configdrivetest.GPTImage(f, filepath.Join(dir, "g"), 4<<20))
	f.Add(configdrivetest.MBRImage(f, filepath.Join(dir, "m"), 4<<20))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := configdrive.ReadTable(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		for _, p := range tb.Partitions {
			if p.Start < 0 || p.Size <= 0 || p.Start+p.Size > int64(len(data)) {
				t.Fatalf("partition %+v outside %d bytes", p, len(data))
			}
		}
	})
}

// TestReadISOFile reads a grub.cfg by a path of any case, from an ISO
// with Rock Ridge names and from a plain ISO 9660 one (upper-case names).
func TestReadISOFile(t *testing.T) {
	bin := genisoimageBin(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(filepath.Join(src, "boot", "grub"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := []byte("linux /vmlinuz ipa-api-url=http://127.0.0.1:6385 nofb\n")
	if err := os.WriteFile(filepath.Join(src, "boot", "grub", "grub.cfg"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{{"-r"}, {}} {
		out := filepath.Join(dir, "o.iso")
		args := append(append([]string{"-o", out, "-V", "DEPLOY", "-quiet"}, flags...), src)
		if b, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := configdrive.ReadISOFile(bytes.NewReader(data), int64(len(data)), "/boot/grub/grub.cfg")
		if err != nil || !bytes.Equal(got, cfg) {
			t.Fatalf("genisoimage %v: read %q, %v", flags, got, err)
		}
		if _, err := configdrive.ReadISOFile(bytes.NewReader(data), int64(len(data)), "/EFI/BOOT/grub.cfg"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a missing file: %v, want fs.ErrNotExist", err)
		}
	}
}
