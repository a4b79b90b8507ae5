package localironic

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	diskfs "github.com/diskfs/go-diskfs"
	"github.com/diskfs/go-diskfs/disk"
	"github.com/diskfs/go-diskfs/filesystem"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// The deploy ISO's contract with the Redfish emulator: the kernel command
// line is the `linux` line of GrubConfigPath, its tokens space-separated
// key=value; ipa-api-url names the Ironic API the deploy agent looks up
// its node at and heartbeats to.
const (
	GrubConfigPath = "/boot/grub/grub.cfg"
	KernelPath     = "/vmlinuz"
	InitrdPath     = "/initramfs"
	// APIURLParam is the kernel parameter naming Ironic's API.
	APIURLParam = "ipa-api-url"
	// deployISOLabel is the ISO's volume identifier.
	deployISOLabel = "AIRSHIP_IPA"
)

// DeployKernelParams returns the deploy agent's kernel command line for
// an Ironic whose API is apiURL.
func DeployKernelParams(apiURL string) string {
	return APIURLParam + "=" + apiURL + " ipa-insecure=0 nofb nomodeset systemd.journald.forward_to_console=yes"
}

// grubConfig is GrubConfigPath's content.
func grubConfig(apiURL string) string {
	return "set timeout=0\nset default=0\n" +
		"menuentry \"deploy\" {\n" +
		"linux " + KernelPath + " " + DeployKernelParams(apiURL) + "\n" +
		"initrd " + InitrdPath + "\n" +
		"}\n"
}

// WriteDeployISO writes an ISO 9660 image (Rock Ridge names) to path
// holding GrubConfigPath for apiURL and small placeholder kernel and
// initramfs files. workDir holds the builder's scratch files. The file is
// replaced atomically.
func WriteDeployISO(path, apiURL, workDir string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".deploy-*.iso")
	if err != nil {
		return fmt.Errorf("writing deploy ISO %s: %w", path, err)
	}
	tmpName := tmp.Name()
	_ = tmp.Close() // empty; diskfs reopens it by name
	defer func() { _ = os.Remove(tmpName) }()
	if err := os.Remove(tmpName); err != nil {
		return fmt.Errorf("writing deploy ISO %s: %w", path, err)
	}
	if err := buildISO(tmpName, workDir, map[string]string{
		GrubConfigPath: grubConfig(apiURL),
		KernelPath:     "airship placeholder kernel: the Redfish emulator plays the deploy agent\n",
		InitrdPath:     "airship placeholder initramfs\n",
	}); err != nil {
		return fmt.Errorf("writing deploy ISO %s: %w", path, err)
	}
	if err := os.Chmod(tmpName, 0o644); err != nil {
		return fmt.Errorf("writing deploy ISO %s: %w", path, err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("writing deploy ISO %s: %w", path, err)
	}
	return nil
}

func buildISO(path, workDir string, files map[string]string) error {
	work, err := os.MkdirTemp(workDir, "iso-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	d, err := diskfs.Create(path, 1<<20, diskfs.SectorSizeDefault)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	d.LogicalBlocksize = 2048
	fs, err := d.CreateFilesystem(disk.FilesystemSpec{Partition: 0, FSType: filesystem.TypeISO9660, VolumeLabel: deployISOLabel, WorkDir: work, Reproducible: true})
	if err != nil {
		return err
	}
	for name, content := range files {
		if dir := filepath.Dir(name); dir != "/" {
			if err := fs.Mkdir(dir); err != nil {
				return fmt.Errorf("creating %s: %w", dir, err)
			}
		}
		f, err := fs.OpenFile(name, os.O_CREATE|os.O_RDWR)
		if err != nil {
			return fmt.Errorf("creating %s: %w", name, err)
		}
		_, werr := f.Write([]byte(content))
		cerr := f.Close()
		if werr != nil || cerr != nil {
			return fmt.Errorf("writing %s: %w", name, firstErr(werr, cerr))
		}
	}
	iso, ok := fs.(*iso9660.FileSystem)
	if !ok {
		return fmt.Errorf("diskfs made a %T, not an ISO 9660 filesystem", fs)
	}
	return iso.Finalize(iso9660.FinalizeOptions{RockRidge: true, VolumeIdentifier: deployISOLabel})
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// ReadDeployISOKernelParams returns the kernel command line of a deploy
// ISO: the arguments of the `linux` line of GrubConfigPath after the
// kernel's path.
func ReadDeployISOKernelParams(path string) (string, error) {
	d, err := diskfs.Open(path, diskfs.WithOpenMode(diskfs.ReadOnly))
	if err != nil {
		return "", fmt.Errorf("opening ISO %s: %w", path, err)
	}
	defer func() { _ = d.Close() }()
	fs, err := d.GetFilesystem(0)
	if err != nil {
		return "", fmt.Errorf("reading ISO %s: %w", path, err)
	}
	// go-diskfs's ReadFile takes io/fs paths: no leading slash.
	data, err := fs.ReadFile(strings.TrimPrefix(GrubConfigPath, "/"))
	if err != nil {
		return "", fmt.Errorf("reading %s of ISO %s: %w", GrubConfigPath, path, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == "linux" {
			return strings.Join(fields[2:], " "), nil
		}
	}
	return "", fmt.Errorf("ISO %s: %s has no linux line", path, GrubConfigPath)
}
