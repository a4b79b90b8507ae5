package httplimit

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// IsLoopbackHost reports whether the host part of a listen address is a
// loopback address (or "localhost").
func IsLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve runs the handler on ln, with the timeouts t (zero fields: the
// defaults), over TLS when certFile is set, until ctx ends; then it shuts
// down gracefully, giving requests in flight 10 seconds.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, certFile, keyFile string, t ServerTimeouts) error {
	srv := NewServer(h, t)
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- srv.ServeTLS(ln, certFile, keyFile)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return err
		}
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
