package image

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// TestSpecOptions builds an image with every optional field of Spec set
// and one with none, and checks where the binary and the files go, who it
// runs as, its entrypoint and labels.
func TestSpecOptions(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                  string
		spec                  Spec
		path, user, passwd    string
		entrypoint, extraFile []string
		label                 string
	}{
		{name: "defaults", spec: Spec{Name: "widget"},
			path: "usr/local/bin/widget", user: "65532:65532", passwd: "nonroot:x:65532:65532:",
			entrypoint: []string{"/usr/local/bin/widget"}},
		{name: "all set", spec: Spec{Name: "lb", Path: "/usr/sbin/lb", Entrypoint: []string{"/usr/sbin/lb", "-f", "/cfg"},
			UID: 99, UserName: "lb", Labels: map[string]string{"org.opencontainers.image.version": "2.6-1", "x.package": "lb"},
			Files: map[string][]File{"linux/amd64": {{Path: "/lib/x86_64-linux-gnu/libz.so.1", Mode: 0o644, Data: []byte("lib")}}}},
			path: "usr/sbin/lb", user: "99:99", passwd: "lb:x:99:99:", entrypoint: []string{"/usr/sbin/lb", "-f", "/cfg"},
			extraFile: []string{"lib/x86_64-linux-gnu/libz.so.1", "lib"}, label: "2.6-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.Binaries, spec.CACertificates, spec.Version = map[string]string{"linux/amd64": bin}, []byte(testCA), "v1"
			idx, err := Build(spec)
			if err != nil {
				t.Fatal(err)
			}
			img, err := Platform(idx, "linux/amd64")
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.Config.User != tc.user || !slices.Equal(cf.Config.Entrypoint, tc.entrypoint) {
				t.Errorf("user %q entrypoint %q", cf.Config.User, cf.Config.Entrypoint)
			}
			if want := tc.label; want == "" && cf.Config.Labels["org.opencontainers.image.version"] != "v1" || want != "" && (cf.Config.Labels["org.opencontainers.image.version"] != want || cf.Config.Labels["x.package"] != "lb") {
				t.Errorf("labels %v", cf.Config.Labels)
			}
			heads, data := files(t, img)
			if string(data[tc.path]) != "binary" || heads[tc.path].Mode != 0o755 {
				t.Errorf("binary at %s: %q", tc.path, data[tc.path])
			}
			if !strings.Contains(string(data["etc/passwd"]), tc.passwd) {
				t.Errorf("/etc/passwd %q, want %q in it", data["etc/passwd"], tc.passwd)
			}
			if tc.extraFile != nil && string(data[tc.extraFile[0]]) != tc.extraFile[1] {
				t.Errorf("%s: %q", tc.extraFile[0], data[tc.extraFile[0]])
			}
		})
	}
}

// TestArchiveIsAnOCILayout writes a two-platform index as an OCI archive,
// unpacks it and reads it back as an OCI layout: index.json names the
// index by each reference (the annotations ctr import names images by),
// and every blob of it is there with the right digest.
func TestArchiveIsAnOCILayout(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(dir, arch)
		if err := os.WriteFile(p, []byte("binary for "+arch), 0o755); err != nil {
			t.Fatal(err)
		}
		bins["linux/"+arch] = p
	}
	idx, err := Build(Spec{Name: "widget", Binaries: bins, CACertificates: []byte(testCA)})
	if err != nil {
		t.Fatal(err)
	}
	digest := mustDigest(t, idx)
	refs := []string{RefName("widget"), "localhost/airship/widget@" + digest.String()}
	archive := filepath.Join(dir, "widget.oci.tar")
	if err := WriteArchive(archive, idx, refs...); err != nil {
		t.Fatal(err)
	}
	unpacked := filepath.Join(dir, "unpacked")
	names := untar(t, archive, unpacked)
	if !slices.IsSorted(names) || names[len(names)-2] != "index.json" || names[len(names)-1] != "oci-layout" {
		t.Errorf("archive entries: %q", names)
	}
	lp, err := layout.FromPath(unpacked)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != len(refs) {
		t.Fatalf("index.json: %+v", m)
	}
	for i, d := range m.Manifests {
		if d.Digest != digest || d.Annotations["org.opencontainers.image.ref.name"] != refs[i] || d.Annotations["io.containerd.image.name"] != refs[i] {
			t.Errorf("index.json entry %d: %+v", i, d)
		}
	}
	back, err := top.ImageIndex(digest)
	if err != nil {
		t.Fatal(err)
	}
	// Every manifest, config and layer is read from the archive and its
	// digest checked.
	if err := validate.Index(back); err != nil {
		t.Error(err)
	}
	// The same index gives the same archive.
	again := filepath.Join(dir, "again.oci.tar")
	if err := WriteArchive(again, idx, refs...); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(archive)
	b, _ := os.ReadFile(again)
	if string(a) != string(b) {
		t.Error("two archives of the same index differ")
	}
	if err := WriteArchive(filepath.Join(dir, "bad.oci.tar"), idx, "Not A Reference"); err == nil || !strings.Contains(err.Error(), `reference "Not A Reference"`) {
		t.Errorf("a bad reference: %v", err)
	}
}

// untar writes the regular files of the tar at path into dir and returns
// every entry's name, in order.
func untar(t *testing.T, path, dir string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // only read
	var names []string
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			err = os.MkdirAll(p, 0o755)
		} else if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, data, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
