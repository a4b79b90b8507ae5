package chartsource

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/httplimit/httplimittest"
)

// TestFetchBounds: a fetch ends with a clear error, naming source.location
// without its credentials, when the server never answers, stops sending
// half-way, or sends more than MaxArchiveBytes (with or without saying so
// up front).
func TestFetchBounds(t *testing.T) {
	small, _ := filepath.Abs("testdata/site/charts/small")
	good := tgz(t, small, "small")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good.tgz":
			_, _ = w.Write(good)
		case "/endless.tgz":
			// Chunked: no length up front.
			chunk := bytes.Repeat([]byte{'x'}, 1<<20)
			for i := 0; i <= MaxArchiveBytes>>20; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/declared.tgz":
			w.Header().Set("Content-Length", strconv.Itoa(MaxArchiveBytes+1))
			w.WriteHeader(http.StatusOK)
		case "/stalls.tgz":
			w.Header().Set("Content-Length", strconv.Itoa(len(good)))
			_, _ = w.Write(good[:10])
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	t.Cleanup(srv.Close)
	hanging := "http://" + httplimittest.Hang(t)
	withCreds := func(base, p string) string {
		return strings.Replace(base, "http://", "http://user:pa55word@", 1) + p + "?token=t0k3n"
	}

	tests := []struct {
		name     string
		location string
		wantErr  error // nil with want == "": success
		want     string
	}{
		{name: "good", location: srv.URL + "/good.tgz"},
		{name: "more than the cap, streamed", location: withCreds(srv.URL, "/endless.tgz"), wantErr: ErrInvalid, want: fmt.Sprintf("archive larger than %d bytes", MaxArchiveBytes)},
		{name: "more than the cap, declared", location: withCreds(srv.URL, "/declared.tgz"), wantErr: ErrInvalid, want: fmt.Sprintf("is larger than %d bytes", MaxArchiveBytes)},
		{name: "never answers", location: withCreds(hanging, "/c.tgz"), want: "fetching archive timed out after 300ms"},
		{name: "stops sending", location: withCreds(srv.URL, "/stalls.tgz"), want: "reading archive timed out after 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Only the servers that hang get the short deadline; the others
			// must not depend on how fast the machine is.
			l := Loader{FetchTimeout: time.Minute}
			if strings.Contains(tt.want, "timed out") {
				l.FetchTimeout = 300 * time.Millisecond
			}
			ch, err := l.Load(context.Background(), armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: tt.location})
			if tt.want == "" {
				if err != nil || ch.Name() != "small" {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "source.location") {
				t.Fatalf("Load: err %v, want one naming source.location saying %q", err, tt.want)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Load: err %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && (errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound)) {
				t.Fatalf("Load: err %v should be retryable", err)
			}
			for _, secret := range []string{"pa55word", "t0k3n"} {
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error %q shows %q", err, secret)
				}
			}
		})
	}
}

// TestFetcher: LoadFor never waits on the server. The first call of a
// location starts one fetch (shared by every waiter) and says it is
// fetching; the waiters are notified when it ends; a failure is reported
// to each waiter and a later call starts a new fetch. A host that never
// answers holds only its own fetch slots: another host's archive is
// fetched while it hangs.
func TestFetcher(t *testing.T) {
	small, _ := filepath.Abs("testdata/site/charts/small")
	good := tgz(t, small, "small")
	var hits atomic.Int32
	gate := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-gate
		// Only this location fails: a background refresh of the good one
		// may still be running when the failing one is asked for.
		if r.URL.Path == "/fails.tgz" {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(good)
	}))
	t.Cleanup(srv.Close)
	hanging := "http://" + httplimittest.Hang(t)

	now := time.Unix(1000, 0)
	var clock sync.Mutex
	notified := make(chan types.NamespacedName, 16)
	f := NewFetcher(t.Context(), FetchOptions{
		Timeout:    time.Hour, // the hanging host must hang for the whole test
		MaxFetches: 3,
		Notify:     func(w types.NamespacedName) { notified <- w },
		Now: func() time.Time {
			clock.Lock()
			defer clock.Unlock()
			return now
		},
	})
	l := Loader{Fetcher: f}
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	src := func(loc string) armadav1.ArmadaChartSource {
		return armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: loc}
	}
	load := func(who types.NamespacedName, loc string) error {
		_, err := l.LoadFor(context.Background(), src(loc), who)
		return err
	}

	// Four charts of a host that never answers: two fetch slots of three
	// are taken, and every call returns at once.
	for i := range 4 {
		if err := load(types.NamespacedName{Namespace: "ns", Name: fmt.Sprint("hang", i)}, fmt.Sprintf("%s/%d.tgz", hanging, i)); !errors.Is(err, ErrFetching) {
			t.Fatalf("hanging chart %d: err %v, want ErrFetching", i, err)
		}
	}
	// Two charts of the good host share one fetch.
	goodURL := srv.URL + "/c.tgz"
	for _, w := range []types.NamespacedName{a, b, a} {
		err := load(w, goodURL)
		if !errors.Is(err, ErrFetching) || !strings.Contains(err.Error(), `source.location "`+goodURL+`"`) {
			t.Fatalf("%s: err %v, want ErrFetching naming source.location", w, err)
		}
	}
	close(gate)
	got := map[types.NamespacedName]bool{<-notified: true, <-notified: true}
	if !got[a] || !got[b] {
		t.Fatalf("notified %v, want %s and %s", got, a, b)
	}
	for _, w := range []types.NamespacedName{a, b} {
		if err := load(w, goodURL); err != nil {
			t.Fatalf("%s after the fetch: %v", w, err)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d requests for one location, want 1", n)
	}

	// After the TTL the archive is served while it is fetched again; the
	// waiter hears of the refresh only if the archive changed (it did not).
	clock.Lock()
	now = now.Add(DefaultFetchTTL)
	clock.Unlock()
	if err := load(a, goodURL); err != nil {
		t.Fatalf("stale archive: %v", err)
	}

	// A failing server: each waiter gets the failure once, then a new
	// fetch starts.
	failURL := srv.URL + "/fails.tgz"
	if err := load(a, failURL); !errors.Is(err, ErrFetching) {
		t.Fatalf("err %v, want ErrFetching", err)
	}
	if w := <-notified; w != a {
		t.Fatalf("notified %s, want %s", w, a)
	}
	err := load(a, failURL)
	if err == nil || errors.Is(err, ErrFetching) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Fatalf("after a failed fetch: err %v, want the failure", err)
	}
	clock.Lock()
	now = now.Add(2 * fetchErrorTTL)
	clock.Unlock()
	if err := load(a, failURL); !errors.Is(err, ErrFetching) {
		t.Fatalf("retry after a reported failure: err %v, want ErrFetching", err)
	}
	if w := <-notified; w != a {
		t.Fatalf("notified %s, want %s", w, a)
	}
}

// bomb is a gzipped tar of one entry of n zero bytes, or of n empty files.
func bomb(t testing.TB, n int, files bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	if files {
		for i := range n {
			if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("c/f%d", i), Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		if err := tw.WriteHeader(&tar.Header{Name: "c/Chart.yaml", Mode: 0o644, Size: int64(n), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(tw, io.LimitReader(zeros{}, int64(n))); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestLoadArchiveBounds: archives that unpack to more than MaxUnpackedBytes
// or hold more than MaxArchiveFiles entries are refused before Helm's
// loader unpacks them.
func TestLoadArchiveBounds(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"gzip bomb", bomb(t, MaxUnpackedBytes+1, false), fmt.Sprintf("unpacks to more than %d bytes", MaxUnpackedBytes)},
		{"too many files", bomb(t, MaxArchiveFiles+1, true), fmt.Sprintf("more than %d entries", MaxArchiveFiles)},
		{"not gzip", []byte("plain text"), "not a gzipped archive"},
		{"empty archive", bomb(t, 0, true), "reading archive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadArchive(tt.data, "")
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("loadArchive: err %v, want ErrInvalid saying %q", err, tt.want)
			}
		})
	}
}
