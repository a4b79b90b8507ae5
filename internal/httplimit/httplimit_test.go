package httplimit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/httplimit/httplimittest"
)

// hangingServer accepts requests and never answers them until the test ends.
func hangingServer(t *testing.T) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: handlers return, Close does not wait
	return srv
}

// bodyServer answers every request with n bytes; withLength sets Content-Length.
func bodyServer(t *testing.T, n int64, withLength bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if withLength {
			w.Header().Set("Content-Length", fmt.Sprint(n))
		}
		chunk := []byte(strings.Repeat("x", 32<<10))
		for left := n; left > 0; {
			c := chunk[:min(left, int64(len(chunk)))]
			if _, err := w.Write(c); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			left -= int64(len(c))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// TestClientBounds: a peer that never answers costs the request its
// deadline and no more; an answer over the cap is an error naming the cap
// and the request, whether or not it announces its length.
func TestClientBounds(t *testing.T) {
	const limit = 1 << 20
	tests := []struct {
		name     string
		srv      func(t *testing.T) *httptest.Server
		path     string
		wantErr  func(error) bool
		wantBody int
	}{
		{"hangs", hangingServer, "/x", isTimeout, 0},
		{"streams past the cap", func(t *testing.T) *httptest.Server { return bodyServer(t, 64<<20, false) }, "/redfish/v1/Systems/1", isTooLarge(limit, "/redfish/v1/Systems/1"), 0},
		{"announces more than the cap", func(t *testing.T) *httptest.Server { return bodyServer(t, limit+1, true) }, "/big", isTooLarge(limit, "/big"), 0},
		{"one byte over, no length", func(t *testing.T) *httptest.Server { return bodyServer(t, limit+1, false) }, "/over", isTooLarge(limit, "/over"), 0},
		{"exactly the cap", func(t *testing.T) *httptest.Server { return bodyServer(t, limit, false) }, "/ok", nil, limit},
		{"small", func(t *testing.T) *httptest.Server { return bodyServer(t, 10, true) }, "/ok", nil, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tt.srv(t)
			c := httplimit.NewClient(httplimit.ClientOptions{Timeout: 300 * time.Millisecond, MaxResponseBytes: limit})
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+tt.path+"?token=secret", nil)
			if err != nil {
				t.Fatal(err)
			}
			var body []byte
			resp, err := c.Do(req)
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				_ = resp.Body.Close() // only read: closing cannot lose data
			}
			if tt.wantErr == nil {
				if err != nil || len(body) != tt.wantBody {
					t.Fatalf("got %d bytes, %v; want %d bytes", len(body), err, tt.wantBody)
				}
				return
			}
			if err == nil || !tt.wantErr(err) {
				t.Fatalf("got %v (%d bytes), want the bound's error", err, len(body))
			}
			if tl := new(httplimit.TooLargeError); errors.As(err, &tl) && strings.Contains(tl.Error(), "secret") {
				t.Fatalf("the error quotes the query: %v", tl)
			}
		})
	}
}

func isTooLarge(limit int64, path string) func(error) bool {
	return func(err error) bool {
		var tl *httplimit.TooLargeError
		return errors.As(err, &tl) && tl.Limit == limit && tl.Path == path && tl.Method == "GET" &&
			strings.HasPrefix(tl.Server, "http://127.0.0.1:") &&
			strings.Contains(tl.Error(), fmt.Sprintf("larger than the limit of %d bytes", limit)) && strings.Contains(tl.Error(), "GET "+path)
	}
}

// TestServerClosesConnections: a client that connects and sends nothing,
// half a header, or nothing more after a request has its connection closed
// by the server. The client's own read deadline is only there so that a
// server that never closes fails the test instead of hanging it.
func TestServerClosesConnections(t *testing.T) {
	tests := []struct {
		name string
		send string
	}{
		{"nothing sent", ""},
		{"half a header", "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "},
		{"idle after a request", "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
		{"body never sent", "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\nab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				fmt.Fprintln(w, "ok")
			})
			addr := httplimittest.Serve(t, httplimit.NewServer(handler, httplimit.ServerTimeouts{ReadHeader: 100 * time.Millisecond, Read: 200 * time.Millisecond, Write: time.Second, Idle: 100 * time.Millisecond}))
			httplimittest.ExpectClosed(t, addr, tt.send)
		})
	}
}

// TestServerDefaults: the zero httplimit.ServerTimeouts give every timeout a value.
func TestServerDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   httplimit.ServerTimeouts
		want [4]time.Duration // header, read, write, idle as set on the server
	}{
		{"zero", httplimit.ServerTimeouts{}, [4]time.Duration{httplimit.DefaultReadHeaderTimeout, httplimit.DefaultReadTimeout, httplimit.DefaultWriteTimeout, httplimit.DefaultIdleTimeout}},
		{"streaming", httplimit.ServerTimeouts{Write: -1}, [4]time.Duration{httplimit.DefaultReadHeaderTimeout, httplimit.DefaultReadTimeout, 0, httplimit.DefaultIdleTimeout}},
		{"header above read", httplimit.ServerTimeouts{ReadHeader: time.Minute, Read: time.Second}, [4]time.Duration{time.Second, time.Second, httplimit.DefaultWriteTimeout, httplimit.DefaultIdleTimeout}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := httplimit.NewServer(http.NotFoundHandler(), tt.in)
			got := [4]time.Duration{s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout}
			if got != tt.want || s.MaxHeaderBytes != httplimit.MaxHeaderBytes {
				t.Fatalf("got %v (max header %d), want %v", got, s.MaxHeaderBytes, tt.want)
			}
		})
	}
}

// TestProxyFromEnvironment: the environment is read when the function is
// made, loopback targets never go through the proxy, and a client without
// Proxy uses none whatever the environment says. No request is sent.
func TestProxyFromEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:3128")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:3129")
	t.Setenv("NO_PROXY", "skip.example.test")
	for _, k := range []string{"http_proxy", "https_proxy", "no_proxy"} {
		t.Setenv(k, "") // restored when the test ends
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		target string
		want   string
	}{
		{"http://bmc.example.test:8000/redfish/v1/", "http://127.0.0.1:3128"},
		{"https://bmc.example.test/redfish/v1/", "http://127.0.0.1:3129"},
		{"http://skip.example.test/", ""},
		{"http://127.0.0.1:8000/redfish/v1/", ""},
		{"http://[::1]:8000/", ""},
	}
	proxy := httplimit.ProxyFromEnvironment()
	direct := httplimit.NewTransport(httplimit.ClientOptions{})
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, tt.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			u, err := proxy(req)
			got := ""
			if u != nil {
				got = u.String()
			}
			if err != nil || got != tt.want {
				t.Fatalf("proxy of %s: %q, %v; want %q", tt.target, got, err, tt.want)
			}
			if direct.Proxy != nil {
				if u, _ := direct.Proxy(req); u != nil {
					t.Fatalf("a transport without Proxy goes through %s", u)
				}
			}
		})
	}
}
