package builder

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"time"
)

// tarTime is the modification time of every embedded file, so the same
// configuration always gives the same script.
var tarTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// Tarball packs files (sorted by the caller) into a gzip tarball with
// fixed timestamps and owners.
func Tarball(files []File) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, f := range files {
		name := strings.TrimPrefix(f.Path, "/")
		// Parent directories first, so they get a known mode.
		parts := strings.Split(name, "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/") + "/"
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: tarTime, Format: tar.FormatPAX}); err != nil {
				return nil, err
			}
		}
		h := &tar.Header{Name: name, Mode: f.Mode, ModTime: tarTime, Format: tar.FormatPAX}
		if f.Symlink != "" {
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Symlink
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Content))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		if f.Symlink == "" {
			if _, err := tw.Write(f.Content); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadTarball lists the regular files and symlinks of a tarball made by
// Tarball (directories are skipped).
func ReadTarball(data []byte) ([]File, error) {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	var out []File
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch h.Typeflag {
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, err
			}
			out = append(out, File{Path: "/" + h.Name, Mode: h.Mode, Content: b})
		case tar.TypeSymlink:
			out = append(out, File{Path: "/" + h.Name, Mode: h.Mode, Symlink: h.Linkname})
		}
	}
}

// base64Lines wraps base64 at 76 columns.
func base64Lines(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(s) > 76 {
		out.WriteString(s[:76] + "\n")
		s = s[76:]
	}
	out.WriteString(s)
	return out.String()
}

// PayloadMarker delimits the embedded tarball in scripts.
const PayloadMarker = "PROMENADE_PAYLOAD"

// ExtractPayload finds the embedded tarball of a script and returns its files.
func ExtractPayload(script []byte) ([]File, error) {
	s := string(script)
	start := strings.Index(s, "<<'"+PayloadMarker+"'\n")
	if start < 0 {
		return nil, fmt.Errorf("no embedded payload")
	}
	s = s[start+len("<<'"+PayloadMarker+"'\n"):]
	end := strings.Index(s, "\n"+PayloadMarker+"\n")
	if end < 0 {
		return nil, fmt.Errorf("embedded payload is not terminated")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(s[:end], "\n", ""))
	if err != nil {
		return nil, err
	}
	return ReadTarball(raw)
}

func sha256Lines(files []File) string {
	var b strings.Builder
	for _, f := range files {
		if f.Symlink != "" {
			continue
		}
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(f.Content), strings.TrimPrefix(f.Path, "/"))
	}
	return b.String()
}
