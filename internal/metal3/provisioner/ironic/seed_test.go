package ironic

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// seedImageSize is the size of the tests' raw disk image (a GPT with one
// partition of a known pattern, testenv.ServeDiskImage).
const seedImageSize = 16 << 20

// testSeedQcow2 is the seed flow of a site: a qcow2 image and its md5sum
// file, which Ironic's conductor fetches, checks and converts to raw
// (image_download_source local, force_raw_images), serving the raw image
// to the agent from its own HTTP server.
func testSeedQcow2(t *testing.T, inst *localironic.Instance) {
	d := testenv.ServeDiskImage(t, inst, "seed.qcow2", seedImageSize, testenv.DiskImageOptions{Qcow2: true, SumFile: metal3v1alpha1.MD5})
	img := d.HostImage(metal3v1alpha1.MD5)
	img.Checksum = d.SumURL
	seedFlow(t, inst, "local", metal3v1alpha1.CleaningModeDisabled, img, d.Raw)
}

// testSeedRaw: a raw image the agent downloads itself
// (image_download_source http) with an md5 checksum.
func testSeedRaw(t *testing.T, inst *localironic.Instance) {
	d := testenv.ServeDiskImage(t, inst, "seed.raw", seedImageSize, testenv.DiskImageOptions{})
	seedFlow(t, inst, "http", metal3v1alpha1.CleaningModeMetadata, d.HostImage(metal3v1alpha1.MD5), d.Raw)
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
	cd := configdrivetest.ProvisionedDisk(t, path, raw)
	if !bytes.Equal(cd.UserData, userData) || !bytes.Contains(cd.MetaData, []byte(`"uid-node-0"`)) || !bytes.Contains(cd.NetworkData, []byte(`"eth0"`)) {
		t.Errorf("config drive: user-data %q, meta-data %s, network-data %s", cd.UserData, cd.MetaData, cd.NetworkData)
	}
	until(t, "deprovision", 5*time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Deprovision(ctx, provisioner.DeprovisionData{AutomatedCleaningMode: cleaning})
	})
	// The disk is 8 GiB (sparse): read only up to the image's partition's end.
	part := configdrivetest.FirstPartition(t, raw)
	partStart, partEnd := part.Start, part.Start+part.Size
	disk := readHead(t, path, int(partEnd))
	wiped := bytes.Equal(disk[:partStart], make([]byte, partStart))
	if kept := bytes.Equal(disk[partStart:partEnd], raw[partStart:partEnd]); cleaning == metal3v1alpha1.CleaningModeDisabled && (wiped || !kept) {
		t.Errorf("deprovisioning without cleaning changed the disk")
	} else if cleaning == metal3v1alpha1.CleaningModeMetadata && !wiped {
		t.Errorf("metadata cleaning left the disk's partition table")
	}
}

// testChecksumMismatch: an image whose md5 differs from its checksum
// fails the deploy; the ErrorMessage names the image; deprovisioning
// takes the node from deploy failed back to available.
func testChecksumMismatch(t *testing.T, inst *localironic.Instance) {
	url := testenv.ServeDiskImage(t, inst, "bad.raw", seedImageSize, testenv.DiskImageOptions{}).URL
	b := newBench(t, inst, emulator.Host{Name: "node-0", Disks: []emulator.Disk{{Name: "sda", SizeGiB: 8}}})
	b.fac = b.factory(inst, func(o *Options) { o.ImageDownloadSource = "http" })
	h := b.host("node-0")
	h.BootMACAddress = b.emu.Hosts()[0].NICs[0].MAC
	p := b.open(h)
	until(t, "register", time.Minute, register(p, noClean))
	until(t, "prepare", time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Prepare(ctx, provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	})
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
