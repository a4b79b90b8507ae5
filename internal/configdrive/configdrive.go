package configdrive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/diskfs/go-diskfs/backend"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// Label is the volume label of a config drive.
const Label = "config-2"

// Paths of the files in a config drive.
const (
	MetaDataPath    = "openstack/latest/meta_data.json"
	UserDataPath    = "openstack/latest/user_data"
	NetworkDataPath = "openstack/latest/network_data.json"
)

// MaxFileSize caps each file read from a config drive; MaxImageSize caps
// the image (the agent writes at most 64 MiB, as IPA does).
const (
	MaxFileSize  = 16 << 20
	MaxImageSize = 64 << 20
)

// ErrNotFound is returned when a disk holds no config drive.
var ErrNotFound = errors.New("no config-2 filesystem")

// Data is a config drive's content.
type Data struct {
	// MetaData is openstack/latest/meta_data.json (JSON).
	MetaData []byte
	// UserData is openstack/latest/user_data; nil when absent.
	UserData []byte
	// NetworkData is openstack/latest/network_data.json; nil when absent.
	NetworkData []byte
}

// iso9660 layout: the primary volume descriptor is at byte 32768.
const (
	pvdOffset    = 16 * 2048
	labelLength  = 32
	blockSizeISO = 2048
	minISOSize   = pvdOffset + 3*blockSizeISO
)

// VolumeLabel returns the ISO 9660 volume label of the image at r (size
// bytes), or "" when it is not an ISO 9660 image.
func VolumeLabel(r io.ReaderAt, size int64) string {
	if size < minISOSize {
		return ""
	}
	var pvd [2048]byte
	if _, err := r.ReadAt(pvd[:], pvdOffset); err != nil {
		return ""
	}
	if pvd[0] != 1 || string(pvd[1:6]) != "CD001" {
		return ""
	}
	return string(bytes.TrimRight(pvd[40:40+labelLength], " \x00"))
}

// checkPVD refuses an image whose primary volume descriptor points past
// its end, before go-diskfs allocates what it says, and returns the
// image's size as it says (the volume space), which may be less than
// size (a partition bigger than its filesystem).
func checkPVD(r io.ReaderAt, size int64) (int64, error) {
	if size < minISOSize {
		return 0, fmt.Errorf("%d bytes: too small for ISO 9660", size)
	}
	var pvd [2048]byte
	if _, err := r.ReadAt(pvd[:], pvdOffset); err != nil {
		return 0, fmt.Errorf("reading the volume descriptor: %w", err)
	}
	if pvd[0] != 1 || string(pvd[1:6]) != "CD001" {
		return 0, errors.New("not an ISO 9660 image (no primary volume descriptor)")
	}
	bs := int64(binary.LittleEndian.Uint16(pvd[128:130]))
	if bs != blockSizeISO {
		return 0, fmt.Errorf("logical block size %d: only 2048 is read", bs)
	}
	iso := int64(binary.LittleEndian.Uint32(pvd[80:84])) * bs
	if iso > size {
		// Truncated, or an unpadded last block: reads past the end fail.
		iso = size
	}
	switch {
	case iso > MaxImageSize:
		return 0, fmt.Errorf("%d bytes: larger than a config drive may be (%d)", iso, MaxImageSize)
	case iso < minISOSize:
		return 0, fmt.Errorf("the image says %d bytes: too small for ISO 9660", iso)
	}
	if err := validate(r, iso); err != nil {
		return 0, err
	}
	return iso, nil
}

// Read reads the config drive image at r, size bytes long.
func Read(r io.ReaderAt, size int64) (d Data, err error) {
	size, err = checkPVD(r, size)
	if err != nil {
		return Data{}, fmt.Errorf("config drive: %w", err)
	}
	if l := VolumeLabel(r, size); l != Label {
		return Data{}, fmt.Errorf("config drive: volume label %q, want %q", l, Label)
	}
	defer func() {
		if p := recover(); p != nil {
			d, err = Data{}, fmt.Errorf("config drive: malformed ISO 9660 image (%v)", p)
		}
	}()
	fsys, err := iso9660.Read(&readerStorage{r: r, size: size}, size, 0, blockSizeISO)
	if err != nil {
		return Data{}, fmt.Errorf("config drive: %w", err)
	}
	if d.MetaData, err = readFile(fsys, size, MetaDataPath); err != nil {
		return Data{}, err
	}
	if d.MetaData == nil {
		return Data{}, fmt.Errorf("config drive: no %s", MetaDataPath)
	}
	if d.UserData, err = readFile(fsys, size, UserDataPath); err != nil {
		return Data{}, err
	}
	if d.NetworkData, err = readFile(fsys, size, NetworkDataPath); err != nil {
		return Data{}, err
	}
	return d, nil
}

// ReadISOFile reads one file of any ISO 9660 image at r (size bytes),
// its path's components matched without regard to case (plain ISO 9660
// names are upper case); at most MaxFileSize bytes. fs.ErrNotExist when
// the image has no such file.
func ReadISOFile(r io.ReaderAt, size int64, name string) (data []byte, err error) {
	size, err = checkPVD(r, size)
	if err != nil {
		return nil, fmt.Errorf("ISO 9660: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			data, err = nil, fmt.Errorf("ISO 9660: malformed image (%v)", p)
		}
	}()
	fsys, err := iso9660.Read(&readerStorage{r: r, size: size}, size, 0, blockSizeISO)
	if err != nil {
		return nil, fmt.Errorf("ISO 9660: %w", err)
	}
	dir, found := ".", ""
	parts := strings.Split(strings.Trim(name, "/"), "/")
	for _, part := range parts {
		entries, err := fsys.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("ISO 9660: %s: %w", dir, err)
		}
		found = ""
		for _, e := range entries {
			n := strings.TrimSuffix(e.Name(), ";1")
			if strings.EqualFold(n, part) || strings.EqualFold(strings.TrimSuffix(n, "."), part) {
				found = e.Name()
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("ISO 9660: %s: %w", name, fs.ErrNotExist)
		}
		if dir == "." {
			dir = found
		} else {
			dir = path.Join(dir, found)
		}
	}
	return readFile(fsys, size, dir)
}

// readFile reads one file of the image; nil without error when absent.
func readFile(fsys *iso9660.FileSystem, size int64, name string) ([]byte, error) {
	fi, err := fsys.Stat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("config drive: %s: %w", name, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("config drive: %s is a directory", name)
	}
	if fi.Size() > MaxFileSize || fi.Size() > size {
		return nil, fmt.Errorf("config drive: %s: %d bytes, more than the image or the %d allowed", name, fi.Size(), MaxFileSize)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fmt.Errorf("config drive: %s: %w", name, err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config drive: reading %s: %w", name, err)
	}
	if int64(len(data)) > MaxFileSize {
		return nil, fmt.Errorf("config drive: %s: more than %d bytes", name, MaxFileSize)
	}
	return data, nil
}

// isNotFound tells go-diskfs's "not found" errors, which are not
// fs.ErrNotExist.
func isNotFound(err error) bool {
	s := err.Error()
	return bytes.Contains([]byte(s), []byte("not found")) || bytes.Contains([]byte(s), []byte("does not exist")) ||
		bytes.Contains([]byte(s), []byte("no such file"))
}

// ReadFile reads the config drive in an image file (an ISO, or a disk
// image holding one, see Find).
func ReadFile(path string) (Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return Data{}, fmt.Errorf("config drive: %w", err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return Data{}, fmt.Errorf("config drive: %w", err)
	}
	return ReadDisk(f, fi.Size())
}

// ReadDisk finds the config drive on a disk image (Find) and reads it.
func ReadDisk(r io.ReaderAt, size int64) (Data, error) {
	off, n, err := Find(r, size)
	if err != nil {
		return Data{}, err
	}
	return Read(io.NewSectionReader(r, off, n), n)
}

// readerStorage is an io.ReaderAt as go-diskfs's read-only storage.
type readerStorage struct {
	r    io.ReaderAt
	size int64
	pos  int64
}

var _ backend.Storage = (*readerStorage)(nil)

func (s *readerStorage) Stat() (fs.FileInfo, error) { return storageInfo{size: s.size}, nil }
func (s *readerStorage) Read(p []byte) (int, error) {
	n, err := s.ReadAt(p, s.pos)
	s.pos += int64(n)
	return n, err
}
func (s *readerStorage) Close() error { return nil }
func (s *readerStorage) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= s.size {
		return 0, io.EOF
	}
	if int64(len(p)) > s.size-off {
		n, err := s.r.ReadAt(p[:s.size-off], off)
		if err == nil {
			err = io.EOF
		}
		return n, err
	}
	return s.r.ReadAt(p, off)
}
func (s *readerStorage) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += s.pos
	case io.SeekEnd:
		offset += s.size
	}
	if offset < 0 {
		return 0, errors.New("negative position")
	}
	s.pos = offset
	return offset, nil
}
func (s *readerStorage) Sys() (*os.File, error) { return nil, errors.New("not a file") }
func (s *readerStorage) Writable() (backend.WritableFile, error) {
	return nil, backend.ErrIncorrectOpenMode
}
func (s *readerStorage) Path() string { return "" }

type storageInfo struct{ size int64 }

func (i storageInfo) Name() string       { return "config-drive" }
func (i storageInfo) Size() int64        { return i.size }
func (i storageInfo) Mode() fs.FileMode  { return 0o444 }
func (i storageInfo) ModTime() time.Time { return time.Time{} }
func (i storageInfo) IsDir() bool        { return false }
func (i storageInfo) Sys() any           { return nil }
