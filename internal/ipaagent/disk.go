package ipaagent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/airshipit/airship-go/internal/configdrive"
)

// minRootSize is the smallest disk IPA picks as root device (4 GiB).
const minRootSize = 4 << 30

// rootDisk picks the disk to write: the one matching every root device
// hint (name, serial, model, size, rotational), else the smallest of at
// least 4 GiB, as IPA does.
func rootDisk(disks []Disk, hints map[string]any) (Disk, error) {
	if len(disks) == 0 {
		return Disk{}, errors.New("the host has no disk")
	}
	if len(hints) > 0 {
		for _, d := range disks {
			ok, err := matches(d, hints)
			if err != nil {
				return Disk{}, err
			}
			if ok {
				return d, nil
			}
		}
		return Disk{}, fmt.Errorf("no disk matches the root device hints %v", hints)
	}
	sorted := slices.Clone(disks)
	slices.SortStableFunc(sorted, func(a, b Disk) int { return int((a.Size - b.Size) >> 20) })
	for _, d := range sorted {
		if d.Size >= minRootSize {
			return d, nil
		}
	}
	return Disk{}, fmt.Errorf("no disk of at least %d GiB", minRootSize>>30)
}

// matches tells whether a disk meets every hint it knows.
func matches(d Disk, hints map[string]any) (bool, error) {
	for k, v := range hints {
		s := strings.TrimSpace(fmt.Sprint(v))
		switch k {
		case "name":
			s = strings.TrimPrefix(strings.TrimPrefix(s, "s== "), "/dev/")
			if s != d.Name {
				return false, nil
			}
		case "serial":
			if !strings.EqualFold(strings.TrimPrefix(s, "s== "), d.Serial) {
				return false, nil
			}
		case "model":
			if !strings.EqualFold(strings.TrimPrefix(s, "s== "), d.Model) {
				return false, nil
			}
		case "rotational":
			b, err := strconv.ParseBool(s)
			if err != nil {
				return false, fmt.Errorf("root device hint rotational %q: %w", s, err)
			}
			if b != d.Rotational {
				return false, nil
			}
		case "size":
			ok, err := sizeMatches(s, d.Size>>30)
			if err != nil || !ok {
				return false, err
			}
		default:
			return false, fmt.Errorf("root device hint %q: not supported by the emulated agent (name, serial, model, size, rotational)", k)
		}
	}
	return true, nil
}

// sizeMatches reads a size hint in GiB: N, or an operator and N.
func sizeMatches(hint string, gib int64) (bool, error) {
	op, num := "==", hint
	for _, o := range []string{"<=", ">=", "!=", "==", "<", ">"} {
		if strings.HasPrefix(hint, o) {
			op, num = o, strings.TrimSpace(hint[len(o):])
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return false, fmt.Errorf("root device hint size %q: not a number of GiB", hint)
	}
	switch op {
	case "<=":
		return gib <= n, nil
	case ">=":
		return gib >= n, nil
	case "!=":
		return gib != n, nil
	case "<":
		return gib < n, nil
	case ">":
		return gib > n, nil
	}
	return gib == n, nil
}

const chunk = 1 << 20

// writeSparse copies r to f from offset 0, at most limit bytes: a chunk
// of zeros is punched (it reads back as zeros, costs no block).
func writeSparse(f *os.File, r io.Reader, limit int64) (int64, error) {
	buf := make([]byte, chunk)
	var off int64
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if off+int64(n) > limit {
				return off, fmt.Errorf("the image is larger than the disk (%d bytes)", limit)
			}
			if werr := writeOrPunch(f, buf[:n], off); werr != nil {
				return off, werr
			}
			off += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return off, nil
		}
		if err != nil {
			return off, err
		}
	}
}

func writeOrPunch(f *os.File, b []byte, off int64) error {
	for _, c := range b {
		if c != 0 {
			_, err := f.WriteAt(b, off)
			return err
		}
	}
	return zero(f, off, int64(len(b)))
}

// zero makes a range read as zeros: a punched hole, else written zeros.
func zero(f *os.File, off, n int64) error {
	if n <= 0 {
		return nil
	}
	if err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n); err == nil {
		return nil
	}
	z := make([]byte, min(n, chunk))
	for done := int64(0); done < n; {
		m := min(int64(len(z)), n-done)
		if _, err := f.WriteAt(z[:m], off+done); err != nil {
			return err
		}
		done += m
	}
	return nil
}

// eraseMetadata zeroes the first and last MiB of each disk and the first
// MiB of each partition (tables and filesystem signatures).
func (a *Agent) eraseMetadata() error {
	for _, d := range a.cfg.Disks {
		if err := eraseDiskMetadata(d); err != nil {
			return fmt.Errorf("erase_devices_metadata: disk %s: %w", d.Name, err)
		}
		a.changed(d.Name)
	}
	a.cfg.Logf("erased the metadata of %d disks", len(a.cfg.Disks))
	return nil
}

func eraseDiskMetadata(d Disk) error {
	f, err := openDisk(d)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	var starts []int64
	if t, err := configdrive.ReadTable(f, d.Size); err == nil {
		for _, p := range t.Partitions {
			starts = append(starts, p.Start)
		}
	}
	for _, s := range append(starts, 0, d.Size-chunk) {
		s = max(s, 0)
		if err := zero(f, s, min(chunk, d.Size-s)); err != nil {
			return err
		}
	}
	return f.Sync()
}

// eraseDevices empties every disk: truncated to zero and back to its
// size, so the file keeps no block.
func (a *Agent) eraseDevices() error {
	for _, d := range a.cfg.Disks {
		f, err := openDisk(d)
		if err != nil {
			return fmt.Errorf("erase_devices: %w", err)
		}
		err = f.Truncate(0)
		if err == nil {
			err = f.Truncate(d.Size)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("erase_devices: disk %s: %w", d.Name, err)
		}
		a.changed(d.Name)
	}
	a.cfg.Logf("erased %d disks", len(a.cfg.Disks))
	return nil
}
