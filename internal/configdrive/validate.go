package configdrive

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Limits of the walk validate makes.
const (
	maxDirDepth   = 16
	maxDirEntries = 4096
	maxDirSize    = 1 << 20
)

// validate walks what go-diskfs will read of an ISO 9660 image of iso
// bytes — the volume descriptors, their path tables and directory trees —
// and refuses any location or size past the image's end, so that go-diskfs
// never allocates what a hostile image claims.
func validate(r io.ReaderAt, iso int64) error {
	for i := int64(0); i < 32; i++ {
		var vd [2048]byte
		off := pvdOffset + i*blockSizeISO
		if off+blockSizeISO > iso {
			return fmt.Errorf("no volume descriptor set terminator before the image's end")
		}
		if _, err := r.ReadAt(vd[:], off); err != nil {
			return fmt.Errorf("volume descriptor %d: %w", i, err)
		}
		if string(vd[1:6]) != "CD001" {
			return fmt.Errorf("volume descriptor %d: no CD001 signature", i)
		}
		switch vd[0] {
		case 255:
			return nil
		case 1, 2:
			if err := validateVolume(r, iso, vd[:]); err != nil {
				return fmt.Errorf("volume descriptor %d: %w", i, err)
			}
		}
	}
	return fmt.Errorf("more than 32 volume descriptors")
}

// validateVolume checks one primary or supplementary volume descriptor.
func validateVolume(r io.ReaderAt, iso int64, vd []byte) error {
	ptSize := int64(binary.LittleEndian.Uint32(vd[132:136]))
	ptLoc := int64(binary.LittleEndian.Uint32(vd[140:144])) * blockSizeISO
	if ptSize > maxDirSize || ptLoc > iso-ptSize {
		return fmt.Errorf("path table (%d bytes at %d) past the image's end (%d bytes)", ptSize, ptLoc, iso)
	}
	pt := make([]byte, ptSize)
	if _, err := r.ReadAt(pt, ptLoc); err != nil {
		return fmt.Errorf("path table: %w", err)
	}
	for i := 0; i+8 <= len(pt); {
		nameLen := int(pt[i])
		loc := int64(binary.LittleEndian.Uint32(pt[i+2:i+6])) * blockSizeISO
		if err := checkDirAt(r, iso, loc); err != nil {
			return fmt.Errorf("path table entry at %d: %w", i, err)
		}
		i += 8 + nameLen + nameLen%2
	}
	return walkDir(r, iso, vd[156:190], 0, map[int64]bool{})
}

// checkDirAt checks the size in the "." record of the directory at loc,
// which go-diskfs reads to size its buffer.
func checkDirAt(r io.ReaderAt, iso, loc int64) error {
	if loc == 0 {
		return nil
	}
	if loc > iso-34 {
		return fmt.Errorf("directory at %d past the image's end", loc)
	}
	var rec [34]byte
	if _, err := r.ReadAt(rec[:], loc); err != nil {
		return fmt.Errorf("directory at %d: %w", loc, err)
	}
	size := int64(binary.LittleEndian.Uint32(rec[10:14]))
	if size > maxDirSize || size > iso-loc {
		return fmt.Errorf("directory at %d: %d bytes past the image's end", loc, size)
	}
	return nil
}

// walkDir checks a directory record and, for a directory, its entries.
func walkDir(r io.ReaderAt, iso int64, rec []byte, depth int, seen map[int64]bool) error {
	if len(rec) < 33 {
		return fmt.Errorf("directory record of %d bytes", len(rec))
	}
	loc := int64(binary.LittleEndian.Uint32(rec[2:6])) * blockSizeISO
	size := int64(binary.LittleEndian.Uint32(rec[10:14]))
	if loc > iso || size > iso-loc {
		return fmt.Errorf("extent of %d bytes at %d past the image's end (%d bytes)", size, loc, iso)
	}
	if rec[25]&2 == 0 {
		return nil
	}
	if depth > maxDirDepth || size > maxDirSize || seen[loc] || len(seen) > maxDirEntries {
		return fmt.Errorf("directory at %d: too deep, too large, or a loop", loc)
	}
	seen[loc] = true
	if err := checkDirAt(r, iso, loc); err != nil {
		return err
	}
	b := make([]byte, size)
	if _, err := r.ReadAt(b, loc); err != nil {
		return fmt.Errorf("directory at %d: %w", loc, err)
	}
	for i := 0; i < len(b); {
		n := int(b[i])
		if n == 0 {
			i += blockSizeISO - i%blockSizeISO
			continue
		}
		if n < 33 || i+n > len(b) {
			return fmt.Errorf("directory at %d: a record of %d bytes at %d", loc, n, i)
		}
		e := b[i : i+n]
		if err := checkSUSP(r, iso, systemUse(e)); err != nil {
			return fmt.Errorf("directory at %d, record at %d: %w", loc, i, err)
		}
		self := e[32] == 1 && (e[33] == 0 || e[33] == 1)
		if !self {
			if err := walkDir(r, iso, e, depth+1, seen); err != nil {
				return err
			}
		}
		i += n
	}
	return nil
}

// systemUse is the system use area of a directory record (after the name
// and its padding byte).
func systemUse(rec []byte) []byte {
	start := 33 + int(rec[32])
	if start%2 == 1 {
		start++
	}
	if start >= len(rec) {
		return nil
	}
	return rec[start:]
}

// maxContinuations bounds a chain of SUSP continuation areas.
const maxContinuations = 16

// checkSUSP follows the SUSP continuation (CE) entries of a system use
// area, refusing one past the image's end, too large, or a loop.
func checkSUSP(r io.ReaderAt, iso int64, area []byte) error {
	seen := map[int64]bool{}
	for hops := 0; ; hops++ {
		var next []byte
		for i := 0; i+4 <= len(area); {
			n := int(area[i+2])
			if n < 4 || i+n > len(area) {
				break
			}
			if string(area[i:i+2]) == "CE" && n >= 28 {
				loc := int64(binary.LittleEndian.Uint32(area[i+4:i+8])) * blockSizeISO
				off := int64(binary.LittleEndian.Uint32(area[i+12 : i+16]))
				size := int64(binary.LittleEndian.Uint32(area[i+20 : i+24]))
				at := loc + off
				if size > blockSizeISO || at > iso-size || seen[at] || hops >= maxContinuations {
					return fmt.Errorf("SUSP continuation of %d bytes at %d: past the image's end, too large or a loop", size, at)
				}
				seen[at] = true
				next = make([]byte, size)
				if _, err := r.ReadAt(next, at); err != nil {
					return fmt.Errorf("SUSP continuation at %d: %w", at, err)
				}
			}
			i += n
		}
		if next == nil {
			return nil
		}
		area = next
	}
}
