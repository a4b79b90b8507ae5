package emulator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/ipaagent"
)

// stateDir makes the server's state directory: Options.StateDir, else a
// new one under os.TempDir that Close removes.
func stateDir(opts Options) (dir string, remove bool, err error) {
	if opts.StateDir != "" {
		if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
			return "", false, fmt.Errorf("state directory: %w", err)
		}
		return opts.StateDir, false, nil
	}
	dir, err = os.MkdirTemp("", "redfish-emulator-")
	if err != nil {
		return "", false, fmt.Errorf("state directory: %w", err)
	}
	return dir, true, nil
}

// StateDir is the directory holding the hosts' disk files.
func (s *Server) StateDir() string { return s.state }

// DiskPath is the file backing a host's disk, <state>/<host>/<disk>.img;
// it exists once the disk was first written. "" for an unknown host or
// disk.
func (s *Server) DiskPath(host, disk string) string {
	h := s.byName[host]
	if h == nil {
		return ""
	}
	for _, d := range h.Disks {
		if d.Name == disk {
			return filepath.Join(s.state, h.Name, d.Name+".img")
		}
	}
	return ""
}

// agentDisks are a host's disks as the deploy agent sees them; the host's
// directory is made.
func (s *Server) agentDisks(h *hostEntry) ([]ipaagent.Disk, error) {
	if err := os.MkdirAll(filepath.Join(s.state, h.Name), 0o700); err != nil {
		return nil, fmt.Errorf("host %s: disk directory: %w", h.Name, err)
	}
	out := make([]ipaagent.Disk, len(h.Disks))
	for i, d := range h.Disks {
		out[i] = ipaagent.Disk{Name: d.Name, Path: s.DiskPath(h.Name, d.Name), Size: int64(d.SizeGiB) << 30,
			Serial: d.Serial, Model: d.Model, Rotational: d.Rotational}
	}
	return out, nil
}

// diskBoot is what a host finds booting from disk: the first disk, in
// the inventory's order, holding a config drive, and its data.
type diskBoot struct {
	disk string
	data configdrive.Data
}

// readDiskBoot looks for a config drive on the host's disks. nil when no
// disk holds one; unreadable ones are logged.
func (s *Server) readDiskBoot(h *hostEntry) *diskBoot {
	for _, d := range h.Disks {
		p := s.DiskPath(h.Name, d.Name)
		data, err := configdrive.ReadFile(p)
		switch {
		case err == nil:
			return &diskBoot{disk: d.Name, data: data}
		case errors.Is(err, os.ErrNotExist), errors.Is(err, configdrive.ErrNotFound):
		default:
			s.logger.Printf("%s: disk %s: %v", h.Name, d.Name, err)
		}
	}
	return nil
}
