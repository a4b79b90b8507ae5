package emulator

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

const (
	testUser     = "admin"
	testPassword = "s3cret-Passw0rd-for-tests"
)

// syncBuffer is a log writer safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start runs a server for hosts until the test ends.
func start(t *testing.T, cfg Config, opts Options) (*Server, string) {
	t.Helper()
	if cfg.Username == "" {
		cfg.Username, cfg.Password = testUser, testPassword
	}
	s, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		s.Close()
	})
	base, err := s.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return s, base
}

// connect logs in with gofish, with a session or basic auth.
func connect(t *testing.T, base, user, password string, basic bool) *gofish.APIClient {
	t.Helper()
	c, err := gofish.ConnectContext(context.Background(), gofish.ClientConfig{Endpoint: base, Username: user, Password: password, BasicAuth: basic})
	if err != nil {
		t.Fatalf("connecting (basic auth %v): %v", basic, err)
	}
	t.Cleanup(c.Logout)
	return c
}

// statusOf is the HTTP status of a gofish error, 0 when it has none.
func statusOf(err error) int {
	var re *schemas.Error
	if errors.As(err, &re) {
		return re.HTTPReturnedStatusCode
	}
	return 0
}

// do sends a raw request and returns the status and body.
func do(t *testing.T, method, url, body string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer func() { _ = resp.Body.Close() }() // only read: closing cannot lose data
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func basicHeader(user, password string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}
}

func mustState(t *testing.T, s *Server, host string) HostState {
	t.Helper()
	st, ok := s.State(host)
	if !ok {
		t.Fatalf("no host %s", host)
	}
	return st
}
