// Command site-image writes the example site's node image for `make demo`
// and the end-to-end tests: a small raw disk (a GPT with one Linux
// partition named "root", whose sectors hold a recognisable text) converted
// to qcow2 with qemu-img, and its sha256sum file beside it, as a user
// publishes an image for Metal3Machines (image.url, image.checksum,
// checksumType sha256, format qcow2). It is not an operating system: the
// Redfish emulator's hosts boot any disk holding a config drive.
//
// Usage: site-image --out DIR/site-node.qcow2 [--size-mib 8]
//
// It writes OUT and OUT.sha256sum ("<hex>  <base name>"), each through a
// temporary file renamed into place, and leaves both alone when OUT
// already holds the same image (a second run changes nothing).
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	diskfs "github.com/diskfs/go-diskfs"
	"github.com/diskfs/go-diskfs/partition/gpt"
)

func main() {
	out := flag.String("out", "", "qcow2 file to write (its checksum goes to OUT.sha256sum)")
	sizeMiB := flag.Int("size-mib", 8, "the raw disk's size in MiB (at least 2)")
	flag.Parse()
	if err := run(*out, int64(*sizeMiB)<<20); err != nil {
		fmt.Fprintln(os.Stderr, "site-image:", err)
		os.Exit(1)
	}
}

func run(out string, size int64) error {
	if out == "" {
		return errors.New("--out is required")
	}
	if size < 2<<20 {
		return fmt.Errorf("--size-mib %d: at least 2", size>>20)
	}
	dir := filepath.Dir(out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("image directory %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(dir, ".site-image-")
	if err != nil {
		return fmt.Errorf("scratch directory in %s: %w", dir, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	raw := filepath.Join(tmp, "disk.raw")
	if err := writeRaw(raw, size); err != nil {
		return err
	}
	qcow := filepath.Join(tmp, "disk.qcow2")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if msg, err := exec.CommandContext(ctx, "qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, qcow).CombinedOutput(); err != nil {
		return fmt.Errorf("qemu-img convert of %s: %w: %s", raw, err, strings.TrimSpace(string(msg)))
	}
	data, err := os.ReadFile(qcow)
	if err != nil {
		return fmt.Errorf("reading %s: %w", qcow, err)
	}
	sum := sha256.Sum256(data)
	line := []byte(hex.EncodeToString(sum[:]) + "  " + filepath.Base(out) + "\n")
	if old, err := os.ReadFile(out + ".sha256sum"); err == nil && bytes.Equal(old, line) {
		if have, err := os.ReadFile(out); err == nil && sha256.Sum256(have) == sum {
			fmt.Printf("%s unchanged (sha256 %x)\n", out, sum)
			return nil
		}
	}
	if err := os.Chmod(qcow, 0o644); err != nil {
		return fmt.Errorf("%s: %w", qcow, err)
	}
	if err := os.Rename(qcow, out); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "sum"), line, 0o644); err != nil {
		return fmt.Errorf("writing the checksum of %s: %w", out, err)
	}
	if err := os.Rename(filepath.Join(tmp, "sum"), out+".sha256sum"); err != nil {
		return fmt.Errorf("writing %s.sha256sum: %w", out, err)
	}
	fmt.Printf("wrote %s (qcow2 of a %d MiB GPT disk, sha256 %x)\n", out, size>>20, sum)
	return nil
}

// writeRaw writes the raw disk: a protective MBR, a GPT with partition 1
// "root" from sector 2048 to the last usable one, and a text at the start
// of every MiB of the partition (the same bytes on every run).
func writeRaw(path string, size int64) error {
	d, err := diskfs.Create(path, size, diskfs.SectorSizeDefault)
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	end := uint64(size/512) - 34
	table := &gpt.Table{LogicalSectorSize: 512, PhysicalSectorSize: 512, ProtectiveMBR: true,
		GUID: "8f2b7a5e-0c1d-4e6f-9a3b-5c7d9e1f2a40",
		Partitions: []*gpt.Partition{{Index: 1, Start: 2048, End: end, Type: gpt.LinuxFilesystem, Name: "root",
			GUID: "3d6e9b1c-7a2f-4c58-8e0d-1b4a6c9f2e73"}}}
	if err := d.Partition(table); err != nil {
		return fmt.Errorf("partitioning %s: %w", path, err)
	}
	if err := d.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	text := bytes.Repeat([]byte("airship example site node image\n"), 16) // 512 bytes
	for off := int64(2048 * 512); off < int64(end+1)*512; off += 1 << 20 {
		if _, err := f.WriteAt(text, off); err != nil {
			_ = f.Close()
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", path, err)
	}
	return nil
}
