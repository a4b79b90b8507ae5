package httplimittest

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"
)

// closeWait bounds how long ExpectClosed waits for the server to close a
// connection: far above any timeout a test sets, it only keeps a server that
// never closes from hanging the test.
const closeWait = 30 * time.Second

// Serve runs srv on a loopback port until the test ends and returns the
// address. For tests of listeners built with httplimit.NewServer.
func Serve(t testing.TB, srv *http.Server) string {
	t.Helper()
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// ExpectClosed connects to addr, sends send (maybe nothing, maybe half a
// request) and reads until the server closes the connection; it fails the
// test when the connection is still open after a generous wait.
func ExpectClosed(t testing.TB, addr, send string) {
	t.Helper()
	conn, err := new(net.Dialer).DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }() // the server closed it, or the test failed
	if send != "" {
		if _, err := io.WriteString(conn, send); err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.SetReadDeadline(time.Now().Add(closeWait)); err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server kept the connection open (sent %q)", send)
	}
	// nil (EOF) or a reset: the server closed it.
}

// Hang listens on a loopback port, accepts every connection and never
// answers (for tests of clients against a peer that hangs); the listener and
// the connections are closed when the test ends. It returns host:port.
func Hang(t testing.TB) string {
	t.Helper()
	ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}
