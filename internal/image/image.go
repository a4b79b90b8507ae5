package image

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/airshipit/airship-go/internal/httplimit"
)

// User is the uid and gid the images run as.
const User = 65532

// Epoch is the time stamped on every file and on the image config.
var Epoch = time.Unix(0, 0).UTC()

// BinaryDir is where the binary sits in the image.
const BinaryDir = "/usr/local/bin"

// Spec describes one image.
type Spec struct {
	// Name of the binary and of the image (armada-operator).
	Name string
	// Binaries maps a platform ("linux/amd64") to the static binary built
	// for it.
	Binaries map[string]string
	// CACertificates is the PEM bundle installed as
	// /etc/ssl/certs/ca-certificates.crt.
	CACertificates []byte
	// Labels beyond the OCI ones Build sets (source, revision, version).
	Source, Revision, Version string

	// Path is where the binary sits in the image; default
	// BinaryDir/Name.
	Path string
	// Entrypoint of the image; default [Path].
	Entrypoint []string
	// UID is the uid and gid the image runs as, named UserName in
	// /etc/passwd and /etc/group; default User and "nonroot". Never root.
	UID      int
	UserName string
	// Files adds, per platform, files to the binary's layer (a dynamic
	// binary's shared libraries).
	Files map[string][]File
	// Labels are set on the config too, over the ones above.
	Labels map[string]string
}

// File is a regular file of an image, at an absolute path.
type File struct {
	Path string
	Mode int64
	Data []byte
}

// withDefaults fills in the optional fields of spec.
func (spec Spec) withDefaults() Spec {
	if spec.Path == "" {
		spec.Path = BinaryDir + "/" + spec.Name
	}
	if len(spec.Entrypoint) == 0 {
		spec.Entrypoint = []string{spec.Path}
	}
	if spec.UID == 0 {
		spec.UID = User
	}
	if spec.UserName == "" {
		spec.UserName = "nonroot"
	}
	return spec
}

// Build returns the image index of spec: one image per platform, in the
// order of the platforms' names.
func Build(spec Spec) (v1.ImageIndex, error) {
	if spec.Name == "" || len(spec.Binaries) == 0 {
		return nil, fmt.Errorf("image %q: a name and at least one binary are required", spec.Name)
	}
	spec = spec.withDefaults()
	base, err := baseLayer(spec.CACertificates, spec.UID, spec.UserName)
	if err != nil {
		return nil, err
	}
	platforms := make([]string, 0, len(spec.Binaries))
	for p := range spec.Binaries {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		plat, err := v1.ParsePlatform(p)
		if err != nil {
			return nil, fmt.Errorf("image %s: platform %q: %w", spec.Name, p, err)
		}
		img, err := platformImage(spec, base, spec.Binaries[p], plat)
		if err != nil {
			return nil, fmt.Errorf("image %s (%s): %w", spec.Name, p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
	}
	return idx, nil
}

func platformImage(spec Spec, base v1.Layer, binary string, plat *v1.Platform) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	files := []file{{path: strings.TrimPrefix(spec.Path, "/"), mode: 0o755, data: data}}
	for _, f := range spec.Files[plat.String()] {
		files = append(files, file{path: strings.TrimPrefix(f.Path, "/"), mode: f.Mode, data: f.Data})
	}
	bin, err := layer(files)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, base, bin)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = plat.OS, plat.Architecture, plat.Variant
	cf.Created = v1.Time{Time: Epoch}
	cf.Author = "airship-go"
	cf.Config.Entrypoint = spec.Entrypoint
	cf.Config.User = fmt.Sprintf("%d:%d", spec.UID, spec.UID)
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=" + BinaryDir + ":/usr/bin:/bin", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":    spec.Name,
		"org.opencontainers.image.source":   spec.Source,
		"org.opencontainers.image.revision": spec.Revision,
		"org.opencontainers.image.version":  spec.Version,
	}
	for k, v := range spec.Labels {
		cf.Config.Labels[k] = v
	}
	cf.History = nil
	return mutate.ConfigFile(img, cf)
}

// baseLayer holds what every image needs besides its binary.
func baseLayer(caCerts []byte, uid int, user string) (v1.Layer, error) {
	if len(caCerts) == 0 {
		return nil, fmt.Errorf("no CA certificates to install")
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/home/%s:/sbin/nologin\n", user, uid, uid, user, user)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", user, uid)
	return layer([]file{
		{path: "etc/group", mode: 0o644, data: []byte(group)},
		{path: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{path: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: caCerts},
		{path: "home/" + user, mode: 0o700, dir: true, uid: uid},
		{path: "tmp", mode: 0o1777, dir: true},
	})
}

type file struct {
	path string
	mode int64
	data []byte
	dir  bool
	uid  int
}

// layer writes files (and their parent directories) as one tar layer,
// sorted by path, every header with the fixed time and root ownership
// unless the file says otherwise.
func layer(files []file) (v1.Layer, error) {
	entries := map[string]file{}
	for _, f := range files {
		entries[f.path] = f
		for d := filepath.Dir(f.path); d != "." && d != "/"; d = filepath.Dir(d) {
			if _, ok := entries[d]; !ok {
				entries[d] = file{path: d, mode: 0o755, dir: true}
			}
		}
	}
	sorted := make([]file, 0, len(entries))
	for _, f := range entries {
		sorted = append(sorted, f)
	}
	var buf bytes.Buffer
	if err := writeTar(&buf, sorted); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// writeTar writes files as a tar, sorted by path, every header with the
// fixed time and root ownership unless the file says otherwise.
func writeTar(w io.Writer, files []file) error {
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	tw := tar.NewWriter(w)
	for _, f := range files {
		h := &tar.Header{Name: f.path, Mode: f.mode, ModTime: Epoch, Uid: f.uid, Gid: f.uid, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, f.path+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !f.dir {
			if _, err := tw.Write(f.data); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

// WriteLayout writes the index as an OCI image layout in dir (created or
// replaced).
func WriteLayout(dir string, idx v1.ImageIndex) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	_, err := layout.Write(dir, idx)
	return err
}

// WriteTarball writes the image of one platform of idx as a tarball
// `docker load` reads, tagged ref.
func WriteTarball(path, ref, platform string, idx v1.ImageIndex) error {
	img, err := Platform(idx, platform)
	if err != nil {
		return err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	return tarball.WriteToFile(path, tag, img)
}

// Platform returns the image of idx for platform ("linux/amd64").
func Platform(idx v1.ImageIndex, platform string) (v1.Image, error) {
	want, err := v1.ParsePlatform(platform)
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.Equals(*want) {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("no image for %s in the index", platform)
}

// Kustomization is a kustomization over base (a path relative to where it
// is written) that pins each image localhost/airship/<name> to its digest.
func Kustomization(base string, digests map[string]v1.Hash) []byte {
	return KustomizationAt(base, "", digests)
}

// KustomizationAt is Kustomization with the images renamed to
// repository/<name> (unchanged when repository is empty), as pushed there.
func KustomizationAt(base, repository string, digests map[string]v1.Hash) []byte {
	names := make([]string, 0, len(digests))
	for n := range digests {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# Written by `make images`: the install of config/default with the images\n")
	b.WriteString("# just built, by digest. Push them to a registry and set newName there, e.g.\n")
	b.WriteString("#   kustomize edit set image localhost/airship/armada-operator=registry.example/airship/armada-operator\n")
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + base + "\nimages:\n")
	for _, n := range names {
		fmt.Fprintf(&b, "- name: localhost/airship/%s\n", n)
		if repository != "" {
			fmt.Fprintf(&b, "  newName: %s/%s\n", strings.TrimSuffix(repository, "/"), n)
		}
		fmt.Fprintf(&b, "  digest: %s\n", digests[n])
	}
	return []byte(b.String())
}

// Bounds of a push.
const (
	// DefaultPushTimeout bounds a whole push (every blob and manifest of
	// an index).
	DefaultPushTimeout = 10 * time.Minute
	// DefaultRequestTimeout bounds connecting, the TLS handshake and the
	// wait for each answer's header (once the request's body is sent).
	DefaultRequestTimeout = time.Minute
	// MaxResponseBytes caps a registry's answer (manifests, errors).
	MaxResponseBytes = 16 << 20
)

// PushOptions say how Push reaches the registry. The zero value is usable.
type PushOptions struct {
	// Insecure allows plain HTTP to the registry.
	Insecure bool
	// Timeout bounds the whole push; default DefaultPushTimeout.
	Timeout time.Duration
	// RequestTimeout bounds connecting and each answer's wait; default
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// Push writes the index to the registry reference ref (registry/repository:tag),
// with the credentials of the Docker config (~/.docker/config.json) when it
// has any for that registry, and returns the digest it is stored under.
// The push is bounded as opts say (answers capped at MaxResponseBytes) and
// goes through the environment's proxy (HTTPS_PROXY, NO_PROXY).
func Push(ctx context.Context, ref string, idx v1.ImageIndex, opts PushOptions) (v1.Hash, error) {
	var nameOpts []name.Option
	if opts.Insecure {
		nameOpts = append(nameOpts, name.Insecure)
	}
	tag, err := name.NewTag(ref, nameOpts...)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image reference %q: %w", ref, err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultPushTimeout
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	transport := httplimit.LimitResponses(httplimit.NewTransport(httplimit.ClientOptions{
		Timeout: opts.RequestTimeout,
		Proxy:   httplimit.ProxyFromEnvironment(),
	}), MaxResponseBytes)
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx), remote.WithTransport(transport), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return v1.Hash{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	return idx.Digest()
}

// RefName is the reference WriteArchive names an image by, which
// `ctr images import` stores it under: localhost/airship/<name>:latest.
func RefName(name string) string { return "localhost/airship/" + name + ":latest" }

// WriteArchive writes idx as an OCI archive at path: a tar of an OCI image
// layout (oci-layout, index.json, blobs/sha256/...) whose index.json lists
// the image index itself, once per reference in refs, each entry annotated
// with that reference as org.opencontainers.image.ref.name and
// io.containerd.image.name, the two annotations `ctr images import` names
// images by. Entries are sorted, owned by root and stamped with Epoch, so
// the same index gives the same archive.
func WriteArchive(path string, idx v1.ImageIndex, refs ...string) error {
	blobs, err := indexBlobs(idx)
	if err != nil {
		return fmt.Errorf("archive %s: %w", path, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	mt, err := idx.MediaType()
	if err != nil {
		return err
	}
	size, err := idx.Size()
	if err != nil {
		return err
	}
	top := v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex}
	for _, ref := range refs {
		if _, err := name.ParseReference(ref, name.StrictValidation); err != nil {
			return fmt.Errorf("archive %s: reference %q: %w", path, ref, err)
		}
		top.Manifests = append(top.Manifests, v1.Descriptor{MediaType: mt, Size: size, Digest: digest,
			Annotations: map[string]string{"org.opencontainers.image.ref.name": ref, "io.containerd.image.name": ref}})
	}
	index, err := json.Marshal(top)
	if err != nil {
		return err
	}
	files := []file{
		{path: "index.json", mode: 0o644, data: index},
		{path: "oci-layout", mode: 0o644, data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{path: "blobs", mode: 0o755, dir: true},
	}
	algs := map[string]bool{}
	for h, data := range blobs {
		if !algs[h.Algorithm] {
			algs[h.Algorithm] = true
			files = append(files, file{path: "blobs/" + h.Algorithm, mode: 0o755, dir: true})
		}
		files = append(files, file{path: "blobs/" + h.Algorithm + "/" + h.Hex, mode: 0o644, data: data})
	}
	var buf bytes.Buffer
	if err := writeTar(&buf, files); err != nil {
		return fmt.Errorf("archive %s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// indexBlobs reads every blob of idx, the index's own manifest included,
// by digest.
func indexBlobs(idx v1.ImageIndex) (map[v1.Hash][]byte, error) {
	blobs := map[v1.Hash][]byte{}
	raw, err := idx.RawManifest()
	if err != nil {
		return nil, err
	}
	d, err := idx.Digest()
	if err != nil {
		return nil, err
	}
	blobs[d] = raw
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, desc := range m.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return nil, fmt.Errorf("image %s: %w", desc.Digest, err)
		}
		if blobs[desc.Digest], err = img.RawManifest(); err != nil {
			return nil, err
		}
		cfgName, err := img.ConfigName()
		if err != nil {
			return nil, err
		}
		if blobs[cfgName], err = img.RawConfigFile(); err != nil {
			return nil, err
		}
		layers, err := img.Layers()
		if err != nil {
			return nil, err
		}
		for _, l := range layers {
			ld, err := l.Digest()
			if err != nil {
				return nil, err
			}
			rc, err := l.Compressed()
			if err != nil {
				return nil, err
			}
			data, err := io.ReadAll(rc)
			_ = rc.Close() // only read: closing cannot lose data
			if err != nil {
				return nil, fmt.Errorf("layer %s: %w", ld, err)
			}
			blobs[ld] = data
		}
	}
	return blobs, nil
}
