package chartsource

import (
	"bytes"
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

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// MaxArchiveBytes bounds a chart archive read over HTTP(S), so a misbehaving
// server cannot exhaust the operator's memory.
const MaxArchiveBytes = 64 << 20

// ErrNotFound marks a source that does not exist (a missing directory or
// file, or an HTTP 404). It needs a spec change, so callers stall on it.
var ErrNotFound = errors.New("chart source not found")

// ErrInvalid marks a source that exists but is not a usable chart. It also
// needs a spec change.
var ErrInvalid = errors.New("invalid chart source")

// Loader reads charts. The zero value uses http.DefaultClient.
type Loader struct {
	// HTTPClient fetches tar sources given as http(s) URLs.
	HTTPClient *http.Client
	// Root, when set, is where the chart filesystem is mounted: a location
	// on disk (types local and dir, and tar given as a path) is read below
	// Root, as if Root were "/". An operator run outside a pod maps the
	// /charts volume of the site to a directory this way. A location cannot
	// climb out of Root with "..".
	Root string
	// Mounts map locations below a directory to another directory, as a
	// pod's volumeMounts do; the longest matching mount wins over Root.
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

// path maps a location on disk to the directory a mount or l.Root holds
// it in. Once a mount or Root applies, ".." cannot climb out of it. Without
// Root, a relative location is read as given.
func (l Loader) path(location string) string {
	if l.Root == "" && !filepath.IsAbs(location) {
		return location
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
		return filepath.Join(m.Dir, filepath.FromSlash(path.Clean("/"+rest)))
	}
	if l.Root == "" {
		return location
	}
	return filepath.Join(l.Root, filepath.Clean(string(filepath.Separator)+location))
}

// Load reads the chart src describes. Errors wrap ErrNotFound or ErrInvalid
// when retrying cannot help; other errors (a network failure, an HTTP 5xx)
// are worth retrying.
func (l Loader) Load(ctx context.Context, src armadav1.ArmadaChartSource) (*chartv2.Chart, error) {
	sub := strings.Trim(path.Clean("/"+filepath.ToSlash(src.Subpath)), "/")
	switch src.Type {
	case armadav1.SourceTypeLocal, armadav1.SourceTypeDir:
		dir := filepath.Join(l.path(src.Location), filepath.FromSlash(sub))
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
		ch, err := loader.LoadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("source.location %q, subpath %q: loading chart: %v: %w", src.Location, src.Subpath, err, ErrInvalid)
		}
		return ch, nil
	case armadav1.SourceTypeTar:
		data, err := l.readArchive(ctx, src.Location)
		if err != nil {
			return nil, err
		}
		ch, err := loadArchive(data, sub)
		if err != nil {
			return nil, fmt.Errorf("source.location %q, subpath %q: %w", src.Location, src.Subpath, err)
		}
		return ch, nil
	default:
		return nil, fmt.Errorf("source.type %q is not supported (use local, dir or tar): %w", src.Type, ErrInvalid)
	}
}

func (l Loader) readArchive(ctx context.Context, location string) ([]byte, error) {
	u, err := url.Parse(location)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		data, err := os.ReadFile(l.path(location))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("source.location %q: %w", location, ErrNotFound)
			}
			return nil, fmt.Errorf("source.location %q: %w", location, err)
		}
		return data, nil
	}
	hc := l.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, location, nil)
	if err != nil {
		return nil, fmt.Errorf("source.location %q: %v: %w", redact(u), err, ErrInvalid)
	}
	resp, err := hc.Do(req)
	if err != nil {
		// The URL may carry credentials; never echo them.
		return nil, fmt.Errorf("source.location %q: fetching archive failed", redact(u))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("source.location %q: HTTP %d: %w", redact(u), resp.StatusCode, ErrNotFound)
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return nil, fmt.Errorf("source.location %q: HTTP %d: %w", redact(u), resp.StatusCode, ErrInvalid)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("source.location %q: HTTP %d", redact(u), resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxArchiveBytes+1))
	if err != nil {
		return nil, fmt.Errorf("source.location %q: reading archive: %w", redact(u), err)
	}
	if len(data) > MaxArchiveBytes {
		return nil, fmt.Errorf("source.location %q: archive larger than %d bytes: %w", redact(u), MaxArchiveBytes, ErrInvalid)
	}
	return data, nil
}

// redact drops user info and query from a URL before it is shown anywhere.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// loadArchive loads a chart from a gzipped tar. The archive's top directory
// is dropped (as Helm does); sub then selects a directory below it.
func loadArchive(data []byte, sub string) (*chartv2.Chart, error) {
	if sub == "" {
		ch, err := loader.LoadArchive(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("loading chart archive: %v: %w", err, ErrInvalid)
		}
		return ch, nil
	}
	files, err := archive.LoadArchiveFiles(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading chart archive: %v: %w", err, ErrInvalid)
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
		return nil, fmt.Errorf("loading chart from archive subpath: %v: %w", err, ErrInvalid)
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
