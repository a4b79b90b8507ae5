package configdrive

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path"

	"github.com/diskfs/go-diskfs/backend/file"
	"github.com/diskfs/go-diskfs/filesystem/iso9660"
)

// Build returns a config drive image of d: ISO 9660 with Rock Ridge and
// Joliet names, volume label config-2, as Ironic builds one. MetaData is
// required.
func Build(d Data) ([]byte, error) {
	if len(d.MetaData) == 0 {
		return nil, errors.New("config drive: no meta-data")
	}
	dir, err := os.MkdirTemp("", "configdrive-")
	if err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	img := path.Join(dir, "image.iso")
	f, err := os.OpenFile(img, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	defer func() { _ = f.Close() }()
	ws := path.Join(dir, "workspace")
	if err := os.Mkdir(ws, 0o700); err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	fsys, err := iso9660.Create(file.New(f, false), 0, 0, blockSizeISO, ws)
	if err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	if err := fsys.Mkdir("openstack/latest"); err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	for _, e := range []struct {
		name string
		data []byte
	}{{MetaDataPath, d.MetaData}, {UserDataPath, d.UserData}, {NetworkDataPath, d.NetworkData}} {
		if e.data == nil {
			continue
		}
		if err := writeFile(fsys, e.name, e.data); err != nil {
			return nil, err
		}
	}
	if err := fsys.Finalize(iso9660.FinalizeOptions{RockRidge: true, Joliet: true, VolumeIdentifier: Label}); err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	out, err := os.ReadFile(img)
	if err != nil {
		return nil, fmt.Errorf("config drive: %w", err)
	}
	// Pad to the volume size the descriptor gives.
	if len(out) >= pvdOffset+84 {
		if n := int(binary.LittleEndian.Uint32(out[pvdOffset+80:])) * blockSizeISO; n > len(out) && n <= MaxImageSize {
			out = append(out, make([]byte, n-len(out))...)
		}
	}
	return out, nil
}

func writeFile(fsys *iso9660.FileSystem, name string, data []byte) error {
	w, err := fsys.OpenFile(name, os.O_CREATE|os.O_RDWR)
	if err != nil {
		return fmt.Errorf("config drive: %s: %w", name, err)
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return fmt.Errorf("config drive: writing %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("config drive: writing %s: %w", name, err)
	}
	return nil
}
