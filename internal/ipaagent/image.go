package ipaagent

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"  //nolint:gosec // Ironic's legacy image checksum is MD5
	"crypto/sha1" //nolint:gosec // an os_hash_algo Glance allows
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/airshipit/airship-go/internal/configdrive"
)

// imageInfo is write_image's image_info.
type imageInfo struct {
	ID           string   `json:"id"`
	URLs         []string `json:"urls"`
	DiskFormat   string   `json:"disk_format"`
	Checksum     string   `json:"checksum"`
	OSHashAlgo   string   `json:"os_hash_algo"`
	OSHashValue  string   `json:"os_hash_value"`
	NodeUUID     string   `json:"node_uuid"`
	ImageType    string   `json:"image_type"`
	Configdrive  any      `json:"configdrive"`
	StreamRaw    bool     `json:"stream_raw_images"`
	DeployBootMd string   `json:"deploy_boot_mode"`
}

// safeURL is an image URL fit for errors and logs: no user information,
// query nor fragment.
func safeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an unparsable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// writeImage is the write_image deploy step.
func (a *Agent) writeImage(ctx context.Context, n node, args map[string]any) error {
	raw, err := json.Marshal(args["image_info"])
	if err != nil {
		return fmt.Errorf("write_image: image_info: %w", err)
	}
	var info imageInfo
	if err := json.Unmarshal(raw, &info); err != nil || len(info.URLs) == 0 {
		return errors.New("write_image: image_info has no urls")
	}
	if f := strings.ToLower(info.DiskFormat); f != "" && f != "raw" {
		return fmt.Errorf("write_image: image %s: disk_format %s: the emulated agent writes raw whole-disk images only; "+
			"let Ironic convert it ([DEFAULT] force_raw_images = true with [agent] image_download_source = local) or give a raw image", info.ID, info.DiskFormat)
	}
	if info.ImageType == "partition" {
		return fmt.Errorf("write_image: image %s: a partition image: the emulated agent writes whole-disk images only", info.ID)
	}
	disk, err := rootDisk(a.cfg.Disks, n.Properties.RootDevice)
	if err != nil {
		return fmt.Errorf("write_image: node %s: %w", n.UUID, err)
	}
	if err := a.download(ctx, info, disk); err != nil {
		return fmt.Errorf("write_image: %w", err)
	}
	a.mu.Lock()
	a.written = &disk
	a.mu.Unlock()
	a.changed(disk.Name)
	cd := args["configdrive"]
	if cd == nil {
		cd = info.Configdrive
	}
	if err := a.writeConfigDrive(ctx, disk, cd); err != nil {
		return fmt.Errorf("write_image: config drive on disk %s: %w", disk.Name, err)
	}
	a.cfg.Logf("image %s written to disk %s", safeURL(info.URLs[0]), disk.Name)
	return nil
}

func (a *Agent) changed(disk string) {
	if a.cfg.DiskChanged != nil {
		a.cfg.DiskChanged(disk)
	}
}

// newHash returns the hash of an os_hash_algo, else of the legacy
// checksum (md5), and the value expected.
func newHash(info imageInfo) (hash.Hash, string, error) {
	algo, want := strings.ToLower(info.OSHashAlgo), strings.ToLower(info.OSHashValue)
	if algo == "" || want == "" {
		algo, want = "md5", strings.ToLower(info.Checksum)
	}
	if want == "" {
		return nil, "", fmt.Errorf("image %s: no checksum (os_hash_algo and os_hash_value, or checksum)", info.ID)
	}
	switch algo {
	case "md5":
		return md5.New(), want, nil //nolint:gosec // see the import
	case "sha1":
		return sha1.New(), want, nil //nolint:gosec // see the import
	case "sha256":
		return sha256.New(), want, nil
	case "sha512":
		return sha512.New(), want, nil
	}
	return nil, "", fmt.Errorf("image %s: os_hash_algo %q not supported (md5, sha1, sha256, sha512)", info.ID, info.OSHashAlgo)
}

// download streams the image onto the disk, verifying its checksum.
func (a *Agent) download(ctx context.Context, info imageInfo, disk Disk) error {
	src := safeURL(info.URLs[0])
	if isURL(info.Checksum) && (info.OSHashAlgo == "" || info.OSHashValue == "") {
		sum, err := a.checksumFromURL(ctx, info.Checksum, info.URLs[0])
		if err != nil {
			return fmt.Errorf("image %s: %w", src, err)
		}
		info.Checksum = sum
	}
	h, want, err := newHash(info)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, info.URLs[0], nil)
	if err != nil {
		return fmt.Errorf("image %s: %w", src, err)
	}
	resp, err := a.cfg.ImageClient.Do(req)
	if err != nil {
		return fmt.Errorf("downloading image %s: %w", src, redactErr(err, info.URLs[0], src))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("downloading image %s: %s", src, resp.Status)
	}
	if resp.ContentLength > disk.Size {
		return fmt.Errorf("image %s: %d bytes, larger than disk %s (%d bytes)", src, resp.ContentLength, disk.Name, disk.Size)
	}
	f, err := openDisk(disk)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	body := io.TeeReader(resp.Body, h)
	head := make([]byte, 4)
	n, _ := io.ReadFull(body, head)
	if bytes.HasPrefix(head[:n], []byte("QFI\xfb")) {
		return fmt.Errorf("image %s: a qcow2 image: the emulated agent writes raw images only; "+
			"let Ironic convert it ([DEFAULT] force_raw_images = true with [agent] image_download_source = local)", src)
	}
	written, err := writeSparse(f, io.MultiReader(bytes.NewReader(head[:n]), body), disk.Size)
	if err != nil {
		return fmt.Errorf("writing image %s to disk %s: %w", src, disk.Name, redactErr(err, info.URLs[0], src))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("image %s: checksum mismatch: %s %s, expected %s", src, algoName(info), got, want)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("disk %s: %w", disk.Name, err)
	}
	a.cfg.Logf("image %s: %d bytes verified (%s) on disk %s", src, written, algoName(info), disk.Name)
	return nil
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

// checksumFromURL downloads a checksum file, as IPA does for a checksum
// that is a URL: a file holding only the checksum, or lines of
// "<checksum> <name>" (also "*<name>"), the one naming the image's file.
func (a *Agent) checksumFromURL(ctx context.Context, sumURL, imageURL string) (string, error) {
	safe := safeURL(sumURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sumURL, nil)
	if err != nil {
		return "", fmt.Errorf("checksum file %s: %w", safe, err)
	}
	resp, err := a.cfg.ImageClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("downloading the checksum file %s: %w", safe, redactErr(err, sumURL, safe))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("downloading the checksum file %s: %s", safe, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("downloading the checksum file %s: %w", safe, err)
	}
	u, err := url.Parse(imageURL)
	if err != nil {
		return "", fmt.Errorf("image URL: %w", err)
	}
	sum := checksumFor(string(data), path.Base(u.Path))
	if sum == "" {
		return "", fmt.Errorf("checksum file %s has no checksum for %s", safe, path.Base(u.Path))
	}
	return sum, nil
}

// checksumFor finds the checksum of file name in a checksum file's text.
func checksumFor(text, name string) string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 1 && !strings.ContainsAny(lines[0], " \t") {
		return lines[0]
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 2 && strings.TrimPrefix(f[1], "*") == name {
			return f[0]
		}
	}
	return ""
}

func algoName(info imageInfo) string {
	if info.OSHashAlgo != "" && info.OSHashValue != "" {
		return info.OSHashAlgo
	}
	return "md5"
}

// redactErr replaces the full URL in a client error (url.Error quotes
// it) by its safe form.
func redactErr(err error, full, safe string) error {
	if !strings.Contains(err.Error(), full) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), full, safe))
}

// writeConfigDrive writes the config drive (gzip+base64, or a URL) into
// the disk's config-2 partition, adding one at its end when there is none.
func (a *Agent) writeConfigDrive(ctx context.Context, disk Disk, cd any) error {
	s, ok := cd.(string)
	if cd != nil && !ok {
		return fmt.Errorf("a %T: Ironic sends a string (base64 of a gzipped ISO, or a URL)", cd)
	}
	if s == "" {
		return nil
	}
	iso, err := a.configDriveImage(ctx, s)
	if err != nil {
		return err
	}
	if len(iso) > configdrive.MaxPartitionSize {
		return fmt.Errorf("%d MiB, more than the 64 MiB allowed", len(iso)>>20)
	}
	f, err := openDisk(disk)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	off, _, err := configdrive.Find(f, disk.Size)
	if err != nil {
		if !errors.Is(err, configdrive.ErrNotFound) {
			return err
		}
		p, err := configdrive.AddPartition(f, disk.Size, int64(len(iso)), configdrive.Label)
		if err != nil {
			return err
		}
		off = p.Start
		a.cfg.Logf("disk %s: config drive partition %d added (%d MiB at %d MiB)", disk.Name, p.Number, p.Size>>20, p.Start>>20)
	}
	if _, err := f.WriteAt(iso, off); err != nil {
		return fmt.Errorf("writing: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing: %w", err)
	}
	return nil
}

// configDriveImage decodes (or downloads) the config drive ISO.
func (a *Agent) configDriveImage(ctx context.Context, s string) ([]byte, error) {
	var data []byte
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s, nil)
		if err != nil {
			return nil, fmt.Errorf("config drive URL %s: %w", safeURL(s), err)
		}
		resp, err := a.cfg.HTTPClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("downloading the config drive from %s: %w", safeURL(s), redactErr(err, s, safeURL(s)))
		}
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("downloading the config drive from %s: %s", safeURL(s), resp.Status)
		}
		if data, err = io.ReadAll(io.LimitReader(resp.Body, configdrive.MaxPartitionSize+1)); err != nil {
			return nil, fmt.Errorf("downloading the config drive from %s: %w", safeURL(s), err)
		}
	}
	if data == nil {
		dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
		if err != nil {
			return nil, errors.New("neither a URL nor base64")
		}
		data = dec
	}
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		out, err := io.ReadAll(io.LimitReader(zr, configdrive.MaxPartitionSize+1))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		data = out
	}
	return data, nil
}

// openDisk opens a disk file for writing, made sparse at its size when
// new or short.
func openDisk(d Disk) (*os.File, error) {
	f, err := os.OpenFile(d.Path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("disk %s: %w", d.Name, err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < d.Size {
		err = f.Truncate(d.Size)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("disk %s: %w", d.Name, err)
	}
	return f, nil
}
