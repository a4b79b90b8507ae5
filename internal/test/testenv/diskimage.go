package testenv

import (
	"context"
	"crypto/md5" //nolint:gosec // md5 is a checksum type Metal3 images are given by, not a security use
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// DiskImageOptions adjust ServeDiskImage.
type DiskImageOptions struct {
	// Qcow2 serves the disk converted to qcow2 by qemu-img (Ironic's
	// conductor converts it back to raw), instead of the raw disk.
	Qcow2 bool
	// SumFile, when set (md5 or sha256), also serves
	// "<name>.<SumFile>sum" holding "<hex>  <name>\n", as a site
	// publishes a checksum for an image given by URL.
	SumFile metal3v1alpha1.ChecksumType
}

// DiskImage is a disk image served by a local Ironic's image server.
type DiskImage struct {
	// URL is the image's address on the image server; SumURL that of its
	// checksum file (empty without DiskImageOptions.SumFile).
	URL, SumURL string
	// Format is the served file's format: raw or qcow2.
	Format string
	// MD5 and SHA256 are the hex checksums of the served file.
	MD5, SHA256 string
	// Raw is the raw disk's bytes: what a host's disk holds once Ironic
	// wrote the image (see configdrivetest.ProvisionedDisk).
	Raw []byte
}

// ServeDiskImage writes a raw disk of size bytes with a GPT of one
// partition holding a known pattern (configdrivetest.GPTImage) into inst's
// image server as name, as opts say (converted to qcow2, with a checksum
// file), and returns where it is served and its checksums.
func ServeDiskImage(t testing.TB, inst *localironic.Instance, name string, size int64, opts DiskImageOptions) DiskImage {
	t.Helper()
	path := filepath.Join(inst.HTTPRoot, name)
	d := DiskImage{URL: inst.HTTPURL + "/" + name, Format: "raw"}
	if !opts.Qcow2 {
		d.Raw = configdrivetest.GPTImage(t, path, size)
	} else {
		raw := filepath.Join(t.TempDir(), "disk.raw")
		d.Raw = configdrivetest.GPTImage(t, raw, size)
		qemuImg := testtool.Path(t, "qemu-img")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, qemuImg, "convert", "-f", "raw", "-O", "qcow2", raw, path).CombinedOutput(); err != nil {
			t.Fatalf("qemu-img convert of %s to %s: %v: %s", raw, path, err, out)
		}
		d.Format = "qcow2"
	}
	served, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the served image %s: %v", path, err)
	}
	m, s := md5.Sum(served), sha256.Sum256(served) //nolint:gosec // see the import
	d.MD5, d.SHA256 = hex.EncodeToString(m[:]), hex.EncodeToString(s[:])
	if opts.SumFile != "" {
		sumName := name + "." + string(opts.SumFile) + "sum"
		line := d.checksum(opts.SumFile) + "  " + name + "\n"
		if err := os.WriteFile(filepath.Join(inst.HTTPRoot, sumName), []byte(line), 0o600); err != nil {
			t.Fatalf("writing the checksum file of %s: %v", name, err)
		}
		d.SumURL = inst.HTTPURL + "/" + sumName
	}
	return d
}

// checksum is the served file's checksum of type ct; it panics on a type
// ServeDiskImage does not compute (a mistake in the test).
func (d DiskImage) checksum(ct metal3v1alpha1.ChecksumType) string {
	switch ct {
	case metal3v1alpha1.MD5:
		return d.MD5
	case metal3v1alpha1.SHA256:
		return d.SHA256
	}
	panic("testenv.DiskImage: no " + string(ct) + " checksum")
}

// HostImage is the image as a BareMetalHost's spec.image names it, its
// checksum of type ct given by value.
func (d DiskImage) HostImage(ct metal3v1alpha1.ChecksumType) *metal3v1alpha1.Image {
	format := d.Format
	return &metal3v1alpha1.Image{URL: d.URL, Checksum: d.checksum(ct), ChecksumType: ct, DiskFormat: &format}
}

// MachineImage is the image as a Metal3Machine's spec.image names it, its
// checksum of type ct given by value.
func (d DiskImage) MachineImage(ct metal3v1alpha1.ChecksumType) infrav1.Image {
	format, typ := d.Format, string(ct)
	return infrav1.Image{URL: d.URL, Checksum: d.checksum(ct), ChecksumType: &typ, DiskFormat: &format}
}
