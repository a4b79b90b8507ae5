package repository

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	"golang.org/x/net/proxy"
)

// SSHDialTimeout bounds the TCP connect of a pull over ssh (or the pull's
// deadline, when sooner), as httplimit.DialTimeout does over HTTP(S).
const SSHDialTimeout = 10 * time.Second

// go-git v5's ssh transport takes no dialer of ours, but it dials through
// the "proxy" of the endpoint when one is set, and golang.org/x/net/proxy
// lets a program register a dialer for a URL scheme of its own. A pull
// over ssh therefore names, as its proxy, sshDialScheme://<id>, where id
// finds the pull's context and byte budget: the connection is made under
// the pull's deadline, closed when it passes (which stops a handshake
// that never ends), and every byte read from it counts against the budget.
const sshDialScheme = "airship-pull-ssh"

// sshPull is what the dialer needs of one running pull.
type sshPull struct {
	ctx context.Context
	b   *budget
}

var (
	sshPulls  sync.Map // id (string) -> *sshPull
	sshPullID atomic.Uint64
)

// sshProxy registers ctx and b for the dialer and returns the proxy
// options that lead go-git's ssh transport to it, and the function that
// forgets them. For a URL go-git does not reach over ssh, it returns no
// options.
func sshProxy(ctx context.Context, rawURL string, b *budget) (transport.ProxyOptions, func()) {
	ep, err := transport.NewEndpoint(rawURL)
	if err != nil || ep.Protocol != "ssh" {
		return transport.ProxyOptions{}, func() {}
	}
	id := strconv.FormatUint(sshPullID.Add(1), 10)
	sshPulls.Store(id, &sshPull{ctx: ctx, b: b})
	return transport.ProxyOptions{URL: sshDialScheme + "://" + id}, func() { sshPulls.Delete(id) }
}

func registerSSHDialer() {
	proxy.RegisterDialerType(sshDialScheme, func(u *url.URL, _ proxy.Dialer) (proxy.Dialer, error) {
		p, ok := sshPulls.Load(u.Host)
		if !ok {
			return nil, fmt.Errorf("ssh dialer: no pull %q is running", u.Host)
		}
		return &sshDialer{p: p.(*sshPull)}, nil
	})
}

// sshDialer connects as go-git would (through ALL_PROXY when it is set),
// under the pull's deadline.
type sshDialer struct {
	p *sshPull
}

func (d *sshDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d *sshDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	// Bounded by both go-git's context and the pull's.
	dctx, cancel := context.WithCancel(d.p.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	var conn net.Conn
	var err error
	fwd := proxy.FromEnvironmentUsing(&net.Dialer{Timeout: SSHDialTimeout, KeepAlive: 30 * time.Second})
	if cd, ok := fwd.(proxy.ContextDialer); ok {
		conn, err = cd.DialContext(dctx, network, addr)
	} else {
		conn, err = dialWithContext(dctx, fwd, network, addr)
	}
	if err != nil {
		return nil, err
	}
	c := &sshConn{Conn: conn, b: d.p.b}
	// Closing the connection at the deadline ends whatever waits on it:
	// the handshake, which go-git runs without a context, or a read.
	c.stop = context.AfterFunc(d.p.ctx, func() { _ = conn.Close() }) // the pull is over: nobody is left to tell
	return c, nil
}

// sshConn counts what it reads against the pull's budget and fails past it.
type sshConn struct {
	net.Conn
	b    *budget
	stop func() bool
}

func (c *sshConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.b.read.Add(int64(n)) > c.b.limit {
		c.b.exceeded.Store(true)
		_ = c.Conn.Close() // ErrTooLarge is the error reported
		return 0, ErrTooLarge
	}
	return n, err
}

func (c *sshConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// dialWithContext gives up on d's Dial when ctx is done, closing a
// connection that arrives late.
func dialWithContext(ctx context.Context, d proxy.Dialer, network, addr string) (net.Conn, error) {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		conn, err := d.Dial(network, addr)
		done <- result{conn, err}
	}()
	select {
	case r := <-done:
		return r.conn, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.conn != nil {
				_ = r.conn.Close() // arrived too late: unused
			}
		}()
		return nil, ctx.Err()
	}
}
