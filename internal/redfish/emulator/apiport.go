package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HostAPIPort is the port a booted control-plane host's API server
// answers on (Options.HostAPIServers).
const HostAPIPort = 6443

// The forwarder's bounds.
const (
	apiDialTimeout = 5 * time.Second
	apiKeepAlive   = 30 * time.Second
	apiMaxConns    = 64               // per host, beyond them connections wait in the backlog
	apiExecTimeout = 10 * time.Second // of one `ip addr`
	apiMaxRefused  = 256              // peers whose refusal is logged, per forwarder
)

// DefaultHostAPIAllow are the peers the API server ports accept when
// Options.HostAPIAllow is empty: loopback and the pods of a local real
// node (10.88.0.0/16, routed via 10.88.0.1).
var DefaultHostAPIAllow = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("10.88.0.0/16"),
}

// apiForward is the API server port a booted host serves: addr:HostAPIPort
// forwarded to backend (host:port of endpoint, the API server URL of the
// host's user-data). gen is the power generation of the boot, so that a
// boot after power off and on is a new forward. The zero value is none.
type apiForward struct {
	gen      uint64
	addr     netip.Addr
	backend  string
	endpoint string
}

func (f apiForward) none() bool { return !f.addr.IsValid() }

// listen is the address the forward listens on.
func (f apiForward) listen() string { return netip.AddrPortFrom(f.addr, HostAPIPort).String() }

// apiForwardOf decides the API server port of a host booted with bootstrap
// b and the Node InternalIP nodeIP: a control-plane host's (kubeadm init,
// or a join carrying the cluster CA) with an endpoint gets one. why says
// why a control-plane host gets none; it is empty for other hosts.
func apiForwardOf(b *kubeadmBoot, nodeIP string) (f apiForward, why string) {
	if b == nil || (b.join && b.ca == nil) {
		return apiForward{}, ""
	}
	if b.endpoint == "" {
		return apiForward{}, "the user-data names no API server"
	}
	addr, err := netip.ParseAddr(nodeIP)
	if err != nil {
		return apiForward{}, "the host has no address (node-ip, or a NIC's IP)"
	}
	addr = addr.Unmap()
	u, err := url.Parse(b.endpoint)
	if err != nil || u.Host == "" {
		return apiForward{}, "the API server URL has no host"
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return apiForward{}, "the API server URL has no port"
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Unmap() == addr && port == strconv.Itoa(HostAPIPort) {
		return apiForward{}, "the API server is the host's own port"
	}
	return apiForward{addr: addr, backend: u.Host, endpoint: b.endpoint}, ""
}

// peerAllowed reports whether a connection from peer may be forwarded.
func peerAllowed(allow []netip.Prefix, peer net.Addr) bool {
	ap, err := netip.ParseAddrPort(peer.String())
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// setAPIForward makes f (none: no port) what host h should serve and
// hands it to the host's API port worker, started when needed. Without
// Options.HostAPIServers it does nothing. Called with s.mu held.
func (s *Server) setAPIForward(h *hostEntry, f apiForward) {
	if !s.opts.HostAPIServers {
		return
	}
	st := &h.st
	st.apiWant = f
	switch {
	case st.apiWorker:
		select {
		case h.apiKick <- struct{}{}:
		default: // a kick is pending
		}
	case !f.none() && !s.closed:
		st.apiWorker = true
		s.apiWG.Add(1)
		go s.runAPIPort(h)
	}
}

// apiBoot sets the API server port of a host that just booted from a
// config drive with data d. Called with s.mu held.
func (s *Server) apiBoot(h *hostEntry, d *driveData) {
	if !s.opts.HostAPIServers || d == nil {
		return
	}
	f, why := apiForwardOf(d.boot, h.st.node.ip)
	if why != "" {
		s.logger.Printf("%s: no API server port: %s", h.Name, why)
	}
	if !f.none() {
		f.gen = h.st.gen
	}
	s.setAPIForward(h, f)
}

// runAPIPort makes host h's API server port what the host should serve,
// one change at a time, until it should serve none; Close stops it. Only
// it starts and stops the host's forwarders, so a stop (its address
// removed) never overtakes a later start.
func (s *Server) runAPIPort(h *hostEntry) {
	defer s.apiWG.Done()
	var cur *apiForwarder
	var failed apiForward // the last forward that could not start
	for {
		s.mu.Lock()
		want := h.st.apiWant
		if s.closed {
			want = apiForward{}
		}
		if cur == nil && want.none() {
			h.st.apiWorker = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if cur != nil && cur.fwd != want {
			cur.stop()
			cur = nil
		}
		if cur == nil && !want.none() && want != failed {
			var err error
			if cur, err = s.startForwarder(h.Name, want); err != nil {
				s.logger.Printf("%s: cannot serve the API server port %s: %v", h.Name, want.listen(), err)
				failed = want
			}
		}
		select {
		case <-h.apiKick:
		case <-s.ctx.Done():
		}
	}
}

// apiForwarder serves one host's API server port.
type apiForwarder struct {
	s    *Server
	host string
	fwd  apiForward
	ln   net.Listener
	// added: the emulator added fwd.addr to lo, and removes it.
	added  bool
	ctx    context.Context
	cancel context.CancelFunc
	sem    chan struct{}
	wg     sync.WaitGroup

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	refused map[netip.Addr]int
	dropped int // refusals of peers beyond apiMaxRefused
}

// startForwarder adds f's address to lo when this machine lacks it and
// serves f until stop.
func (s *Server) startForwarder(host string, f apiForward) (*apiForwarder, error) {
	fw := &apiForwarder{s: s, host: host, fwd: f, sem: make(chan struct{}, apiMaxConns),
		conns: map[net.Conn]struct{}{}, refused: map[netip.Addr]int{}}
	local, err := localAddr(f.addr)
	if err != nil {
		return nil, err
	}
	if !local {
		if err := ipAddr(s.ctx, "add", f.addr); err != nil {
			return nil, err
		}
		fw.added = true
	}
	lc := net.ListenConfig{KeepAlive: apiKeepAlive}
	fw.ln, err = lc.Listen(s.ctx, "tcp", f.listen())
	if err != nil {
		fw.removeAddr()
		return nil, err
	}
	fw.ctx, fw.cancel = context.WithCancel(s.ctx)
	s.logger.Printf("%s: API server port %s forwarded to %s", host, f.listen(), f.endpoint)
	fw.wg.Add(1)
	go fw.accept()
	return fw, nil
}

// localAddr reports whether a is one of this machine's addresses.
func localAddr(a netip.Addr) (bool, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false, fmt.Errorf("listing this machine's addresses: %w", err)
	}
	for _, ia := range addrs {
		if n, ok := ia.(*net.IPNet); ok {
			if b, ok := netip.AddrFromSlice(n.IP); ok && b.Unmap() == a {
				return true, nil
			}
		}
	}
	return false, nil
}

// ipAddr adds (op "add") or removes ("del") a as a host address on lo.
func ipAddr(ctx context.Context, op string, a netip.Addr) error {
	ctx, cancel := context.WithTimeout(ctx, apiExecTimeout)
	defer cancel()
	args := []string{"addr", op, netip.PrefixFrom(a, a.BitLen()).String(), "dev", "lo"}
	if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// accept forwards each allowed connection, at most apiMaxConns at once.
func (fw *apiForwarder) accept() {
	defer fw.wg.Done()
	for {
		select {
		case fw.sem <- struct{}{}:
		case <-fw.ctx.Done():
			return
		}
		c, err := fw.ln.Accept()
		if err != nil {
			<-fw.sem
			if errors.Is(err, net.ErrClosed) || fw.ctx.Err() != nil {
				return
			}
			fw.s.logger.Printf("%s: API server port %s: %v", fw.host, fw.fwd.listen(), err)
			select { // such as too many open files: let some close
			case <-time.After(100 * time.Millisecond):
			case <-fw.ctx.Done():
				return
			}
			continue
		}
		if !peerAllowed(fw.s.hostAPIAllow(), c.RemoteAddr()) {
			fw.refuse(c)
			<-fw.sem
			continue
		}
		if !fw.track(c) {
			<-fw.sem
			return
		}
		fw.wg.Add(1)
		go func() {
			defer fw.wg.Done()
			defer func() { <-fw.sem }()
			fw.forward(c)
		}()
	}
}

// refuse closes a connection of a peer not allowed; the first of each
// peer is logged (before the close, so the peer sees the close after).
func (fw *apiForwarder) refuse(c net.Conn) {
	defer func() { _ = c.Close() }() // refused: nothing was read or written
	ap, _ := netip.ParseAddrPort(c.RemoteAddr().String())
	peer := ap.Addr().Unmap()
	fw.mu.Lock()
	n, seen := fw.refused[peer]
	first := false
	switch {
	case seen:
		fw.refused[peer] = n + 1
	case len(fw.refused) < apiMaxRefused:
		fw.refused[peer], first = 1, true
	default:
		fw.dropped++
	}
	fw.mu.Unlock()
	if first {
		fw.s.logger.Printf("%s: API server port %s: connection from %s refused: not an allowed network", fw.host, fw.fwd.listen(), peer)
	}
}

// track records a live connection, so stop can close it; false once
// stopped (c is closed).
func (fw *apiForwarder) track(c net.Conn) bool {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.ctx.Err() != nil {
		_ = c.Close() // stopped: nothing was read or written
		return false
	}
	fw.conns[c] = struct{}{}
	return true
}

func (fw *apiForwarder) untrack(c net.Conn) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	delete(fw.conns, c)
}

// forward copies bytes between c and a new connection to the backend
// until either side closes, then closes both.
func (fw *apiForwarder) forward(c net.Conn) {
	defer fw.untrack(c)
	defer func() { _ = c.Close() }() // a proxy: the peers see the close
	d := net.Dialer{Timeout: apiDialTimeout, KeepAlive: apiKeepAlive}
	b, err := d.DialContext(fw.ctx, "tcp", fw.fwd.backend)
	if err != nil {
		return // the client sees the close, as with an API server down
	}
	if !fw.track(b) {
		return
	}
	defer fw.untrack(b)
	defer func() { _ = b.Close() }() // a proxy: the peers see the close
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
	<-done
	_ = c.Close() // either side closed: close both, which ends the other copy
	_ = b.Close()
	<-done
}

// stop closes the listener and the live connections, waits for them, and
// removes the address the forwarder added.
func (fw *apiForwarder) stop() {
	fw.mu.Lock()
	fw.cancel()
	for c := range fw.conns {
		_ = c.Close() // stopping: the peers see the close
	}
	refused, dropped := 0, fw.dropped
	for _, n := range fw.refused {
		refused += n
	}
	fw.mu.Unlock()
	_ = fw.ln.Close() // only accepts: nothing to flush
	fw.wg.Wait()
	if refused+dropped > 0 {
		fw.s.logger.Printf("%s: API server port %s closed (%d connections refused)", fw.host, fw.fwd.listen(), refused+dropped)
	} else {
		fw.s.logger.Printf("%s: API server port %s closed", fw.host, fw.fwd.listen())
	}
	fw.removeAddr()
}

// removeAddr removes the address the forwarder added to lo, if it did;
// after Close too.
func (fw *apiForwarder) removeAddr() {
	if !fw.added {
		return
	}
	if err := ipAddr(context.Background(), "del", fw.fwd.addr); err != nil {
		fw.s.logger.Printf("%s: removing %s from lo: %v", fw.host, fw.fwd.addr, err)
		return
	}
	fw.added = false
}

// hostAPIAllow is Options.HostAPIAllow, else DefaultHostAPIAllow.
func (s *Server) hostAPIAllow() []netip.Prefix {
	if len(s.opts.HostAPIAllow) > 0 {
		return s.opts.HostAPIAllow
	}
	return DefaultHostAPIAllow
}
