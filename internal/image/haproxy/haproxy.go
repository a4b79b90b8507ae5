package haproxy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/airshipit/airship-go/internal/image"
)

const (
	// Name of the image.
	Name = "haproxy"
	// Binary is the installed HAProxy, and its path in the image.
	Binary = "/usr/sbin/haproxy"
	// Package is the Debian package Binary comes from.
	Package = "haproxy"
	// ConfigPath is where SIP mounts the configuration, as in the
	// official image.
	ConfigPath = "/usr/local/etc/haproxy/haproxy.cfg"
	// UID is the uid and gid it runs as, the official image's haproxy
	// user, which SIP's pods set.
	UID = 99
	// PackageLabel names the Debian package the image holds.
	PackageLabel = "org.airshipit.debian.package"
)

// Platform is the only platform the image is built for: this machine's.
var Platform = "linux/" + runtime.GOARCH

// Spec describes the image of the installed HAProxy: Binary, its
// libraries, and base (CA certificates, source and revision labels).
func Spec(ctx context.Context, base image.Spec) (image.Spec, error) {
	if _, err := os.Stat(Binary); errors.Is(err, fs.ErrNotExist) {
		return image.Spec{}, fmt.Errorf("%s is not installed: hack/setup.sh installs the Debian package %s", Binary, Package)
	} else if err != nil {
		return image.Spec{}, fmt.Errorf("image %s: %w", Name, err)
	}
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", Package).Output()
	if err != nil {
		return image.Spec{}, fmt.Errorf("image %s: the version of the Debian package %s (dpkg-query): %w", Name, Package, err)
	}
	version := strings.TrimSpace(string(out))
	libs, err := Closure(Binary)
	if err != nil {
		return image.Spec{}, fmt.Errorf("image %s: the libraries of %s: %w", Name, Binary, err)
	}
	files := make([]image.File, 0, len(libs))
	for _, l := range libs {
		data, err := os.ReadFile(l.Source)
		if err != nil {
			return image.Spec{}, fmt.Errorf("image %s: %w", Name, err)
		}
		st, err := os.Stat(l.Source)
		if err != nil {
			return image.Spec{}, fmt.Errorf("image %s: %w", Name, err)
		}
		files = append(files, image.File{Path: l.Path, Mode: int64(st.Mode().Perm()), Data: data})
	}
	spec := base
	spec.Name = Name
	spec.Binaries = map[string]string{Platform: Binary}
	spec.Files = map[string][]image.File{Platform: files}
	spec.Path = Binary
	// -W: master-worker, which forwards signals and survives a reload;
	// -db: in the foreground, logging to stdout as SIP's configuration
	// says. Neither writes a pid file or opens a socket.
	spec.Entrypoint = []string{Binary, "-W", "-db", "-f", ConfigPath}
	spec.UID, spec.UserName = UID, "haproxy"
	spec.Version = version
	spec.Labels = map[string]string{
		PackageLabel:                           Package + "=" + version,
		"org.opencontainers.image.description": "HAProxy from the Debian package " + Package + " " + version + ", with the shared libraries it needs",
	}
	return spec, nil
}
