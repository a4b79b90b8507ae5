package repository

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/airshipit/airship-go/internal/httplimit"
)

// Bounds of a pull, unless Options say otherwise.
const (
	// DefaultTimeout bounds one repository's pull, fetches and checkout.
	DefaultTimeout = 10 * time.Minute
	// DefaultMaxFetchBytes caps what one repository's pull receives:
	// over HTTP(S) the response bodies of every request, over ssh the
	// bytes read from its connections, summed.
	DefaultMaxFetchBytes int64 = 512 << 20
)

// ErrTooLarge is wrapped by the error of a pull that received more than
// its cap.
var ErrTooLarge = errors.New("the repository sent more than the fetch size cap")

// budget is what one pull may still receive; it travels in the requests'
// context, so one HTTP client serves every pull.
type budget struct {
	limit    int64
	read     atomic.Int64
	exceeded atomic.Bool
}

type budgetKey struct{}

func withBudget(ctx context.Context, b *budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// installOnce puts the capped HTTP client in go-git's protocol table, the
// only way go-git v5 takes a client of our own.
var installOnce sync.Once

func installTransport() {
	installOnce.Do(func() {
		// Connect, TLS and the wait for an answer's header are bounded
		// here, the whole pull by its context; the proxy is the
		// environment's, as git's.
		base := httplimit.NewTransport(httplimit.ClientOptions{Timeout: 2 * time.Minute, Proxy: httplimit.ProxyFromEnvironment()})
		c := githttp.NewClient(&http.Client{Transport: &cappedTransport{base: base}})
		client.InstallProtocol("http", c)
		client.InstallProtocol("https", c)
		registerSSHDialer()
	})
}

// cappedTransport counts the response bodies of a request against the
// budget in its context (DefaultMaxFetchBytes when there is none): unlike
// httplimit.LimitResponses, one cap for all the answers of a pull, set per
// pull under a client go-git shares.
type cappedTransport struct {
	base http.RoundTripper
}

func (t *cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := req.Context().Value(budgetKey{}).(*budget)
	if b == nil {
		b = &budget{limit: DefaultMaxFetchBytes}
	}
	res, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if res.ContentLength > 0 && b.read.Load()+res.ContentLength > b.limit {
		_ = res.Body.Close() // unread: ErrTooLarge is the error reported
		b.exceeded.Store(true)
		return nil, fmt.Errorf("response of %d bytes: %w", res.ContentLength, ErrTooLarge)
	}
	res.Body = &cappedBody{ReadCloser: res.Body, b: b}
	return res, nil
}

type cappedBody struct {
	io.ReadCloser
	b *budget
}

func (c *cappedBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if c.b.read.Add(int64(n)) > c.b.limit {
		c.b.exceeded.Store(true)
		return 0, ErrTooLarge
	}
	return n, err
}
