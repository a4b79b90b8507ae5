package chartsource

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/redact"
)

// Bounds of an archive fetch over HTTP(S). The overall deadline of one fetch
// is configurable (FetchOptions.Timeout, the operator's
// --chart-fetch-timeout); connecting and the TLS handshake are bounded by
// httplimit's shorter DialTimeout and TLSHandshakeTimeout, and the body by
// MaxArchiveBytes.
const (
	// DefaultFetchTimeout bounds one fetch from dialling to the last byte.
	DefaultFetchTimeout = 60 * time.Second
	// DefaultMaxFetches is how many archives are fetched at once in all.
	DefaultMaxFetches = 8
	// MaxFetchesPerHost is how many of them may go to one host, so one
	// slow server cannot take every fetch slot.
	MaxFetchesPerHost = 2
	// DefaultFetchTTL is how long a fetched archive is used before it is
	// fetched again (in the background; the old one is used meanwhile).
	DefaultFetchTTL = 5 * time.Minute
	// fetchErrorTTL is how long a failed fetch is reported to other callers
	// before one of them starts a new one.
	fetchErrorTTL = time.Second
)

// ErrFetching means the archive source.location names is being fetched in
// the background: the caller is not blocked, and the waiter it named is
// notified when the fetch is done.
var ErrFetching = errors.New("fetching chart source")

// NewHTTPClient returns the client archives are fetched with (httplimit's):
// the whole request bounded by timeout (DefaultFetchTimeout when not
// positive), the answer by MaxArchiveBytes, the proxy from the environment
// as for any Go program.
func NewHTTPClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	return httplimit.NewClient(httplimit.ClientOptions{
		Timeout:          timeout,
		MaxResponseBytes: MaxArchiveBytes,
		Proxy:            httplimit.ProxyFromEnvironment(),
		MaxConnsPerHost:  MaxFetchesPerHost,
	})
}

// fetchHTTP reads the archive at u with hc within timeout, at most
// MaxArchiveBytes of it. Errors name source.location with the URL redacted
// and say whether the fetch timed out.
func fetchHTTP(ctx context.Context, hc *http.Client, timeout time.Duration, u *url.URL) ([]byte, error) {
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("source.location %q: %w", redact.URL(u.String()), ErrInvalid)
	}
	resp, err := hc.Do(req)
	var tooLarge *httplimit.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("source.location %q: archive is larger than %d bytes: %w", redact.URL(u.String()), MaxArchiveBytes, ErrInvalid)
	}
	if err != nil {
		// The error quotes the URL, which may carry credentials: never
		// return it.
		if timedOut(ctx, err) {
			return nil, fmt.Errorf("source.location %q: fetching archive timed out after %s", redact.URL(u.String()), timeout)
		}
		return nil, fmt.Errorf("source.location %q: fetching archive failed", redact.URL(u.String()))
	}
	defer func() { _ = resp.Body.Close() }() // only read: closing cannot lose data
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("source.location %q: HTTP %d: %w", redact.URL(u.String()), resp.StatusCode, ErrNotFound)
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return nil, fmt.Errorf("source.location %q: HTTP %d: %w", redact.URL(u.String()), resp.StatusCode, ErrInvalid)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("source.location %q: HTTP %d", redact.URL(u.String()), resp.StatusCode)
	}
	if resp.ContentLength > MaxArchiveBytes {
		return nil, fmt.Errorf("source.location %q: archive of %d bytes is larger than %d bytes: %w", redact.URL(u.String()), resp.ContentLength, MaxArchiveBytes, ErrInvalid)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxArchiveBytes+1))
	if errors.As(err, &tooLarge) {
		return nil, fmt.Errorf("source.location %q: archive larger than %d bytes: %w", redact.URL(u.String()), MaxArchiveBytes, ErrInvalid)
	}
	if err != nil {
		if timedOut(ctx, err) {
			return nil, fmt.Errorf("source.location %q: reading archive timed out after %s", redact.URL(u.String()), timeout)
		}
		return nil, fmt.Errorf("source.location %q: reading archive failed", redact.URL(u.String()))
	}
	if len(data) > MaxArchiveBytes {
		return nil, fmt.Errorf("source.location %q: archive larger than %d bytes: %w", redact.URL(u.String()), MaxArchiveBytes, ErrInvalid)
	}
	return data, nil
}

func timedOut(ctx context.Context, err error) bool {
	var ne net.Error
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// FetchOptions configure a Fetcher.
type FetchOptions struct {
	// Client fetches; nil means NewHTTPClient(Timeout).
	Client *http.Client
	// Timeout bounds one fetch; 0 means DefaultFetchTimeout.
	Timeout time.Duration
	// MaxFetches bounds the fetches in flight; 0 means DefaultMaxFetches.
	// At most MaxFetchesPerHost of them go to one host.
	MaxFetches int
	// TTL is how long an archive is used before it is fetched again; 0
	// means DefaultFetchTTL.
	TTL time.Duration
	// Notify is called, from the fetch's goroutine, for each waiter once
	// the fetch it waited for is done. It must not block for long.
	Notify func(waiter types.NamespacedName)
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

// Fetcher fetches chart archives over HTTP(S) in the background, so that no
// caller (a reconcile worker) waits on a remote server. There is at most one
// fetch in flight per location; fetches are bounded in number overall and
// per host, each by a deadline and by MaxArchiveBytes. Results are kept for
// TTL and then refreshed in the background while the old archive is still
// served; a failed fetch is served to those who waited for it, and the next
// caller after fetchErrorTTL starts a new one. Locations nobody asked for in
// ten TTLs are dropped.
type Fetcher struct {
	opts FetchOptions
	ctx  context.Context
	all  chan struct{}

	mu      sync.Mutex
	entries map[string]*fetchEntry
	hosts   map[string]chan struct{}
}

type fetchEntry struct {
	// Result of the last completed fetch; done is false until there is one.
	done    bool
	data    []byte
	sum     [sha256.Size]byte
	err     error
	at      time.Time
	used    time.Time
	running bool
	// waiters are notified when the running fetch completes; unseen are
	// those notified of a failure who have not read it yet.
	waiters map[types.NamespacedName]bool
	unseen  map[types.NamespacedName]bool
}

// NewFetcher returns a fetcher whose fetches stop when ctx is done.
func NewFetcher(ctx context.Context, o FetchOptions) *Fetcher {
	if o.Timeout <= 0 {
		o.Timeout = DefaultFetchTimeout
	}
	if o.Client == nil {
		o.Client = NewHTTPClient(o.Timeout)
	}
	if o.MaxFetches <= 0 {
		o.MaxFetches = DefaultMaxFetches
	}
	if o.TTL <= 0 {
		o.TTL = DefaultFetchTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Notify == nil {
		o.Notify = func(types.NamespacedName) {}
	}
	return &Fetcher{opts: o, ctx: ctx, all: make(chan struct{}, o.MaxFetches), entries: map[string]*fetchEntry{}, hosts: map[string]chan struct{}{}}
}

// Timeout is the deadline of one fetch.
func (f *Fetcher) Timeout() time.Duration { return f.opts.Timeout }

// get returns the archive at u for waiter without blocking: the data or the
// error of a completed fetch, or ErrFetching while the first fetch (or a new
// one after a failure) runs, in which case waiter is notified when it ends.
func (f *Fetcher) get(u *url.URL, waiter types.NamespacedName) ([]byte, error) {
	key := u.String()
	now := f.opts.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sweep(now)
	e := f.entries[key]
	if e == nil {
		e = &fetchEntry{waiters: map[types.NamespacedName]bool{}, unseen: map[types.NamespacedName]bool{}}
		f.entries[key] = e
	}
	e.used = now
	switch {
	case !e.done:
		// First fetch.
	case e.err == nil:
		if now.Sub(e.at) >= f.opts.TTL && !e.running {
			// Refresh in the background; the waiter hears of it only if
			// the archive changed.
			e.waiters[waiter] = true
			f.start(key, u, e)
		}
		return e.data, nil
	case e.unseen[waiter] || now.Sub(e.at) < fetchErrorTTL:
		delete(e.unseen, waiter)
		return nil, e.err
	default:
		// A failure already reported: try again.
		e.done = false
	}
	e.waiters[waiter] = true
	if !e.running {
		f.start(key, u, e)
	}
	return nil, fmt.Errorf("source.location %q: %w (at most %s)", redact.URL(u.String()), ErrFetching, f.opts.Timeout)
}

// start runs a fetch of u for e; f.mu is held.
func (f *Fetcher) start(key string, u *url.URL, e *fetchEntry) {
	e.running = true
	host := f.hosts[u.Host]
	if host == nil {
		host = make(chan struct{}, MaxFetchesPerHost)
		f.hosts[u.Host] = host
	}
	go func() {
		data, err := f.fetch(u, host)
		sum := sha256.Sum256(data)
		f.mu.Lock()
		changed := !e.done || (e.err == nil) != (err == nil) || sum != e.sum
		e.done, e.running, e.data, e.err, e.sum, e.at = true, false, data, err, sum, f.opts.Now()
		var notify []types.NamespacedName
		if changed {
			for w := range e.waiters {
				notify = append(notify, w)
				if err != nil {
					e.unseen[w] = true
				}
			}
		}
		clear(e.waiters)
		if f.entries[key] != e {
			notify = nil
		}
		f.mu.Unlock()
		for _, w := range notify {
			f.opts.Notify(w)
		}
	}()
}

// fetch takes a slot of the host and one overall, then fetches. Waiting for
// a slot is not part of the fetch's deadline.
func (f *Fetcher) fetch(u *url.URL, host chan struct{}) ([]byte, error) {
	for _, sem := range []chan struct{}{host, f.all} {
		select {
		case sem <- struct{}{}:
			defer func(sem chan struct{}) { <-sem }(sem)
		case <-f.ctx.Done():
			return nil, fmt.Errorf("source.location %q: fetch cancelled: %w", redact.URL(u.String()), f.ctx.Err())
		}
	}
	return fetchHTTP(f.ctx, f.opts.Client, f.opts.Timeout, u)
}

// sweep drops entries nobody asked for in ten TTLs; f.mu is held.
func (f *Fetcher) sweep(now time.Time) {
	for k, e := range f.entries {
		if !e.running && now.Sub(e.used) > 10*f.opts.TTL {
			delete(f.entries, k)
		}
	}
}
