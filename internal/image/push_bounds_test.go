package image

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/httplimit"
)

// TestPushBounds: a registry that never answers costs a push its deadline,
// and one that answers with a body over the cap fails it naming the limit;
// both on loopback, neither holds `make images PUSH=...` forever.
func TestPushBounds(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	idx, err := Build(Spec{Name: "widget-operator", Binaries: map[string]string{"linux/amd64": bin}, CACertificates: []byte(testCA)})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	isTimeout := func(err error) bool {
		var ne net.Error
		return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
	}
	isTooLarge := func(err error) bool {
		var tl *httplimit.TooLargeError
		return errors.As(err, &tl) && tl.Limit == MaxResponseBytes && strings.Contains(err.Error(), fmt.Sprintf("larger than the limit of %d bytes", MaxResponseBytes))
	}
	tests := []struct {
		name    string
		opts    PushOptions
		handler func(release <-chan struct{}) http.HandlerFunc
		want    func(error) bool
	}{
		{"registry never answers", PushOptions{Insecure: true, Timeout: 2 * time.Second, RequestTimeout: 200 * time.Millisecond},
			func(release <-chan struct{}) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-release:
					case <-r.Context().Done():
					}
				}
			}, isTimeout},
		{"whole push deadline", PushOptions{Insecure: true, Timeout: 300 * time.Millisecond},
			func(release <-chan struct{}) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-release:
					case <-r.Context().Done():
					}
				}
			}, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		{"registry answers a huge body", PushOptions{Insecure: true},
			func(<-chan struct{}) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Length", fmt.Sprint(400<<20))
					w.WriteHeader(http.StatusOK)
				}
			}, isTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewServer(tt.handler(release))
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(release) })
			ref := strings.TrimPrefix(srv.URL, "http://") + "/airship/widget-operator:latest"
			_, err := Push(context.Background(), ref, idx, tt.opts)
			if err == nil || !tt.want(err) || !strings.Contains(err.Error(), "pushing "+ref) {
				t.Fatalf("Push: %v", err)
			}
		})
	}
}
