package configdrive

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unicode/utf16"
)

// SectorSize is the logical sector size of the disk images handled.
const SectorSize = 512

// MaxPartitionSize is the size of the partition AddPartition makes, as
// IPA does for a config drive (64 MiB, at the end of the disk).
const MaxPartitionSize = 64 << 20

// Partition is one entry of a disk's partition table.
type Partition struct {
	// Number counts from 1 in the table's order.
	Number int
	// Start and Size are in bytes.
	Start, Size int64
	// Name is the GPT partition name ("" on MBR).
	Name string
	// Type is the GPT type GUID, or the MBR type as 0xNN.
	Type string
	// UUID is the GPT unique partition GUID ("" on MBR).
	UUID string
}

// Table is a disk's partition table.
type Table struct {
	// Kind is "gpt" or "mbr".
	Kind       string
	Partitions []Partition
	// DiskID is the GPT disk GUID or the MBR disk signature as hex.
	DiskID string
}

// ErrNoTable is returned for a disk without a GPT or MBR partition table.
var ErrNoTable = errors.New("no GPT or MBR partition table")

// gpt header fields.
const (
	gptSignature  = "EFI PART"
	gptHeaderSize = 92
	gptMaxEntries = 1024
	mbrSignature  = 0xaa55
	gptProtective = 0xee
)

// gptHeader is the part of a GPT header this package reads and writes.
type gptHeader struct {
	current, backup         uint64
	firstUsable, lastUsable uint64
	diskGUID                [16]byte
	entriesLBA              uint64
	numEntries, entrySize   uint32
	entriesCRC              uint32
}

// ReadTable reads the partition table of a disk image of size bytes.
func ReadTable(r io.ReaderAt, size int64) (*Table, error) {
	if size < 2*SectorSize {
		return nil, ErrNoTable
	}
	var mbr [SectorSize]byte
	if _, err := r.ReadAt(mbr[:], 0); err != nil {
		return nil, fmt.Errorf("reading the MBR: %w", err)
	}
	if binary.LittleEndian.Uint16(mbr[510:]) != mbrSignature {
		return nil, ErrNoTable
	}
	for i := range 4 {
		if mbr[446+16*i+4] == gptProtective {
			return readGPT(r, size)
		}
	}
	return readMBR(mbr[:], size)
}

func readMBR(mbr []byte, size int64) (*Table, error) {
	t := &Table{Kind: "mbr", DiskID: fmt.Sprintf("%08x", binary.LittleEndian.Uint32(mbr[440:444]))}
	for i := range 4 {
		e := mbr[446+16*i : 446+16*(i+1)]
		typ := e[4]
		if typ == 0 {
			continue
		}
		start := int64(binary.LittleEndian.Uint32(e[8:12])) * SectorSize
		n := int64(binary.LittleEndian.Uint32(e[12:16])) * SectorSize
		if start+n > size || n == 0 {
			return nil, fmt.Errorf("MBR partition %d (%d bytes at %d) past the disk's end (%d bytes)", i+1, n, start, size)
		}
		t.Partitions = append(t.Partitions, Partition{Number: i + 1, Start: start, Size: n, Type: fmt.Sprintf("0x%02x", typ)})
	}
	return t, nil
}

func readGPTHeader(r io.ReaderAt, size int64, lba uint64) (*gptHeader, error) {
	if lba > uint64(size/SectorSize-1) {
		return nil, fmt.Errorf("GPT header at sector %d past the disk's end", lba)
	}
	var b [SectorSize]byte
	if _, err := r.ReadAt(b[:], int64(lba)*SectorSize); err != nil {
		return nil, fmt.Errorf("reading the GPT header: %w", err)
	}
	if string(b[:8]) != gptSignature {
		return nil, fmt.Errorf("no GPT header at sector %d", lba)
	}
	hs := binary.LittleEndian.Uint32(b[12:16])
	if hs < gptHeaderSize || hs > SectorSize {
		return nil, fmt.Errorf("GPT header size %d", hs)
	}
	crc := binary.LittleEndian.Uint32(b[16:20])
	binary.LittleEndian.PutUint32(b[16:20], 0)
	if crc32.ChecksumIEEE(b[:hs]) != crc {
		return nil, errors.New("GPT header checksum mismatch")
	}
	h := &gptHeader{
		current:     binary.LittleEndian.Uint64(b[24:32]),
		backup:      binary.LittleEndian.Uint64(b[32:40]),
		firstUsable: binary.LittleEndian.Uint64(b[40:48]),
		lastUsable:  binary.LittleEndian.Uint64(b[48:56]),
		entriesLBA:  binary.LittleEndian.Uint64(b[72:80]),
		numEntries:  binary.LittleEndian.Uint32(b[80:84]),
		entrySize:   binary.LittleEndian.Uint32(b[84:88]),
		entriesCRC:  binary.LittleEndian.Uint32(b[88:92]),
	}
	copy(h.diskGUID[:], b[56:72])
	if h.entrySize < 128 || h.entrySize > 4096 || h.entrySize%8 != 0 || h.numEntries == 0 || h.numEntries > gptMaxEntries {
		return nil, fmt.Errorf("GPT partition array of %d entries of %d bytes", h.numEntries, h.entrySize)
	}
	arr := int64(h.numEntries) * int64(h.entrySize)
	if h.entriesLBA > uint64(size/SectorSize) || int64(h.entriesLBA)*SectorSize > size-arr {
		return nil, fmt.Errorf("GPT partition array at sector %d past the disk's end", h.entriesLBA)
	}
	return h, nil
}

func readGPTEntries(r io.ReaderAt, h *gptHeader) ([]byte, error) {
	arr := make([]byte, int(h.numEntries)*int(h.entrySize))
	if _, err := r.ReadAt(arr, int64(h.entriesLBA)*SectorSize); err != nil {
		return nil, fmt.Errorf("reading the GPT partition array: %w", err)
	}
	if crc32.ChecksumIEEE(arr) != h.entriesCRC {
		return nil, errors.New("GPT partition array checksum mismatch")
	}
	return arr, nil
}

func readGPT(r io.ReaderAt, size int64) (*Table, error) {
	h, err := readGPTHeader(r, size, 1)
	if err != nil {
		return nil, err
	}
	arr, err := readGPTEntries(r, h)
	if err != nil {
		return nil, err
	}
	t := &Table{Kind: "gpt", DiskID: guidString(h.diskGUID[:])}
	for i := range int(h.numEntries) {
		e := arr[i*int(h.entrySize) : (i+1)*int(h.entrySize)]
		if allZero(e[:16]) {
			continue
		}
		first := binary.LittleEndian.Uint64(e[32:40])
		last := binary.LittleEndian.Uint64(e[40:48])
		if last < first || last >= uint64(size/SectorSize) {
			return nil, fmt.Errorf("GPT partition %d (sectors %d-%d) past the disk's end (%d sectors)", i+1, first, last, size/SectorSize)
		}
		t.Partitions = append(t.Partitions, Partition{
			Number: i + 1,
			Start:  int64(first) * SectorSize,
			Size:   int64(last-first+1) * SectorSize,
			Name:   utf16Name(e[56:128]),
			Type:   guidString(e[0:16]),
			UUID:   guidString(e[16:32]),
		})
	}
	return t, nil
}

// Find returns where a config drive is on a disk image of size bytes:
// the whole image when it is one, else the first partition of its GPT or
// MBR table whose ISO 9660 volume label is config-2. ErrNotFound when
// there is none.
func Find(r io.ReaderAt, size int64) (offset, length int64, err error) {
	if VolumeLabel(r, size) == Label {
		return 0, size, nil
	}
	t, err := ReadTable(r, size)
	if errors.Is(err, ErrNoTable) {
		return 0, 0, ErrNotFound
	}
	if err != nil {
		return 0, 0, fmt.Errorf("config drive: %w", err)
	}
	for _, p := range t.Partitions {
		if VolumeLabel(io.NewSectionReader(r, p.Start, p.Size), p.Size) == Label {
			return p.Start, p.Size, nil
		}
	}
	return 0, 0, ErrNotFound
}

// ReadWriterAt is a disk image open for writing.
type ReadWriterAt interface {
	io.ReaderAt
	io.WriterAt
}

// linuxFS is the GPT type of a Linux filesystem partition (sgdisk 8300).
var linuxFS = [16]byte{0xaf, 0x3d, 0xc6, 0x0f, 0x83, 0x84, 0x72, 0x47, 0x8e, 0x79, 0x3d, 0x69, 0xd8, 0x47, 0x7d, 0xe4}

// AddPartition adds a partition of MaxPartitionSize (less when the free
// space at the end is smaller, but at least need bytes) at the end of a
// disk image of diskSize bytes, named name on GPT, and returns it. On GPT
// the backup header and array first move to the disk's end.
func AddPartition(f ReadWriterAt, diskSize, need int64, name string) (Partition, error) {
	t, err := ReadTable(f, diskSize)
	if err != nil {
		return Partition{}, err
	}
	if t.Kind == "gpt" {
		return addGPT(f, diskSize, need, name)
	}
	return addMBR(f, diskSize, need, t)
}

const alignSectors = 2048 // 1 MiB

func addGPT(f ReadWriterAt, diskSize, need int64, name string) (Partition, error) {
	h, err := readGPTHeader(f, diskSize, 1)
	if err != nil {
		return Partition{}, err
	}
	arr, err := readGPTEntries(f, h)
	if err != nil {
		return Partition{}, err
	}
	sectors := uint64(diskSize / SectorSize)
	arrSectors := (uint64(len(arr)) + SectorSize - 1) / SectorSize
	// The backup header goes to the last sector, its array just before;
	// the image's own backup header, inside the disk now, is wiped.
	if old := h.backup; old != sectors-1 && old > 1 && old < sectors {
		if _, err := f.WriteAt(make([]byte, SectorSize), int64(old)*SectorSize); err != nil {
			return Partition{}, fmt.Errorf("GPT: wiping the image's backup header: %w", err)
		}
	}
	h.backup = sectors - 1
	h.lastUsable = sectors - 2 - arrSectors
	free, slot := h.firstUsable, -1
	for i := range int(h.numEntries) {
		e := arr[i*int(h.entrySize):]
		if allZero(e[:16]) {
			if slot < 0 {
				slot = i
			}
			continue
		}
		if last := binary.LittleEndian.Uint64(e[40:48]); last+1 > free {
			free = last + 1
		}
	}
	if slot < 0 {
		return Partition{}, errors.New("GPT: no free partition entry")
	}
	end := h.lastUsable
	start := (end + 1 - MaxPartitionSize/SectorSize) / alignSectors * alignSectors
	if start < free {
		start = (free + alignSectors - 1) / alignSectors * alignSectors
	}
	if start > end || int64(end-start+1)*SectorSize < need {
		return Partition{}, fmt.Errorf("GPT: no room for %d bytes at the end of the disk (free from sector %d to %d)", need, free, end)
	}
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return Partition{}, fmt.Errorf("partition GUID: %w", err)
	}
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	e := arr[slot*int(h.entrySize) : (slot+1)*int(h.entrySize)]
	clear(e)
	copy(e[0:16], linuxFS[:])
	copy(e[16:32], id[:])
	binary.LittleEndian.PutUint64(e[32:40], start)
	binary.LittleEndian.PutUint64(e[40:48], end)
	for i, c := range utf16.Encode([]rune(name)) {
		if i >= 36 {
			break
		}
		binary.LittleEndian.PutUint16(e[56+2*i:], c)
	}
	h.entriesCRC = crc32.ChecksumIEEE(arr)
	if err := writeGPT(f, h, arr, arrSectors); err != nil {
		return Partition{}, err
	}
	return Partition{Number: slot + 1, Start: int64(start) * SectorSize, Size: int64(end-start+1) * SectorSize, Name: name,
		Type: guidString(linuxFS[:]), UUID: guidString(id[:])}, nil
}

// writeGPT writes the primary header and array (at h.entriesLBA) and the
// backup ones (the array just before the disk's last sector, the header
// in it), and updates the protective MBR's size.
func writeGPT(f ReadWriterAt, h *gptHeader, arr []byte, arrSectors uint64) error {
	primary := *h
	primary.current, primary.backup = 1, h.backup
	backup := *h
	backup.current, backup.backup = h.backup, 1
	backup.entriesLBA = h.backup - arrSectors
	if _, err := f.WriteAt(arr, int64(primary.entriesLBA)*SectorSize); err != nil {
		return fmt.Errorf("writing the GPT partition array: %w", err)
	}
	if _, err := f.WriteAt(arr, int64(backup.entriesLBA)*SectorSize); err != nil {
		return fmt.Errorf("writing the backup GPT partition array: %w", err)
	}
	for _, hd := range []gptHeader{primary, backup} {
		if _, err := f.WriteAt(hd.bytes(), int64(hd.current)*SectorSize); err != nil {
			return fmt.Errorf("writing the GPT header: %w", err)
		}
	}
	var mbr [SectorSize]byte
	if _, err := f.ReadAt(mbr[:], 0); err != nil {
		return fmt.Errorf("reading the protective MBR: %w", err)
	}
	for i := range 4 {
		e := mbr[446+16*i:]
		if e[4] == gptProtective {
			n := h.backup
			if n > 0xffffffff {
				n = 0xffffffff
			}
			binary.LittleEndian.PutUint32(e[12:16], uint32(n))
		}
	}
	if _, err := f.WriteAt(mbr[:], 0); err != nil {
		return fmt.Errorf("writing the protective MBR: %w", err)
	}
	return nil
}

func (h gptHeader) bytes() []byte {
	b := make([]byte, SectorSize)
	copy(b, gptSignature)
	binary.LittleEndian.PutUint32(b[8:12], 0x00010000)
	binary.LittleEndian.PutUint32(b[12:16], gptHeaderSize)
	binary.LittleEndian.PutUint64(b[24:32], h.current)
	binary.LittleEndian.PutUint64(b[32:40], h.backup)
	binary.LittleEndian.PutUint64(b[40:48], h.firstUsable)
	binary.LittleEndian.PutUint64(b[48:56], h.lastUsable)
	copy(b[56:72], h.diskGUID[:])
	binary.LittleEndian.PutUint64(b[72:80], h.entriesLBA)
	binary.LittleEndian.PutUint32(b[80:84], h.numEntries)
	binary.LittleEndian.PutUint32(b[84:88], h.entrySize)
	binary.LittleEndian.PutUint32(b[88:92], h.entriesCRC)
	binary.LittleEndian.PutUint32(b[16:20], crc32.ChecksumIEEE(b[:gptHeaderSize]))
	return b
}

// maxMBRSectors is the most an MBR partition can address (2 TiB).
const maxMBRSectors = 0xffffffff

func addMBR(f ReadWriterAt, diskSize, need int64, t *Table) (Partition, error) {
	var mbr [SectorSize]byte
	if _, err := f.ReadAt(mbr[:], 0); err != nil {
		return Partition{}, fmt.Errorf("reading the MBR: %w", err)
	}
	slot := -1
	for i := range 4 {
		if mbr[446+16*i+4] == 0 {
			slot = i
			break
		}
	}
	if slot < 0 {
		return Partition{}, errors.New("MBR: already 4 primary partitions")
	}
	sectors := diskSize / SectorSize
	if sectors > maxMBRSectors {
		sectors = maxMBRSectors
	}
	free := int64(alignSectors)
	for _, p := range t.Partitions {
		if e := (p.Start + p.Size) / SectorSize; e > free {
			free = e
		}
	}
	end := sectors - 1
	start := (end + 1 - MaxPartitionSize/SectorSize) / alignSectors * alignSectors
	if start < free {
		start = (free + alignSectors - 1) / alignSectors * alignSectors
	}
	if start > end || (end-start+1)*SectorSize < need {
		return Partition{}, fmt.Errorf("MBR: no room for %d bytes at the end of the disk", need)
	}
	e := mbr[446+16*slot : 446+16*(slot+1)]
	clear(e)
	copy(e[1:4], []byte{0xfe, 0xff, 0xff})
	e[4] = 0x83
	copy(e[5:8], []byte{0xfe, 0xff, 0xff})
	binary.LittleEndian.PutUint32(e[8:12], uint32(start))
	binary.LittleEndian.PutUint32(e[12:16], uint32(end-start+1))
	if _, err := f.WriteAt(mbr[:], 0); err != nil {
		return Partition{}, fmt.Errorf("writing the MBR: %w", err)
	}
	return Partition{Number: slot + 1, Start: start * SectorSize, Size: (end - start + 1) * SectorSize, Type: "0x83"}, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// guidString formats a GPT GUID (mixed-endian) as text.
func guidString(b []byte) string {
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x", binary.LittleEndian.Uint32(b[0:4]), binary.LittleEndian.Uint16(b[4:6]),
		binary.LittleEndian.Uint16(b[6:8]), b[8:10], b[10:16])
}

func utf16Name(b []byte) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return string(bytes.TrimSpace([]byte(string(utf16.Decode(u)))))
}
