package httplimit

import (
	"net/http"
	"time"
)

// Defaults of ServerTimeouts.
const (
	// DefaultReadHeaderTimeout bounds reading a request's header, from the
	// connection's start (or the end of the previous request).
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading a whole request, body included.
	DefaultReadTimeout = 60 * time.Second
	// DefaultWriteTimeout bounds handling a request and writing its answer.
	DefaultWriteTimeout = 120 * time.Second
	// DefaultIdleTimeout is how long a kept-alive connection waits for its
	// next request.
	DefaultIdleTimeout = 120 * time.Second
	// MaxHeaderBytes bounds a request's header.
	MaxHeaderBytes = 1 << 20
)

// ServerTimeouts are the timeouts of a server; a zero field takes its
// default, a negative Write means none (an answer that streams).
type ServerTimeouts struct {
	ReadHeader time.Duration
	Read       time.Duration
	Write      time.Duration
	Idle       time.Duration
}

// WithDefaults fills the zero fields with the defaults.
func (t ServerTimeouts) WithDefaults() ServerTimeouts {
	if t.ReadHeader <= 0 {
		t.ReadHeader = DefaultReadHeaderTimeout
	}
	if t.Read <= 0 {
		t.Read = DefaultReadTimeout
	}
	if t.ReadHeader > t.Read {
		t.ReadHeader = t.Read
	}
	if t.Write == 0 {
		t.Write = DefaultWriteTimeout
	}
	if t.Idle <= 0 {
		t.Idle = DefaultIdleTimeout
	}
	return t
}

// NewServer returns a server of h with the timeouts t (zero fields take
// the defaults) and the header size limit. The caller sets ErrorLog,
// TLSConfig or BaseContext as it needs.
func NewServer(h http.Handler, t ServerTimeouts) *http.Server {
	t = t.WithDefaults()
	write := t.Write
	if write < 0 {
		write = 0
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}
