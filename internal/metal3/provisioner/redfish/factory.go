package redfish

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stmcginnis/gofish"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// Bounds of a BMC's answers.
const (
	// DefaultMaxResponseBytes caps the body of a Redfish answer: the
	// largest a real BMC sends (an expanded collection) is well below it.
	DefaultMaxResponseBytes = 4 << 20
	// maxErrorBodyBytes is what is read of an error answer's body: its
	// status says all this package uses of it.
	maxErrorBodyBytes = 64 << 10
	// DefaultMaxRequests bounds the requests of one operation (an
	// inspection reads a few dozen resources): a BMC whose collections
	// page without end (Members@odata.nextLink) fails it instead of
	// growing a list forever.
	DefaultMaxRequests = 2000
)

// Options tune the factory. The zero value is usable.
type Options struct {
	// HTTPTimeout bounds each request (connect, send, answer, its whole
	// body). Default 30s.
	HTTPTimeout time.Duration
	// MaxResponseBytes caps the body of each answer; a larger one is an
	// error naming the endpoint and the path. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Proxy picks the proxy of a request; nil means none: requests, and
	// their basic-auth header, go straight to the BMC.
	Proxy func(*http.Request) (*url.URL, error)
	// InsecureSkipVerify skips the certificate check of every BMC, as a
	// target's InsecureSkipVerify does for its own.
	InsecureSkipVerify bool
	// MaxRequests bounds the requests of one operation. Default
	// DefaultMaxRequests.
	MaxRequests int64
	// MaxConnsPerHost bounds the connections to one BMC endpoint; requests
	// beyond it wait. Default 16.
	MaxConnsPerHost int
	// MaxConcurrentRequests bounds the requests one client (one target) has
	// in flight. Default MaxConnsPerHost.
	MaxConcurrentRequests int
	// MaxClients bounds the clients kept; the least recently used one goes
	// first. Default 4096.
	MaxClients int
	// RootCAs verify BMC certificates; nil means the system's roots.
	RootCAs *x509.CertPool
}

func (o Options) withDefaults() Options {
	if o.HTTPTimeout <= 0 {
		o.HTTPTimeout = 30 * time.Second
	}
	if o.MaxConnsPerHost <= 0 {
		o.MaxConnsPerHost = 16
	}
	if o.MaxConcurrentRequests <= 0 {
		o.MaxConcurrentRequests = o.MaxConnsPerHost
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 4096
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	return o
}

// New returns a Factory that opens Redfish provisioners, reusing one client
// per target.
func New(opts Options) provisioner.BMCFactory {
	opts = opts.withDefaults()
	return &factory{
		opts:     opts,
		verified: &http.Client{Timeout: opts.HTTPTimeout, Transport: newTransport(opts, false)},
		insecure: &http.Client{Timeout: opts.HTTPTimeout, Transport: newTransport(opts, true)},
		clients:  map[string]*client{},
	}
}

// newTransport is the transport of every BMC client, the metal3-operator's
// and airshipctl's: connect, TLS handshake and answer bounded by
// HTTPTimeout, answers capped at MaxResponseBytes (error answers read only
// up to maxErrorBodyBytes), the proxy of opts.Proxy only, certificates
// verified unless insecure.
func newTransport(opts Options, insecure bool) http.RoundTripper {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: opts.RootCAs}
	if insecure || opts.InsecureSkipVerify {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // spec.bmc.disableCertificateVerification, managementConfiguration.insecure
	}
	t := httplimit.NewTransport(httplimit.ClientOptions{
		Timeout:         opts.HTTPTimeout,
		Proxy:           opts.Proxy,
		TLSClientConfig: tlsConfig,
		MaxConnsPerHost: opts.MaxConnsPerHost,
	})
	return requestBudget{errorBodies{httplimit.LimitResponses(t, opts.MaxResponseBytes)}}
}

// budgetKey keys the request budget of an operation in its context.
type budgetKey struct{}

// budget is how many more requests an operation may send.
type budget struct {
	left  atomic.Int64
	limit int64
}

// withBudget gives ctx a budget of limit requests.
func withBudget(ctx context.Context, limit int64) context.Context {
	b := &budget{limit: limit}
	b.left.Store(limit)
	return context.WithValue(ctx, budgetKey{}, b)
}

// errTooManyRequests is an operation that ran out of its budget.
type errTooManyRequests struct{ limit int64 }

func (e *errTooManyRequests) Error() string {
	return fmt.Sprintf("more than %d requests for one operation (a collection that pages without end?)", e.limit)
}

// requestBudget refuses a request once its operation's budget is spent.
type requestBudget struct{ next http.RoundTripper }

func (r requestBudget) RoundTrip(req *http.Request) (*http.Response, error) {
	if b, ok := req.Context().Value(budgetKey{}).(*budget); ok && b.left.Add(-1) < 0 {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &errTooManyRequests{limit: b.limit}
	}
	return r.next.RoundTrip(req)
}

// errorBodies reads at most maxErrorBodyBytes of an answer that is not a
// success: gofish reads all of it into the error it returns, where a body
// over the cap would lose what the status says.
type errorBodies struct{ next http.RoundTripper }

func (e errorBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := e.next.RoundTrip(req)
	if err == nil && resp.Body != nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, maxErrorBodyBytes), resp.Body}
	}
	return resp, err
}

// factory is the provisioner.BMCFactory of this package.
type factory struct {
	opts               Options
	verified, insecure *http.Client

	mu      sync.Mutex
	clients map[string]*client
	tick    uint64 // orders uses for eviction
}

// client is one target's gofish client. ready is closed once api or err is
// set; until then other callers for the target wait instead of connecting
// too.
type client struct {
	key      string
	endpoint string
	ready    chan struct{}
	api      *gofish.APIClient
	err      error
	lastUsed uint64 // under factory.mu

	// slots caches each system's virtual CD path (system path -> slot path).
	slots sync.Map
}

// Open returns the provisioner of a host, connecting to its BMC unless a
// client for the same target is kept.
func (f *factory) Open(ctx context.Context, t provisioner.Target) (provisioner.BMC, error) {
	endpoint := strings.TrimRight(t.Access.Endpoint, "/")
	if !strings.HasPrefix(endpoint, "http://") && !strings.HasPrefix(endpoint, "https://") {
		return nil, newError(endpoint, "open", provisioner.ErrRefused, "the endpoint is not an http(s) URL")
	}
	c, err := f.client(ctx, endpoint, t)
	if err != nil {
		return nil, err
	}
	return &host{f: f, c: c, endpoint: endpoint, systemPath: t.Access.SystemPath}, nil
}

// targetKey identifies a client: the password only as a hash.
func targetKey(endpoint string, t provisioner.Target) string {
	sum := sha256.Sum256([]byte(t.Credentials.Password))
	insecure := "verify"
	if t.InsecureSkipVerify {
		insecure = "insecure"
	}
	return strings.Join([]string{endpoint, t.Credentials.Username, hex.EncodeToString(sum[:]), insecure}, "\x00")
}

func (f *factory) client(ctx context.Context, endpoint string, t provisioner.Target) (*client, error) {
	key := targetKey(endpoint, t)
	f.mu.Lock()
	f.tick++
	c, ok := f.clients[key]
	if ok {
		c.lastUsed = f.tick
	} else {
		c = &client{key: key, endpoint: endpoint, ready: make(chan struct{}), lastUsed: f.tick}
		f.clients[key] = c
		f.evictLocked()
	}
	f.mu.Unlock()

	if !ok {
		c.api, c.err = f.connect(ctx, endpoint, t)
		if c.err != nil {
			f.drop(c)
		}
		close(c.ready)
	}
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, classify(endpoint, "connect", ctx.Err(), provisioner.ErrRefused)
	}
	if c.err != nil {
		return nil, c.err
	}
	return c, nil
}

// connect makes a gofish client: it reads the service root (without
// credentials, as gofish does) and keeps basic auth for later requests.
func (f *factory) connect(ctx context.Context, endpoint string, t provisioner.Target) (*gofish.APIClient, error) {
	httpClient := f.verified
	if t.InsecureSkipVerify {
		httpClient = f.insecure
	}
	api, err := gofish.ConnectContext(ctx, gofish.ClientConfig{
		Endpoint:              endpoint,
		Username:              t.Credentials.Username,
		Password:              t.Credentials.Password,
		BasicAuth:             true,
		HTTPClient:            httpClient,
		NoModifyTransport:     true,
		ReuseConnections:      true,
		MaxConcurrentRequests: int64(f.opts.MaxConcurrentRequests),
	})
	if err != nil {
		return nil, classify(endpoint, "connect", err, provisioner.ErrRefused)
	}
	return api, nil
}

// drop forgets a client (after a failed connect, or refused credentials)
// unless another one already replaced it.
func (f *factory) drop(c *client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clients[c.key] == c {
		delete(f.clients, c.key)
	}
}

// evictLocked drops the least recently used clients beyond MaxClients.
func (f *factory) evictLocked() {
	for len(f.clients) > f.opts.MaxClients {
		var oldest *client
		for _, c := range f.clients {
			if oldest == nil || c.lastUsed < oldest.lastUsed {
				oldest = c
			}
		}
		delete(f.clients, oldest.key)
	}
}

// size is the number of clients kept (for tests).
func (f *factory) size() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.clients)
}
