package promenade

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/httplimit/httplimittest"
)

// TestServeClosesIdleConnections runs `promenade serve` with short
// timeouts: a client that connects and sends nothing, half a header, half a
// body, or nothing after a request, has its connection closed by the
// server. (Before, only the header had a timeout: the body and an idle
// kept-alive connection were held forever.)
func TestServeClosesIdleConnections(t *testing.T) {
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() //nolint:errcheck
	t.Setenv(TokenEnv, "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{ch: make(chan string, 10)}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--listen", addr, "--insecure-no-auth", "--design-root", t.TempDir(),
			"--read-header-timeout", "200ms", "--read-timeout", "400ms", "--idle-timeout", "200ms"},
			cli.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: out})
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d", code)
		}
	})
	select {
	case <-out.ch:
	case code := <-done:
		t.Fatalf("serve exited with %d", code)
	}
	tests := []struct {
		name, send string
	}{
		{"nothing sent", ""},
		{"half a header", "GET /api/v1.0/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "},
		{"half a body", "POST /api/v1.0/validatedesign HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"href\""},
		{"idle after a request", "GET /api/v1.0/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			httplimittest.ExpectClosed(t, addr, tt.send)
		})
	}
}
