package chartsource

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/redact"
)

// MaxArchiveBytes bounds a chart archive as read (over HTTP(S) or from
// disk), so a misbehaving server cannot exhaust the operator's memory.
const MaxArchiveBytes = 64 << 20

// MaxUnpackedBytes bounds the uncompressed tar stream of an archive, headers
// and skipped entries included, so a gzip bomb fails before it is unpacked.
// Helm's loader separately bounds the files it keeps (100 MiB in all).
const MaxUnpackedBytes = 128 << 20

// MaxArchiveFiles bounds the entries of an archive and the files (symlinks
// followed) of a chart directory.
const MaxArchiveFiles = 10000

// ErrNotFound marks a source that does not exist (a missing directory or
// file, or an HTTP 404). It needs a spec change, so callers stall on it.
var ErrNotFound = errors.New("chart source not found")

// ErrInvalid marks a source that exists but is not a usable chart, or that
// lies outside what the operator may read. It also needs a spec change.
var ErrInvalid = errors.New("invalid chart source")

// Loader reads charts. The zero value reads any path the process can read
// and fetches HTTP(S) archives synchronously with NewHTTPClient's bounds.
type Loader struct {
	// HTTPClient fetches tar sources given as http(s) URLs when Fetcher is
	// nil; nil means NewHTTPClient(FetchTimeout).
	HTTPClient *http.Client
	// FetchTimeout bounds one synchronous fetch; 0 means DefaultFetchTimeout.
	FetchTimeout time.Duration
	// Fetcher, when set, fetches http(s) archives in the background for
	// LoadFor, which then never waits on a remote server.
	Fetcher *Fetcher
	// Root, when set, is where the chart filesystem is mounted: a location
	// on disk (types local and dir, and tar given as a path) is read below
	// Root, as if Root were "/". An operator run outside a pod maps the
	// /charts volume of the site to a directory this way. A location cannot
	// climb out of Root, with ".." or with symlinks.
	Root string
	// Mounts map locations below a directory to another directory, as a
	// pod's volumeMounts do; the longest matching mount wins over Root.
	// With Mounts and no Root, a location no mount holds is refused.
	Mounts []Mount
}

// Mount reads the locations at and below Location from Dir.
type Mount struct {
	// Location is an absolute, clean path as chart sources name it.
	Location string
	// Dir is the directory on disk the location is read from.
	Dir string
}

// ParseMount reads LOCATION=DIR, as the operator's --chart-mount flag takes it.
func ParseMount(s string) (Mount, error) {
	loc, dir, ok := strings.Cut(s, "=")
	if !ok || loc == "" || dir == "" {
		return Mount{}, fmt.Errorf("chart mount %q: want LOCATION=DIR", s)
	}
	if !path.IsAbs(loc) {
		return Mount{}, fmt.Errorf("chart mount %q: location %q is not an absolute path", s, loc)
	}
	return Mount{Location: path.Clean(loc), Dir: dir}, nil
}

// path maps a location on disk to the file a mount or l.Root holds it in,
// and returns that mount's directory or Root as base: what the file, once
// symlinks are resolved, must stay below. Once a mount or Root applies, ".."
// cannot climb out of it. Without Root or Mounts, a location is read as
// given and base is empty (nothing confines it).
func (l Loader) path(location string) (file, base string, err error) {
	if l.Root == "" && len(l.Mounts) == 0 {
		return location, "", nil
	}
	clean := path.Clean("/" + filepath.ToSlash(location))
	best := -1
	for i, m := range l.Mounts {
		if (clean == m.Location || strings.HasPrefix(clean, strings.TrimSuffix(m.Location, "/")+"/")) &&
			(best < 0 || len(m.Location) > len(l.Mounts[best].Location)) {
			best = i
		}
	}
	if best >= 0 {
		m := l.Mounts[best]
		rest := strings.TrimPrefix(clean, m.Location)
		return filepath.Join(m.Dir, filepath.FromSlash(path.Clean("/"+rest))), m.Dir, nil
	}
	if l.Root == "" {
		return "", "", fmt.Errorf("source.location %q is not below any chart mount of the operator: %w", location, ErrInvalid)
	}
	return filepath.Join(l.Root, filepath.FromSlash(clean)), l.Root, nil
}

// Load reads the chart src describes, fetching an http(s) archive before it
// returns. Errors wrap ErrNotFound or ErrInvalid when retrying cannot help;
// other errors (a network failure, a timeout, an HTTP 5xx) are worth
// retrying.
func (l Loader) Load(ctx context.Context, src armadav1.ArmadaChartSource) (*chartv2.Chart, error) {
	return l.load(ctx, src, nil)
}

// LoadFor is Load for the object waiter without waiting on a remote server:
// with a Fetcher, an http(s) archive not fetched yet returns an error
// wrapping ErrFetching, and the Fetcher notifies waiter when the fetch is
// done. Without a Fetcher it is Load.
func (l Loader) LoadFor(ctx context.Context, src armadav1.ArmadaChartSource, waiter types.NamespacedName) (*chartv2.Chart, error) {
	return l.load(ctx, src, &waiter)
}

func (l Loader) load(ctx context.Context, src armadav1.ArmadaChartSource, waiter *types.NamespacedName) (*chartv2.Chart, error) {
	sub := strings.Trim(path.Clean("/"+filepath.ToSlash(src.Subpath)), "/")
	switch src.Type {
	case armadav1.SourceTypeLocal, armadav1.SourceTypeDir:
		loc, base, err := l.path(src.Location)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(loc, filepath.FromSlash(sub))
		fi, err := os.Stat(dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("source.location %q, subpath %q: %w", src.Location, src.Subpath, ErrNotFound)
			}
			return nil, fmt.Errorf("source.location %q: %w", src.Location, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("source.location %q, subpath %q: not a directory (use type tar for archives): %w", src.Location, src.Subpath, ErrInvalid)
		}
		if err := confineDir(dir, base); err != nil {
			return nil, fmt.Errorf("source.location %q, subpath %q: %w", src.Location, src.Subpath, err)
		}
		ch, err := loader.LoadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("source.location %q, subpath %q: loading chart: %w: %w", src.Location, src.Subpath, err, ErrInvalid)
		}
		return ch, nil
	case armadav1.SourceTypeTar:
		data, err := l.readArchive(ctx, src.Location, waiter)
		if err != nil {
			return nil, err
		}
		ch, err := loadArchive(data, sub)
		if err != nil {
			return nil, fmt.Errorf("source.location %q, subpath %q: %w", redact.URL(src.Location), src.Subpath, err)
		}
		return ch, nil
	default:
		return nil, fmt.Errorf("source.type %q is not supported (use local, dir or tar): %w", src.Type, ErrInvalid)
	}
}

// readArchive reads the archive at location: a URL through the Fetcher
// (for a waiter) or directly, else a file on disk.
func (l Loader) readArchive(ctx context.Context, location string, waiter *types.NamespacedName) ([]byte, error) {
	u, err := url.Parse(location)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return l.readArchiveFile(location)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("source.location %q: URL without a host: %w", redact.URL(u.String()), ErrInvalid)
	}
	if l.Fetcher != nil && waiter != nil {
		return l.Fetcher.get(u, *waiter)
	}
	hc := l.HTTPClient
	if hc == nil {
		hc = NewHTTPClient(l.FetchTimeout)
	}
	return fetchHTTP(ctx, hc, l.FetchTimeout, u)
}

// readArchiveFile reads an archive on disk: a regular file, confined like a
// directory, at most MaxArchiveBytes.
func (l Loader) readArchiveFile(location string) ([]byte, error) {
	file, base, err := l.path(location)
	if err != nil {
		return nil, err
	}
	if err := confine(file, base); err != nil {
		return nil, fmt.Errorf("source.location %q: %w", redact.URL(location), redact.Error(err))
	}
	// Stat before opening: opening a named pipe would block.
	fi, err := os.Stat(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("source.location %q: %w", redact.URL(location), ErrNotFound)
		}
		return nil, fmt.Errorf("source.location %q: %w", redact.URL(location), redact.Error(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("source.location %q: not a regular file: %w", redact.URL(location), ErrInvalid)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("source.location %q: %w", redact.URL(location), redact.Error(err))
	}
	defer func() { _ = f.Close() }() // only read: closing cannot lose data
	data, err := io.ReadAll(io.LimitReader(f, MaxArchiveBytes+1))
	if err != nil {
		return nil, fmt.Errorf("source.location %q: %w", redact.URL(location), redact.Error(err))
	}
	if len(data) > MaxArchiveBytes {
		return nil, fmt.Errorf("source.location %q: archive larger than %d bytes: %w", redact.URL(location), MaxArchiveBytes, ErrInvalid)
	}
	return data, nil
}

// confine checks that file, with every symlink resolved, lies at or below
// base; an empty base confines nothing. A missing file is left to the
// caller's own error.
func confine(file, base string) error {
	if base == "" {
		return nil
	}
	rb, err := realPath(base)
	if err != nil {
		return fmt.Errorf("chart root %q: %w", base, ErrNotFound)
	}
	rf, err := realPath(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("resolving symlinks: %w: %w", err, ErrInvalid)
	}
	if !fileutil.Within(rf, rb) {
		return fmt.Errorf("a symlink leads outside the operator's chart root: %w", ErrInvalid)
	}
	return nil
}

// confineDir checks a chart directory as Helm will read it, following
// symlinks: each must resolve below base (when base is set), none may lead
// back into a directory it is in, and there are at most MaxArchiveFiles
// entries.
func confineDir(dir, base string) error {
	if err := confine(dir, base); err != nil {
		return err
	}
	rb := ""
	if base != "" {
		rb, _ = realPath(base)
	}
	top, err := realPath(dir)
	if err != nil {
		return fmt.Errorf("resolving symlinks: %w: %w", err, ErrInvalid)
	}
	budget := MaxArchiveFiles
	var walk func(real, shown string, up []string) error
	walk = func(real, shown string, up []string) error {
		entries, err := os.ReadDir(real)
		if err != nil {
			return fmt.Errorf("reading %s: %w: %w", shown, err, ErrInvalid)
		}
		for _, de := range entries {
			if budget--; budget < 0 {
				return fmt.Errorf("more than %d files: %w", MaxArchiveFiles, ErrInvalid)
			}
			p, name := filepath.Join(real, de.Name()), path.Join(shown, de.Name())
			switch {
			case de.Type()&os.ModeSymlink != 0:
				t, err := filepath.EvalSymlinks(p)
				if err != nil {
					return fmt.Errorf("symlink %s: cannot be resolved: %w", name, ErrInvalid)
				}
				if rb != "" && !fileutil.Within(t, rb) {
					return fmt.Errorf("symlink %s leads outside the operator's chart root: %w", name, ErrInvalid)
				}
				fi, err := os.Stat(t)
				if err != nil {
					return fmt.Errorf("symlink %s: %w: %w", name, err, ErrInvalid)
				}
				if !fi.IsDir() {
					continue
				}
				for _, a := range up {
					if fileutil.Within(a, t) {
						return fmt.Errorf("symlink %s leads back into a directory it is in (a loop): %w", name, ErrInvalid)
					}
				}
				if err := walk(t, name, append(up, t)); err != nil {
					return err
				}
			case de.IsDir():
				if err := walk(p, name, append(up, p)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(top, ".", []string{top})
}

// realPath is p made absolute with every symlink resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// checkArchive streams through a gzipped tar without keeping it, refusing
// one whose uncompressed stream exceeds MaxUnpackedBytes or that has more
// than MaxArchiveFiles entries, before Helm's loader unpacks it.
func checkArchive(data []byte) error {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a gzipped archive: %w: %w", err, ErrInvalid)
	}
	defer func() { _ = gz.Close() }() // only read: closing cannot lose data
	lr := &io.LimitedReader{R: gz, N: MaxUnpackedBytes + 1}
	tr := tar.NewReader(lr)
	for n := 0; ; n++ {
		_, err := tr.Next()
		if err == nil {
			if n >= MaxArchiveFiles {
				return fmt.Errorf("archive has more than %d entries: %w", MaxArchiveFiles, ErrInvalid)
			}
			_, err = io.Copy(io.Discard, tr)
		}
		if lr.N <= 0 {
			return fmt.Errorf("archive unpacks to more than %d bytes: %w", MaxUnpackedBytes, ErrInvalid)
		}
		if errors.Is(err, io.EOF) && n > 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading archive: %w: %w", err, ErrInvalid)
		}
	}
}

// loadArchive loads a chart from a gzipped tar. The archive's top directory
// is dropped (as Helm does); sub then selects a directory below it.
func loadArchive(data []byte, sub string) (*chartv2.Chart, error) {
	if err := checkArchive(data); err != nil {
		return nil, err
	}
	if sub == "" {
		ch, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("loading chart archive: %w: %w", err, ErrInvalid)
		}
		return ch, nil
	}
	files, err := archive.LoadArchiveFiles(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading chart archive: %w: %w", err, ErrInvalid)
	}
	prefix := sub + "/"
	var picked []*archive.BufferedFile
	for _, f := range files {
		if strings.HasPrefix(f.Name, prefix) {
			picked = append(picked, &archive.BufferedFile{Name: strings.TrimPrefix(f.Name, prefix), ModTime: f.ModTime, Data: f.Data})
		}
	}
	if len(picked) == 0 {
		return nil, fmt.Errorf("subpath not in archive: %w", ErrNotFound)
	}
	ch, err := loader.LoadFiles(picked)
	if err != nil {
		return nil, fmt.Errorf("loading chart from archive subpath: %w: %w", err, ErrInvalid)
	}
	return ch, nil
}

// Digest is a stable digest of a chart's files and the values it is
// installed with: equal digests mean an upgrade would change nothing. It is
// shortened to fit a Kubernetes label value (it is stored on the release).
func Digest(ch *chartv2.Chart, values map[string]any) (string, error) {
	h := sha256.New()
	var walk func(c *chartv2.Chart)
	walk = func(c *chartv2.Chart) {
		files := append([]*common.File(nil), c.Raw...)
		sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
		name := ""
		if c.Metadata != nil {
			name = c.Metadata.Name
		}
		fmt.Fprintf(h, "chart %q %d\n", name, len(files))
		for _, f := range files {
			fmt.Fprintf(h, "%q %d\n", f.Name, len(f.Data))
			h.Write(f.Data)
		}
		deps := c.Dependencies()
		sort.Slice(deps, func(i, j int) bool { return deps[i].Name() < deps[j].Name() })
		for _, d := range deps {
			walk(d)
		}
	}
	walk(ch)
	// encoding/json sorts map keys, so equal values give equal bytes.
	vb, err := json.Marshal(values)
	if err != nil {
		return "", fmt.Errorf("encoding values: %w", err)
	}
	fmt.Fprintf(h, "values %d\n", len(vb))
	h.Write(vb)
	return hex.EncodeToString(h.Sum(nil))[:40], nil
}
