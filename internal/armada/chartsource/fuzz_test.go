package chartsource

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadArchive feeds arbitrary bytes and subpaths to loadArchive, as a
// chart server or a file on disk would: it must never panic or run away,
// a chart it returns has metadata, and every refusal is ErrInvalid or
// ErrNotFound (a spec change is needed, so the chart stalls rather than
// retrying).
func FuzzLoadArchive(f *testing.F) {
	small, err := filepath.Abs("testdata/site/charts/small")
	if err != nil {
		f.Fatal(err)
	}
	site, err := filepath.Abs("testdata/site")
	if err != nil {
		f.Fatal(err)
	}
	chart := tgz(f, small, "small")
	f.Add(chart, "")
	f.Add(tgz(f, site, "site-1.0"), "charts/small")
	f.Add(tgz(f, site, "site-1.0"), "charts/other")
	f.Add(chart[:len(chart)/2], "")
	f.Add(bomb(f, 4096, false), "")
	f.Add(bomb(f, 16, true), "")
	f.Add([]byte("\x1f\x8b\x08\x00"), "")
	f.Add([]byte{}, "..")
	f.Fuzz(func(t *testing.T, data []byte, sub string) {
		sub = strings.Trim(path.Clean("/"+filepath.ToSlash(sub)), "/")
		ch, err := loadArchive(data, sub)
		if err != nil {
			if ch != nil {
				t.Fatal("a chart with an error")
			}
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrNotFound) {
				t.Fatalf("error %v is neither ErrInvalid nor ErrNotFound", err)
			}
			return
		}
		if ch == nil || ch.Metadata == nil || ch.Name() == "" {
			t.Fatalf("accepted a chart without metadata: %+v", ch)
		}
	})
}
