package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRemoteDesignBounds: a remote design that never comes, or is larger
// than --max-design-bytes (announced or streamed), fails the request with a
// 400 naming design_ref and the bound, and an error never quotes the
// URL's password or query values. Each server is on loopback.
func TestRemoteDesignBounds(t *testing.T) {
	const limit = 64 << 10
	release := make(chan struct{})
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang.yaml":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/announced.yaml":
			w.Header().Set("Content-Length", fmt.Sprint(400<<20))
			_, _ = w.Write([]byte("a: b\n"))
		case "/stream.yaml":
			line := []byte("# " + strings.Repeat("x", 1000) + "\n")
			for range 400 << 20 / len(line) {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(web.Close)
	t.Cleanup(func() { close(release) })
	withCreds := strings.Replace(web.URL, "http://", "http://user:pa55word@", 1)
	tests := []struct {
		name string
		opts Options
		ref  string
		want string
	}{
		{"never answers", Options{RemoteTimeout: 300 * time.Millisecond}, web.URL + "/hang.yaml", "timed out (--remote-design-timeout)"},
		{"announces more than the limit", Options{MaxDesignBytes: limit}, web.URL + "/announced.yaml", fmt.Sprintf("larger than the limit of %d bytes", limit)},
		{"streams past the limit", Options{MaxDesignBytes: limit}, web.URL + "/stream.yaml", fmt.Sprintf("larger than the limit of %d bytes", limit)},
		{"streams past the default limit", Options{}, web.URL + "/stream.yaml", fmt.Sprintf("larger than the limit of %d bytes", DefaultMaxDesignBytes)},
		{"credentials and query never quoted", Options{MaxDesignBytes: limit}, withCreds + "/stream.yaml?token=t0ken", "user:REDACTED@"},
		{"credentials on a 404", Options{}, withCreds + "/missing.yaml?token=t0ken", "404"},
		{"credentials on a timeout", Options{RemoteTimeout: 300 * time.Millisecond}, withCreds + "/hang.yaml?token=t0ken", "timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.DesignRoot, tt.opts.AllowRemote = t.TempDir(), true
			h := newServer(t, tt.opts)
			rec := get(t, h, joinURL(map[string]string{"hostname": "n7", "ip": "10.0.0.7", "design_ref": tt.ref}))
			st := decodeStatus(t, rec.Body.Bytes())
			if rec.Code != http.StatusBadRequest || st.Parameter != "design_ref" || !strings.Contains(st.Message, tt.want) {
				t.Fatalf("%d %+v, want 400 on design_ref saying %q", rec.Code, st, tt.want)
			}
			for _, secret := range []string{"pa55word", "t0ken"} {
				if strings.Contains(rec.Body.String(), secret) {
					t.Fatalf("the answer quotes %q: %s", secret, rec.Body)
				}
			}
		})
	}
}
