package testenv

import (
	"bytes"
	"crypto/md5" //nolint:gosec // the checksum type under test
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// TestServeDiskImage: ServeDiskImage's images are served by Ironic's image
// server with the checksums it returns, as raw or qcow2 (of the raw disk it
// returns), with a checksum file when asked, and named so in the specs it
// builds.
func TestServeDiskImage(t *testing.T) {
	inst := Ironic(t)
	for _, tc := range []struct {
		name       string
		opts       DiskImageOptions
		wantFormat string
		wantSum    string // the checksum file's name, "" for none
	}{
		{"disk.raw", DiskImageOptions{}, "raw", ""},
		{"md5.raw", DiskImageOptions{SumFile: metal3v1alpha1.MD5}, "raw", "md5.raw.md5sum"},
		{"disk.qcow2", DiskImageOptions{Qcow2: true, SumFile: metal3v1alpha1.SHA256}, "qcow2", "disk.qcow2.sha256sum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ServeDiskImage(t, inst, tc.name, 4<<20, tc.opts)
			if d.URL != inst.HTTPURL+"/"+tc.name || d.Format != tc.wantFormat || len(d.Raw) != 4<<20 {
				t.Errorf("ServeDiskImage = URL %s format %s, %d raw bytes; want %s/%s, %s, 4 MiB", d.URL, d.Format, len(d.Raw), inst.HTTPURL, tc.name, tc.wantFormat)
			}
			if p := configdrivetest.FirstPartition(t, d.Raw); p.Start != 1<<20 {
				t.Errorf("the raw disk's first partition %+v, want GPTImage's", p)
			}
			code, body := HTTPGet(t.Context(), d.URL)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d", d.URL, code)
			}
			m, s := md5.Sum([]byte(body)), sha256.Sum256([]byte(body)) //nolint:gosec // see the import
			if d.MD5 != hex.EncodeToString(m[:]) || d.SHA256 != hex.EncodeToString(s[:]) {
				t.Errorf("checksums md5 %s sha256 %s, not the served file's", d.MD5, d.SHA256)
			}
			if tc.opts.Qcow2 {
				checkQcow2(t, []byte(body), d.Raw)
			} else if body != string(d.Raw) {
				t.Error("the served raw image is not the returned bytes")
			}
			if tc.wantSum == "" {
				if d.SumURL != "" {
					t.Errorf("SumURL %s without DiskImageOptions.SumFile", d.SumURL)
				}
			} else {
				sum := d.MD5
				if tc.opts.SumFile == metal3v1alpha1.SHA256 {
					sum = d.SHA256
				}
				if d.SumURL != inst.HTTPURL+"/"+tc.wantSum {
					t.Errorf("SumURL %s, want %s/%s", d.SumURL, inst.HTTPURL, tc.wantSum)
				}
				if code, body := HTTPGet(t.Context(), d.SumURL); code != http.StatusOK || body != sum+"  "+tc.name+"\n" {
					t.Errorf("GET %s: %d %q, want %q", d.SumURL, code, body, sum+"  "+tc.name+"\n")
				}
			}
			h := d.HostImage(metal3v1alpha1.SHA256)
			if h.URL != d.URL || h.Checksum != d.SHA256 || h.ChecksumType != metal3v1alpha1.SHA256 || h.DiskFormat == nil || *h.DiskFormat != tc.wantFormat {
				t.Errorf("HostImage(sha256) = %+v", h)
			}
			m3 := d.MachineImage(metal3v1alpha1.MD5)
			if m3.URL != d.URL || m3.Checksum != d.MD5 || m3.ChecksumType == nil || *m3.ChecksumType != "md5" || m3.DiskFormat == nil || *m3.DiskFormat != tc.wantFormat {
				t.Errorf("MachineImage(md5) = %+v", m3)
			}
		})
	}
}

// checkQcow2 checks that qcow2 (bytes) is raw converted, converting it
// back with qemu-img.
func checkQcow2(t *testing.T, qcow2, raw []byte) {
	t.Helper()
	if !bytes.HasPrefix(qcow2, []byte("QFI\xfb")) {
		t.Fatalf("the served image is not a qcow2 (starts %q)", qcow2[:min(4, len(qcow2))])
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.qcow2"), filepath.Join(dir, "out.raw")
	if err := os.WriteFile(in, qcow2, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.CommandContext(t.Context(), testtool.Path(t, "qemu-img"), "convert", "-f", "qcow2", "-O", "raw", in, out).CombinedOutput(); err != nil {
		t.Fatalf("qemu-img convert of the served image: %v: %s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, raw) {
		t.Errorf("the served qcow2 holds %d bytes that are not the raw disk's", len(got))
	}
}
