package image

import (
	"archive/tar"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

const testCA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

// files reads every entry of an image's layers: path -> header.
func files(t *testing.T, img v1.Image) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	heads, data := map[string]*tar.Header{}, map[string][]byte{}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			heads[h.Name], data[h.Name] = h, b
		}
		_ = rc.Close() // only read: closing cannot lose data
	}
	return heads, data
}

func mustDigest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestImageLayoutAndReproducibility builds a two-platform image from two
// small files, reads it back from the OCI layout, and builds it again.
func TestImageLayoutAndReproducibility(t *testing.T) {
	dir := t.TempDir()
	bins := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(dir, arch, "widget-operator")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("binary for "+arch), 0o755); err != nil {
			t.Fatal(err)
		}
		bins["linux/"+arch] = p
	}
	spec := Spec{Name: "widget-operator", Binaries: bins, CACertificates: []byte(testCA), Source: "https://example.invalid/src", Revision: "abc123", Version: "v0.1.0"}
	idx, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "layout")
	if err := WriteLayout(out, idx); err != nil {
		t.Fatal(err)
	}
	back, err := layout.ImageIndexFromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	// The layout's index is the image index built: one image per platform.
	lm, err := back.IndexManifest()
	if err != nil || len(lm.Manifests) != 2 {
		t.Fatalf("layout index: %+v %v", lm, err)
	}
	if got, want := mustDigest(t, back), mustDigest(t, idx); got != want {
		t.Errorf("layout index %s, built %s", got, want)
	}
	built := back
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := Platform(built, "linux/"+arch)
		if err != nil {
			t.Fatalf("%s: %v", arch, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != arch || cf.OS != "linux" || cf.Config.User != "65532:65532" || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/usr/local/bin/widget-operator" {
			t.Errorf("%s config: os %s arch %s user %q entrypoint %v", arch, cf.OS, cf.Architecture, cf.Config.User, cf.Config.Entrypoint)
		}
		for k, v := range map[string]string{"org.opencontainers.image.source": "https://example.invalid/src", "org.opencontainers.image.revision": "abc123", "org.opencontainers.image.version": "v0.1.0"} {
			if cf.Config.Labels[k] != v {
				t.Errorf("%s label %s = %q, want %q", arch, k, cf.Config.Labels[k], v)
			}
		}
		if !cf.Created.Time.Equal(Epoch) {
			t.Errorf("%s created %v, want the fixed epoch", arch, cf.Created)
		}
		heads, data := files(t, img)
		if string(data["usr/local/bin/widget-operator"]) != "binary for "+arch || heads["usr/local/bin/widget-operator"].Mode != 0o755 {
			t.Errorf("%s binary: %q mode %o", arch, data["usr/local/bin/widget-operator"], heads["usr/local/bin/widget-operator"].Mode)
		}
		if !strings.Contains(string(data["etc/passwd"]), "nonroot:x:65532:65532") || string(data["etc/ssl/certs/ca-certificates.crt"]) != testCA {
			t.Errorf("%s base files: passwd %q, CA %q", arch, data["etc/passwd"], data["etc/ssl/certs/ca-certificates.crt"])
		}
		if h := heads["tmp/"]; h == nil || h.Mode != 0o1777 {
			t.Errorf("%s /tmp: %+v", arch, h)
		}
		for n, h := range heads {
			if !h.ModTime.Equal(Epoch) {
				t.Errorf("%s %s has mtime %v", arch, n, h.ModTime)
			}
		}
	}
	// Same inputs, same digest; another binary, another digest.
	again, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := idx.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("two builds of the same binaries: %s and %s", d1, d2)
	}
	if err := os.WriteFile(bins["linux/arm64"], []byte("changed"), 0o755); err != nil {
		t.Fatal(err)
	}
	changed, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	if d3, _ := changed.Digest(); d3 == d1 {
		t.Error("a changed binary gave the same digest")
	}
	if _, err := Build(Spec{Name: "x", Binaries: map[string]string{"linux/amd64": bins["linux/amd64"]}}); err == nil || !strings.Contains(err.Error(), "CA certificates") {
		t.Errorf("no CA bundle: %v", err)
	}
	if _, err := Build(Spec{Name: "x", Binaries: map[string]string{"linux/amd64": filepath.Join(dir, "missing")}, CACertificates: []byte(testCA)}); err == nil || !strings.Contains(err.Error(), "image x (linux/amd64)") {
		t.Errorf("missing binary: %v", err)
	}
}

// TestImageHoldsWorkingBinary builds armada-operator statically for this
// machine, puts it in an image, writes the `docker load` tarball, reads
// the binary back out of the tarball's layer and runs its version command.
func TestImageHoldsWorkingBinary(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "armada-operator")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", bin, "./cmd/armada-operator")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building armada-operator: %v\n%s", err, out)
	}
	host := "linux/" + runtime.GOARCH
	idx, err := Build(Spec{Name: "armada-operator", Binaries: map[string]string{host: bin}, CACertificates: []byte(testCA), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(dir, "armada-operator.tar")
	if err := WriteTarball(tarPath, "localhost/airship/armada-operator:latest", host, idx); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, data := files(t, img)
	extracted := filepath.Join(dir, "extracted")
	if err := os.WriteFile(extracted, data["usr/local/bin/armada-operator"], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), extracted, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "armada-operator") {
		t.Fatalf("the binary from the image: %v\n%s", err, out)
	}
}

func TestKustomizationPinsDigests(t *testing.T) {
	a := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("a", 64)}
	b := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("b", 64)}
	got := string(Kustomization("../../config/default", map[string]v1.Hash{"sip-operator": b, "armada-operator": a}))
	want := "resources:\n- ../../config/default\nimages:\n- name: localhost/airship/armada-operator\n  digest: sha256:" + a.Hex +
		"\n- name: localhost/airship/sip-operator\n  digest: sha256:" + b.Hex + "\n"
	if !strings.HasSuffix(got, want) || !strings.Contains(got, "kind: Kustomization") {
		t.Errorf("kustomization:\n%s\nwant it to end with:\n%s", got, want)
	}
}

// TestPushToRegistry pushes an index to an in-process registry behind
// basic auth taken from a Docker config, pulls it back by tag and checks
// the digest and a platform's config.
func TestPushToRegistry(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	idx, err := Build(Spec{Name: "widget-operator", Binaries: map[string]string{"linux/amd64": bin}, CACertificates: []byte(testCA)})
	if err != nil {
		t.Fatal(err)
	}
	const user, password = "airship", "push-pw-9"
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	ref := host + "/airship/widget-operator:latest"

	// No credentials: refused, and the error names the reference.
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	if _, err := Push(context.Background(), ref, idx, PushOptions{Insecure: true}); err == nil || !strings.Contains(err.Error(), "pushing "+ref) {
		t.Fatalf("push without credentials: %v", err)
	}
	cfgDir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(`{"auths":{"`+host+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfgDir)
	digest, err := Push(context.Background(), ref, idx, PushOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(mustTag(t, ref), remote.WithAuth(&authn.Basic{Username: user, Password: password}))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDigest(t, pulled); got != digest || got != mustDigest(t, idx) {
		t.Errorf("pulled %s, pushed %s, built %s", got, digest, mustDigest(t, idx))
	}
	img, err := Platform(pulled, "linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	if cf, err := img.ConfigFile(); err != nil || cf.Config.User != "65532:65532" {
		t.Errorf("pulled config: %+v %v", cf, err)
	}
	k := string(KustomizationAt("../../config/default", host+"/airship", map[string]v1.Hash{"widget-operator": digest}))
	if !strings.Contains(k, "- name: localhost/airship/widget-operator\n  newName: "+host+"/airship/widget-operator\n  digest: "+digest.String()) {
		t.Errorf("kustomization after a push:\n%s", k)
	}
}

func mustTag(t *testing.T, ref string) name.Tag {
	t.Helper()
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}
