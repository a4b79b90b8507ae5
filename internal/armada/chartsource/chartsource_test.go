package chartsource

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// tgz packs dir into a gzipped tar whose entries sit under top/, the layout
// of `helm package` and of Armada's tarball sources.
func tgz(t testing.TB, dir, top string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: top + "/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestLoad(t *testing.T) {
	site, err := filepath.Abs("testdata/site")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	chartTgz := filepath.Join(tmp, "small-0.1.0.tgz")
	if err := os.WriteFile(chartTgz, tgz(t, filepath.Join(site, "charts", "small"), "small"), 0o600); err != nil {
		t.Fatal(err)
	}
	siteTgz := tgz(t, site, "site-1.0")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/site.tgz":
			_, _ = w.Write(siteTgz)
		case "/broken.tgz":
			_, _ = w.Write([]byte("not gzip"))
		case "/flaky.tgz":
			http.Error(w, "try later", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	tests := []struct {
		name    string
		src     armadav1.ArmadaChartSource
		wantErr error // nil: success; errRetry: an error wrapping neither sentinel
		root    string
		mounts  []Mount
	}{
		{"dir", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: filepath.Join(site, "charts", "small")}, nil, "", nil},
		{"local with subpath", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeLocal, Location: site, Subpath: "charts/small"}, nil, "", nil},
		{"subpath cannot escape", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeLocal, Location: filepath.Join(site, "charts", "small"), Subpath: "../../../site/charts/small"}, ErrNotFound, "", nil},
		{"tar file", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: chartTgz}, nil, "", nil},
		{"tar over http with subpath", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: srv.URL + "/site.tgz", Subpath: "charts/small"}, nil, "", nil},
		{"missing dir", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: filepath.Join(site, "nope")}, ErrNotFound, "", nil},
		{"dir that is no chart", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: filepath.Join(site, "notachart")}, ErrInvalid, "", nil},
		{"missing tar file", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: filepath.Join(tmp, "nope.tgz")}, ErrNotFound, "", nil},
		{"http 404", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: srv.URL + "/nope.tgz"}, ErrNotFound, "", nil},
		{"http not an archive", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: srv.URL + "/broken.tgz"}, ErrInvalid, "", nil},
		{"http subpath not in archive", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: srv.URL + "/site.tgz", Subpath: "charts/other"}, ErrNotFound, "", nil},
		{"http 503 is retryable", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: srv.URL + "/flaky.tgz"}, errRetry, "", nil},
		{"git is not supported", armadav1.ArmadaChartSource{Type: "git", Location: "https://example.invalid/repo.git"}, ErrInvalid, "", nil},
		{"dir below root", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: "/charts/small"}, nil, site, nil},
		{"local below root with subpath", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeLocal, Location: "/", Subpath: "charts/small"}, nil, site, nil},
		{"location cannot climb out of root", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: "/../site/charts/small"}, ErrNotFound, site, nil},
		{"tar file below root", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: "/small-0.1.0.tgz"}, nil, tmp, nil},
		{"absolute path outside root is not read", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: chartTgz}, ErrNotFound, site, nil},
		// Mounts, as a pod's volumeMounts: the longest match wins over Root.
		{"dir in a mount", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: "/opt/core/small"}, nil, tmp,
			[]Mount{{Location: "/opt", Dir: tmp}, {Location: "/opt/core", Dir: filepath.Join(site, "charts")}}},
		{"mount location itself with subpath", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeLocal, Location: "/opt/core", Subpath: "small"}, nil, "",
			[]Mount{{Location: "/opt/core", Dir: filepath.Join(site, "charts")}}},
		{"a mount is matched by whole path elements", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: "/opt/coreX/small"}, ErrInvalid, "",
			[]Mount{{Location: "/opt/core", Dir: filepath.Join(site, "charts")}}},
		{"a location is cleaned before mounts are matched", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: "/opt/core/../../charts/small"}, nil, site,
			[]Mount{{Location: "/opt/core", Dir: tmp}}},
		{"subpath cannot climb out of a mount", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeLocal, Location: "/opt/core", Subpath: "../charts/small"}, ErrNotFound, site,
			[]Mount{{Location: "/opt/core", Dir: tmp}}},
		{"root still serves what no mount matches", armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: "/charts/small"}, nil, site,
			[]Mount{{Location: "/opt/core", Dir: tmp}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := Loader{Root: tt.root, Mounts: tt.mounts}.Load(context.Background(), tt.src)
			switch {
			case tt.wantErr == nil:
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if ch.Name() != "small" || len(ch.Templates) != 1 || ch.Values["greeting"] != "hello" {
					t.Fatalf("loaded chart %q with %d templates, values %v", ch.Name(), len(ch.Templates), ch.Values)
				}
			case errors.Is(tt.wantErr, errRetry):
				if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid) {
					t.Fatalf("Load: err %v, want a retryable error", err)
				}
			default:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Load: err %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "source.") {
					t.Fatalf("error %q does not name the source field", err)
				}
			}
		})
	}
}

var errRetry = errors.New("retryable")

// copyDir copies the regular files of src below dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestLoadConfined: with --chart-root or --chart-mount, a location on disk
// stays below them however symlinks point, and a chart directory whose
// files lead out (or loop) is refused naming the link; links that stay
// inside work.
func TestLoadConfined(t *testing.T) {
	small, err := filepath.Abs("testdata/site/charts/small")
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "token"), []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	copyDir(t, small, filepath.Join(outside, "small"))
	if err := os.WriteFile(filepath.Join(outside, "small.tgz"), tgz(t, small, "small"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	mk := func(name string, files func(dir string)) {
		dir := filepath.Join(root, "charts", name)
		copyDir(t, small, dir)
		if files != nil {
			files(dir)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	mk("plain", nil)
	mk("leaky-file", func(dir string) { link(filepath.Join(outside, "token"), filepath.Join(dir, "templates", "token.txt")) })
	mk("leaky-relative", func(dir string) { link("../../../"+filepath.Base(outside)+"/token", filepath.Join(dir, "token.txt")) })
	mk("leaky-dir", func(dir string) { link(outside, filepath.Join(dir, "files")) })
	mk("loop", func(dir string) { link("..", filepath.Join(dir, "templates", "up")) })
	mk("inside", func(dir string) { link("../plain/values.yaml", filepath.Join(dir, "other-values.yaml")) })
	link(filepath.Join(outside, "small"), filepath.Join(root, "charts", "escape"))
	link(filepath.Join(outside, "small.tgz"), filepath.Join(root, "charts", "escape.tgz"))
	link(filepath.Join(root, "charts", "plain"), filepath.Join(root, "charts", "alias"))
	if err := syscall.Mkfifo(filepath.Join(root, "charts", "pipe.tgz"), 0o600); err != nil {
		t.Fatal(err)
	}

	dir := func(loc string) armadav1.ArmadaChartSource {
		return armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: loc}
	}
	tests := []struct {
		name    string
		src     armadav1.ArmadaChartSource
		mounts  []Mount
		wantErr error
		want    string // in the error
	}{
		{name: "plain chart", src: dir("/charts/plain")},
		{name: "symlink that stays inside", src: dir("/charts/inside")},
		{name: "location that is a symlink inside", src: dir("/charts/alias")},
		{name: "location that is a symlink out", src: dir("/charts/escape"), wantErr: ErrInvalid, want: "outside the operator's chart root"},
		{name: "chart file linking out", src: dir("/charts/leaky-file"), wantErr: ErrInvalid, want: "symlink templates/token.txt leads outside"},
		{name: "relative link climbing out", src: dir("/charts/leaky-relative"), wantErr: ErrInvalid, want: "symlink token.txt leads outside"},
		{name: "chart directory linking out", src: dir("/charts/leaky-dir"), wantErr: ErrInvalid, want: "symlink files leads outside"},
		{name: "symlink loop", src: dir("/charts/loop"), wantErr: ErrInvalid, want: "symlink templates/up leads back"},
		{name: "subpath through a link out", src: armadav1.ArmadaChartSource{Type: armadav1.SourceTypeLocal, Location: "/charts", Subpath: "escape"}, wantErr: ErrInvalid, want: "outside"},
		{name: "tar file that is a symlink out", src: armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: "/charts/escape.tgz"}, wantErr: ErrInvalid, want: "outside"},
		{name: "tar location that is a named pipe", src: armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: "/charts/pipe.tgz"}, wantErr: ErrInvalid, want: "not a regular file"},
		{name: "tar location that is a directory", src: armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: "/charts/plain"}, wantErr: ErrInvalid, want: "not a regular file"},
		{name: "mount: link out of the mount", src: dir("/opt/escape"), mounts: []Mount{{Location: "/opt", Dir: filepath.Join(root, "charts")}}, wantErr: ErrInvalid, want: "outside"},
		{name: "mount: link into root but out of the mount", src: dir("/opt/up/plain"), mounts: []Mount{{Location: "/opt", Dir: filepath.Join(root, "sub")}}, wantErr: ErrInvalid, want: "outside"},
	}
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	link(filepath.Join(root, "charts"), filepath.Join(root, "sub", "up"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := Loader{Root: root, Mounts: tt.mounts}.Load(context.Background(), tt.src)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if ch.Name() != "small" {
					t.Fatalf("loaded %q", ch.Name())
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "source.location") {
				t.Fatalf("Load: err %v, want %v naming source.location and %q", err, tt.wantErr, tt.want)
			}
			if strings.Contains(err.Error(), outside) {
				t.Fatalf("error %q shows where the link points", err)
			}
		})
	}
	// Without --chart-root and mounts, paths are read as given (an operator
	// outside a pod, tests), but loops and file counts are still checked.
	if _, err := (Loader{}).Load(context.Background(), dir(filepath.Join(root, "charts", "leaky-dir"))); err != nil {
		t.Fatalf("unconfined Load: %v", err)
	}
	if _, err := (Loader{}).Load(context.Background(), dir(filepath.Join(root, "charts", "loop"))); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unconfined Load of a loop: err %v, want ErrInvalid", err)
	}
}

func TestLoadRedactsURLCredentials(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	loc := strings.Replace(srv.URL, "http://", "http://user:s3cr3tpw@", 1) + "/c.tgz?token=t0k3nvalue"
	_, err := Loader{}.Load(context.Background(), armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: loc})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, secret := range []string{"s3cr3tpw", "t0k3nvalue"} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("error %q leaks %q", err, secret)
		}
	}
}

func TestDigest(t *testing.T) {
	site, _ := filepath.Abs("testdata/site/charts/small")
	load := func() *chartv2.Chart {
		ch, err := Loader{}.Load(context.Background(), armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: site})
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	ch1 := load()
	ch2 := load()
	digest := func(ch *chartv2.Chart, v map[string]any) string {
		d, err := Digest(ch, v)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := digest(ch1, map[string]any{"a": 1.0, "b": map[string]any{"x": "y", "z": true}})
	b := digest(ch2, map[string]any{"b": map[string]any{"z": true, "x": "y"}, "a": 1.0})
	if a != b {
		t.Fatalf("same chart and values, different digests: %s %s", a, b)
	}
	if len(a) > 63 {
		t.Fatalf("digest %q does not fit a label value", a)
	}
	if c := digest(ch1, map[string]any{"a": 2.0}); c == a {
		t.Fatal("values change did not change the digest")
	}
	ch3 := load()
	ch3.Raw[0].Data = append([]byte("# edited\n"), ch3.Raw[0].Data...)
	if c := digest(ch3, map[string]any{"a": 1.0, "b": map[string]any{"x": "y", "z": true}}); c == a {
		t.Fatal("chart file change did not change the digest")
	}
}

func TestParseMount(t *testing.T) {
	tests := []struct {
		in      string
		want    Mount
		wantErr string
	}{
		{in: "/opt/charts=charts/promenade", want: Mount{Location: "/opt/charts", Dir: "charts/promenade"}},
		{in: "/opt/charts/=/srv/x", want: Mount{Location: "/opt/charts", Dir: "/srv/x"}},
		{in: "opt/charts=/srv/x", wantErr: "not an absolute path"},
		{in: "/opt/charts", wantErr: "want LOCATION=DIR"},
		{in: "/opt/charts=", wantErr: "want LOCATION=DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseMount(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseMount: err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseMount = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
