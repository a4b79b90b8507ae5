package httplimit

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// Defaults of ClientOptions.
const (
	// DefaultTimeout bounds one request, from connecting to the answer's
	// last byte.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponseBytes caps an answer's body.
	DefaultMaxResponseBytes = 32 << 20
	// DialTimeout bounds a TCP connect (or the whole Timeout when shorter).
	DialTimeout = 10 * time.Second
	// TLSHandshakeTimeout bounds a TLS handshake (or the whole Timeout
	// when shorter).
	TLSHandshakeTimeout = 10 * time.Second
	// IdleConnTimeout is how long an unused kept-alive connection stays open.
	IdleConnTimeout = 90 * time.Second
)

// ClientOptions bound a client. The zero value is usable: the defaults,
// no proxy, the system's roots.
type ClientOptions struct {
	// Timeout bounds each request: connecting, sending, waiting for and
	// reading the whole answer. Default DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes caps each answer's body. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Proxy picks the proxy of a request; nil means none (direct).
	Proxy func(*http.Request) (*url.URL, error)
	// TLSClientConfig verifies servers; nil means the system's roots.
	TLSClientConfig *tls.Config
	// MaxConnsPerHost bounds the connections to one host; 0 means no bound.
	MaxConnsPerHost int
}

// WithDefaults fills the zero fields with the defaults.
func (o ClientOptions) WithDefaults() ClientOptions {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return o
}

// NewClient returns a client with o's deadline on every request and o's
// cap on every answer. Redirects are followed as net/http does (it drops
// the Authorization header on a redirect to another host).
func NewClient(o ClientOptions) *http.Client {
	o = o.WithDefaults()
	return &http.Client{Timeout: o.Timeout, Transport: LimitResponses(NewTransport(o), o.MaxResponseBytes)}
}

// NewTransport returns the transport of NewClient, without the body cap:
// connect, TLS handshake and response header bounded by o.Timeout (and the
// first two by DialTimeout and TLSHandshakeTimeout), o's proxy and TLS.
func NewTransport(o ClientOptions) *http.Transport {
	o = o.WithDefaults()
	tlsConfig := o.TLSClientConfig
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return &http.Transport{
		Proxy:                 o.Proxy,
		DialContext:           (&net.Dialer{Timeout: min(o.Timeout, DialTimeout), KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   min(o.Timeout, TLSHandshakeTimeout),
		ResponseHeaderTimeout: o.Timeout,
		ExpectContinueTimeout: time.Second,
		MaxConnsPerHost:       o.MaxConnsPerHost,
		MaxIdleConnsPerHost:   max(o.MaxConnsPerHost, 2),
		IdleConnTimeout:       IdleConnTimeout,
		ForceAttemptHTTP2:     true,
	}
}

// ProxyFromEnvironment returns the proxy choice of HTTP_PROXY, HTTPS_PROXY
// and NO_PROXY (and their lower-case forms) as they are now, with net/http's
// rules: requests to loopback addresses and localhost never go through a
// proxy.
func ProxyFromEnvironment() func(*http.Request) (*url.URL, error) {
	fn := httpproxy.FromEnvironment().ProxyFunc()
	return func(req *http.Request) (*url.URL, error) { return fn(req.URL) }
}

// TooLargeError is an answer larger than a client's cap.
type TooLargeError struct {
	// Server is the scheme, host and port the answer came from.
	Server string
	// Method and Path are the request's (the path without a query).
	Method, Path string
	// Limit is the cap, in bytes.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the answer of %s to %s %s is larger than the limit of %d bytes", e.Server, e.Method, e.Path, e.Limit)
}

// LimitResponses caps the body of every answer next returns at limit bytes
// (DefaultMaxResponseBytes when not positive): an answer that announces a
// larger Content-Length fails at once, and reading past the cap of one that
// does not fails with a *TooLargeError.
func LimitResponses(next http.RoundTripper, limit int64) http.RoundTripper {
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	return &limiter{next: next, limit: limit}
}

type limiter struct {
	next  http.RoundTripper
	limit int64
}

func (l *limiter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	tooLarge := &TooLargeError{Server: req.URL.Scheme + "://" + req.URL.Host, Method: req.Method, Path: req.URL.Path, Limit: l.limit}
	if tooLarge.Path == "" {
		tooLarge.Path = "/"
	}
	if resp.ContentLength > l.limit {
		_ = resp.Body.Close()
		return nil, tooLarge
	}
	resp.Body = &limitedBody{body: resp.Body, left: l.limit, err: tooLarge}
	return resp, nil
}

// limitedBody reads at most left bytes of body, then fails with err
// (after seeing one byte more, so that a body of exactly the cap is read
// in full).
type limitedBody struct {
	body io.ReadCloser
	left int64
	err  error
	over bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	if int64(n) > b.left {
		n, b.over = int(b.left), true
		b.left = 0
		return n, b.err
	}
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }

// Unwrap returns the transport under the cap.
func (l *limiter) Unwrap() http.RoundTripper { return l.next }

// CancelRequest passes a cancellation on to the wrapped transport when it
// still supports that older form (client-go's wrappers ask for it, and log
// a warning on every request when a transport under them lacks it).
func (l *limiter) CancelRequest(req *http.Request) {
	type canceler interface{ CancelRequest(*http.Request) }
	if c, ok := l.next.(canceler); ok {
		c.CancelRequest(req)
	}
}
