package ironic

import (
	"bytes"
	"context"
	"crypto/md5" //nolint:gosec // the image's md5sum file, as a site gives one
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	diskfs "github.com/diskfs/go-diskfs"
	"github.com/diskfs/go-diskfs/partition/gpt"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// Layout of the test's disk image: a GPT with one partition from 1 MiB
// holding a marker.
const (
	seedImageSize = 16 << 20
	seedPartStart = 1 << 20
	seedPartEnd   = 15 << 20
)

var seedMarker = []byte("airship seed image: this is the root filesystem")

// seedImage writes a raw disk with a GPT and a marked partition, and its
// qcow2 conversion and md5sum file into dir. It returns the raw bytes.
func seedImage(t *testing.T, dir string) []byte {
	t.Helper()
	qemuImg := testtool.Path(t, "qemu-img")
	raw := filepath.Join(t.TempDir(), "seed.raw")
	d, err := diskfs.Create(raw, seedImageSize, diskfs.SectorSizeDefault)
	if err != nil {
		t.Fatal(err)
	}
	table := &gpt.Table{LogicalSectorSize: 512, PhysicalSectorSize: 512, ProtectiveMBR: true, Partitions: []*gpt.Partition{
		{Index: 1, Start: seedPartStart / 512, End: seedPartEnd/512 - 1, Type: gpt.LinuxFilesystem, Name: "root"},
	}}
	if err := d.Partition(table); err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat(seedMarker, (seedPartEnd-seedPartStart)/len(seedMarker)+1)[:seedPartEnd-seedPartStart]
	if _, err := d.WritePartitionContents(1, bytes.NewReader(content)); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	qcow2 := filepath.Join(dir, "seed.qcow2")
	if out, err := exec.CommandContext(ctx, qemuImg, "convert", "-f", "raw", "-O", "qcow2", raw, qcow2).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert: %v: %s", err, out)
	}
	data, err := os.ReadFile(qcow2)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(data) //nolint:gosec // see the import
	if err := os.WriteFile(qcow2+".md5sum", []byte(hex.EncodeToString(sum[:])+"  seed.qcow2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rawBytes, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	return rawBytes
}

// testSeedQcow2 is the seed flow of a site: a qcow2 image and its md5sum
// file, which Ironic's conductor fetches, checks and converts to raw
// (image_download_source local, force_raw_images), serving the raw image
// to the agent from its own HTTP server.
func testSeedQcow2(t *testing.T, inst *localironic.Instance) {
	raw := seedImage(t, inst.HTTPRoot)
	img := &metal3v1alpha1.Image{URL: inst.HTTPURL + "/seed.qcow2", Checksum: inst.HTTPURL + "/seed.qcow2.md5sum",
		ChecksumType: metal3v1alpha1.MD5, DiskFormat: ptr("qcow2")}
	seedFlow(t, inst, "local", metal3v1alpha1.CleaningModeDisabled, img, raw)
}

// testSeedRaw: a raw image the agent downloads itself
// (image_download_source http) with an md5 checksum.
func testSeedRaw(t *testing.T, inst *localironic.Instance) {
	raw := seedImage(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(inst.HTTPRoot, "seed.raw"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(raw) //nolint:gosec // see the import
	img := &metal3v1alpha1.Image{URL: inst.HTTPURL + "/seed.raw", Checksum: hex.EncodeToString(sum[:]),
		ChecksumType: metal3v1alpha1.MD5, DiskFormat: ptr("raw")}
	seedFlow(t, inst, "http", metal3v1alpha1.CleaningModeMetadata, img, raw)
}

// seedFlow registers, inspects and prepares an emulated host, provisions
// img with user-data, meta-data and network-data through Ironic and the
// emulator's deploy agent, checks the host's disk (the image's partition
// and a config-2 partition with the data), then deprovisions: metadata
// cleaning wipes the partition table, disabled cleaning leaves the disk
// as it was.
func seedFlow(t *testing.T, inst *localironic.Instance, downloadSource string, cleaning metal3v1alpha1.AutomatedCleaningMode,
	img *metal3v1alpha1.Image, raw []byte,
) {
	b := newBench(t, inst, emulator.Host{Name: "node-0", Disks: []emulator.Disk{{Name: "sda", SizeGiB: 8}}})
	b.fac = b.factory(inst, func(o *Options) { o.ImageDownloadSource = downloadSource })
	h := b.host("node-0")
	p := b.open(h)
	until(t, "register", time.Minute, register(p, provisioner.RegisterData{AutomatedCleaningMode: cleaning}))
	until(t, "inspect", 2*time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		res, _, err := p.Inspect(ctx, provisioner.InspectData{})
		return res, err
	})
	until(t, "prepare", 3*time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Prepare(ctx, provisioner.PrepareData{AutomatedCleaningMode: cleaning})
	})
	userData := []byte("#cloud-config\nhostname: node-0\n")
	d := provisioner.ProvisionData{
		Image: img, UserData: userData, BootMode: metal3v1alpha1.UEFI,
		MetaData:    []byte(`{"local-hostname": "node-0", "uuid": "uid-node-0"}`),
		NetworkData: []byte("links:\n- id: eth0\n  type: phy\n"),
	}
	until(t, "provision", 5*time.Minute, func(ctx context.Context) (provisioner.Result, error) { return p.Provision(ctx, d) })
	path := b.emu.DiskPath("node-0", "sda")
	// The disk is 8 GiB (sparse): read only the image's span.
	disk := readHead(t, path, seedPartEnd)
	if !bytes.Equal(disk[seedPartStart:seedPartEnd], raw[seedPartStart:seedPartEnd]) {
		t.Errorf("the host's disk does not hold the image's partition")
	}
	cd, err := configdrive.ReadFile(path)
	if err != nil {
		t.Fatalf("config drive on the host's disk: %v", err)
	}
	if !bytes.Equal(cd.UserData, userData) || !bytes.Contains(cd.MetaData, []byte(`"uid-node-0"`)) || !bytes.Contains(cd.NetworkData, []byte(`"eth0"`)) {
		t.Errorf("config drive: user-data %q, meta-data %s, network-data %s", cd.UserData, cd.MetaData, cd.NetworkData)
	}
	until(t, "deprovision", 5*time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Deprovision(ctx, provisioner.DeprovisionData{AutomatedCleaningMode: cleaning})
	})
	disk = readHead(t, path, seedPartEnd)
	wiped := bytes.Equal(disk[:seedPartStart], make([]byte, seedPartStart))
	if kept := bytes.Equal(disk[seedPartStart:seedPartEnd], raw[seedPartStart:seedPartEnd]); cleaning == metal3v1alpha1.CleaningModeDisabled && (wiped || !kept) {
		t.Errorf("deprovisioning without cleaning changed the disk")
	} else if cleaning == metal3v1alpha1.CleaningModeMetadata && !wiped {
		t.Errorf("metadata cleaning left the disk's partition table")
	}
}

// testChecksumMismatch: an image whose md5 differs from its checksum
// fails the deploy; the ErrorMessage names the image; deprovisioning
// takes the node from deploy failed back to available.
func testChecksumMismatch(t *testing.T, inst *localironic.Instance) {
	raw := seedImage(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(inst.HTTPRoot, "bad.raw"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	b := newBench(t, inst, emulator.Host{Name: "node-0", Disks: []emulator.Disk{{Name: "sda", SizeGiB: 8}}})
	b.fac = b.factory(inst, func(o *Options) { o.ImageDownloadSource = "http" })
	h := b.host("node-0")
	h.BootMACAddress = b.emu.Hosts()[0].NICs[0].MAC
	p := b.open(h)
	until(t, "register", time.Minute, register(p, noClean))
	until(t, "prepare", time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Prepare(ctx, provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	})
	url := inst.HTTPURL + "/bad.raw"
	d := provisioner.ProvisionData{Image: &metal3v1alpha1.Image{URL: url, Checksum: "0123456789abcdef0123456789abcdef",
		ChecksumType: metal3v1alpha1.MD5, DiskFormat: ptr("raw")}}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var res provisioner.Result
	for ctx.Err() == nil {
		var err error
		if res, err = p.Provision(ctx, d); err != nil {
			t.Fatal(err)
		}
		if !res.Dirty {
			break
		}
		time.Sleep(res.RequeueAfter)
	}
	if !strings.Contains(res.ErrorMessage, "image provisioning failed (image "+url+")") || !strings.Contains(strings.ToLower(res.ErrorMessage), "checksum") {
		t.Errorf("Provision of an image with a wrong checksum: %+v, want a failure naming %s and the checksum", res, url)
	}
	until(t, "deprovision", 2*time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Deprovision(ctx, provisioner.DeprovisionData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	})
}

// readHead reads the first n bytes of the file at path.
func readHead(t *testing.T, path string, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	buf := make([]byte, n)
	if _, err := io.ReadFull(f, buf); err != nil {
		t.Fatalf("reading the first %d bytes of %s: %v", n, path, err)
	}
	return buf
}
