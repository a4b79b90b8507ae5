package emulator

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/ipaagent"
)

// Options are how a Server runs, beside what it serves.
type Options struct {
	// Target is the cluster where booted hosts get their kwok Nodes
	// unless their user-data names a cluster the emulator has credentials
	// for (see the package documentation). TargetConfig is the same given
	// as a REST config. Neither: only hosts whose user-data names such a
	// cluster get Nodes.
	Target       client.Client
	TargetConfig *rest.Config
	// Log receives one line per state change (power, media, boot, Node)
	// and per refused login. Never a password or user-data.
	Log io.Writer
	// TLSCertFile and TLSKeyFile make Start serve HTTPS.
	TLSCertFile, TLSKeyFile string
	// Timeouts of Start's server; zero fields take httplimit's defaults
	// (header 10 s, request 60 s, answer 120 s, idle 120 s).
	Timeouts httplimit.ServerTimeouts
	// StateDir holds the hosts' disk files (<StateDir>/<host>/<disk>.img);
	// default: a new directory under os.TempDir, removed by Close.
	StateDir string
	// HeartbeatInterval overrides the deploy agents' heartbeat interval
	// (default: a third of Ironic's heartbeat_timeout).
	HeartbeatInterval time.Duration
	// AgentClient is the deploy agents' client of Ironic's API, shared by
	// them; default: ipaagent.NewAPIClient's (5 minutes, 32 MiB: a
	// client that gives up on a slow lookup loses the agent token, see
	// ipaagent.APITimeout).
	AgentClient *http.Client
	// HostAPIServers makes each booted control-plane host (kubeadm init,
	// or a join carrying the cluster CA) serve its API server port,
	// HostAPIPort on its Node's InternalIP, forwarded to the API server
	// its user-data names: a load balancer in front of the hosts reaches
	// the cluster through them, and a host powered off leaves the
	// rotation. An address this machine lacks is added to lo (and
	// removed after): that needs root.
	HostAPIServers bool
	// HostAPIAllow are the networks whose connections the API server
	// ports forward; others are closed at once. Default:
	// DefaultHostAPIAllow.
	HostAPIAllow []netip.Prefix
}

// HostState is what a host's BMC has been told and what the host did.
type HostState struct {
	PowerOn      bool
	BootOverride BootOverride
	Media        Media
	// Booted is true once a powered-on host has booted (BootDelay after
	// power-on): from its virtual CD, or from a disk holding a config
	// drive.
	Booted bool
	// BootedFrom is "Cd" or "Hdd" while Booted.
	BootedFrom string
	// Resets counts accepted ComputerSystem.Reset requests.
	Resets int
	// Node names the host's Node while the host has one: since it booted
	// from a disk's config drive (until that disk is erased or
	// overwritten) or from a live ISO that is a config drive (until any
	// disk is written).
	Node string
	// NodeCluster is the API server URL of the cluster of that Node when
	// the host's user-data named it; empty for the target cluster
	// (Options.Target), or none.
	NodeCluster string
	// NodeDisk names the disk whose config drive the Node came from; empty
	// for a Node of a live ISO, or none.
	NodeDisk string
	// Agent is the URL of the deploy agent the host runs, while it runs
	// one (booted from a deploy ISO).
	Agent string
}

// BootOverride is the system's Boot property.
type BootOverride struct {
	// Target is BootSourceOverrideTarget: None, Pxe, Cd or Hdd.
	Target string
	// Enabled is BootSourceOverrideEnabled: Disabled, Once or Continuous.
	Enabled string
	// Mode is BootSourceOverrideMode: UEFI or Legacy.
	Mode string
}

// Media is the host's virtual CD.
type Media struct {
	Inserted       bool
	Image          string
	WriteProtected bool
	TransferMethod string
}

// Fault makes a host's BMC misbehave, for tests.
type Fault struct {
	// Unreachable closes the connection of every request for the host
	// (503 when the connection cannot be taken over, as with HTTP/2).
	Unreachable bool
	// Delay holds every request for the host this long first.
	Delay time.Duration
	// FailResets answers ComputerSystem.Reset with 500.
	FailResets bool
	// WrongCredentials answers 401 to every request for the host, even
	// with the right credentials.
	WrongCredentials bool
	// NoHeartbeat makes the deploy agent the host runs from a deploy ISO
	// look its node up and never heartbeat (set it before the host boots).
	NoHeartbeat bool
	// PowerLag makes the BMC slow to act: a ComputerSystem.Reset is
	// answered and counted at once but applied PowerLag later, the system
	// reporting its old PowerState meanwhile.
	PowerLag time.Duration
}

// Server is a running emulator.
type Server struct {
	cfg     Config
	opts    Options
	hosts   []*hostEntry
	byName  map[string]*hostEntry
	valid   map[string]bool // credential keys that open at least one host
	handler http.Handler
	logger  *lineLogger
	tlsCert *tls.Certificate
	nodes   *nodeSyncer
	// target is Options.Target (or a client of TargetConfig), nil without.
	target client.Client
	// clusters are the clusters hosts' user-data named, with credentials.
	clusters *clusterSet
	// state is the state directory (removed by Close when removeState).
	state       string
	removeState bool
	// ctx ends with Close: media fetches, deploy agents.
	ctx         context.Context
	cancel      context.CancelFunc
	mediaClient *http.Client
	agentClient *http.Client
	media       mediaCache
	// apiWG counts the hosts' runAPIPort workers.
	apiWG sync.WaitGroup

	mu          sync.Mutex
	sessions    map[string]*session // by token
	sessionIDs  map[string]*session // by id
	nextSession int
	lastSweep   time.Time // of expired sessions
	baseURL     string
	started     bool
	closed      bool
	closeOnce   sync.Once
}

// hostEntry is a host and its state; st is guarded by Server.mu.
type hostEntry struct {
	*host
	st hostStatus
	// apiKick wakes the host's runAPIPort (Options.HostAPIServers).
	apiKick chan struct{}
}

// New checks cfg and returns a server for it. Call Start to serve, or use
// Handler with a server of your own; Close (or the end of Start's
// context) stops its timers and Node updates.
func New(cfg Config, opts Options) (*Server, error) {
	hosts, err := normalize(cfg)
	if err != nil {
		return nil, fmt.Errorf("emulator config: %w", err)
	}
	s := &Server{
		cfg:        cfg,
		opts:       opts,
		byName:     make(map[string]*hostEntry, len(hosts)),
		valid:      map[string]bool{},
		logger:     &lineLogger{w: opts.Log},
		sessions:   map[string]*session{},
		sessionIDs: map[string]*session{},
		clusters:   newClusterSet(),
	}
	for _, h := range hosts {
		e := &hostEntry{host: h, st: hostStatus{override: BootOverride{Target: "None", Enabled: "Disabled", Mode: "UEFI"}}}
		if opts.HostAPIServers {
			e.apiKick = make(chan struct{}, 1)
		}
		s.hosts = append(s.hosts, e)
		s.byName[h.Name] = e
		s.valid[h.credsKey] = true
	}
	for _, p := range opts.HostAPIAllow {
		if !p.IsValid() {
			return nil, fmt.Errorf("the API server ports' allowed networks: %q is no CIDR", p)
		}
	}
	if (opts.TLSCertFile == "") != (opts.TLSKeyFile == "") {
		return nil, errors.New("the TLS certificate and key go together")
	}
	if opts.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.TLSCertFile, opts.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("TLS certificate %s: %w", opts.TLSCertFile, err)
		}
		s.tlsCert = &cert
	}
	s.target = opts.Target
	if s.target == nil && opts.TargetConfig != nil {
		s.target, err = client.New(opts.TargetConfig, client.Options{})
		if err != nil {
			return nil, fmt.Errorf("target cluster client: %w", err)
		}
	}
	if s.state, s.removeState, err = stateDir(opts); err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mediaClient = newMediaClient()
	s.agentClient = opts.AgentClient
	if s.agentClient == nil {
		s.agentClient = ipaagent.NewAPIClient()
	}
	s.logger.Printf("hosts' disk files under %s", s.state)
	s.nodes = newNodeSyncer(s)
	s.handler = s.routes()
	return s, nil
}

// Handler serves the Redfish API.
func (s *Server) Handler() http.Handler { return s.handler }

// Hosts returns the hosts served, defaults filled in, in the config's order.
func (s *Server) Hosts() []Host {
	out := make([]Host, len(s.hosts))
	for i, h := range s.hosts {
		c := h.Host
		c.Labels = copyMap(h.Labels)
		c.NICs = append([]NIC(nil), h.NICs...)
		c.Disks = append([]Disk(nil), h.Disks...)
		out[i] = c
	}
	return out
}

// Credentials returns the username and password of a host's BMC.
func (s *Server) Credentials(host string) (username, password string, ok bool) {
	h, ok := s.byName[host]
	if !ok {
		return "", "", false
	}
	username, password = s.cfg.Username, s.cfg.Password
	if h.Username != "" {
		username = h.Username
	}
	if h.Password != "" {
		password = h.Password
	}
	return username, password, true
}

// Start serves on addr (such as 127.0.0.1:0) until ctx ends and returns
// the base URL (http://127.0.0.1:PORT, https with TLS). Beyond loopback it
// serves only with TLS: credentials and user-data cross the network.
func (s *Server) Start(ctx context.Context, addr string) (string, error) {
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return "", errors.New("the emulator is already started or closed")
	}
	s.started = true
	s.mu.Unlock()
	if err := CheckListen(addr, s.tlsCert != nil); err != nil {
		return "", err
	}
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("listening on %s: %w", addr, err)
	}
	scheme := "http"
	if s.tlsCert != nil {
		scheme = "https"
		ln = tls.NewListener(ln, &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{*s.tlsCert}})
	}
	tcp := ln.Addr().(*net.TCPAddr)
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	base := scheme + "://" + net.JoinHostPort(host, fmt.Sprint(tcp.Port))
	s.mu.Lock()
	s.baseURL = base
	s.mu.Unlock()
	srv := httplimit.NewServer(s.handler, s.opts.Timeouts)
	srv.ErrorLog = log.New(s.logger, "http: ", 0)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Printf("serving: %v", err)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close() // requests held by a Delay fault
		}
		s.Close()
	}()
	return base, nil
}

// CheckListen refuses an address beyond loopback without TLS.
func CheckListen(addr string, tls bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if tls || IsLoopback(host) {
		return nil
	}
	return fmt.Errorf("listen address %s is not a loopback address: BMC credentials and user-data must not cross the network in clear; serve TLS", addr)
}

// IsLoopback reports whether a host part of a listen address is loopback.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// BaseURL is what Start returned; empty before.
func (s *Server) BaseURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.baseURL
}

// Address is the BareMetalHost spec.bmc.address of a host:
// redfish-virtualmedia+http://127.0.0.1:PORT/redfish/v1/Systems/<host>
// (+https with TLS). Empty before Start or for an unknown host.
func (s *Server) Address(host string) string {
	base := s.BaseURL()
	if base == "" || s.byName[host] == nil {
		return ""
	}
	return "redfish-virtualmedia+" + base + systemsPath + "/" + host
}

// State returns a host's state.
func (s *Server) State(host string) (HostState, bool) {
	h, ok := s.byName[host]
	if !ok {
		return HostState{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &h.st
	out := HostState{
		PowerOn:      st.power,
		BootOverride: st.override,
		Media:        st.media,
		Booted:       st.booted,
		BootedFrom:   st.bootedFrom,
		Resets:       st.resets,
	}
	if st.provisioned {
		out.Node = st.node.name
		out.NodeCluster = st.node.cluster
		out.NodeDisk = st.nodeDisk
	}
	if st.agent != nil {
		out.Agent = st.agent.URL()
	}
	return out, true
}

// SetFault sets (replaces) a host's fault; the zero Fault clears it.
func (s *Server) SetFault(host string, f Fault) {
	h, ok := s.byName[host]
	if !ok {
		return
	}
	s.mu.Lock()
	h.st.fault = f
	s.mu.Unlock()
	s.logger.Printf("%s: fault set: unreachable=%v delay=%s failResets=%v wrongCredentials=%v noHeartbeat=%v powerLag=%s", host, f.Unreachable, f.Delay, f.FailResets, f.WrongCredentials, f.NoHeartbeat, f.PowerLag)
}

// Close stops boot timers, deploy agents, API server ports (removing the
// addresses they added) and Node updates, and removes the state directory
// the server made. Start calls it when its context ends.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		var agents []*ipaagent.Agent
		for _, h := range s.hosts {
			if h.st.timer != nil {
				h.st.timer.Stop()
			}
			if h.st.agent != nil {
				agents = append(agents, h.st.agent)
				h.st.agent = nil
			}
		}
		s.mu.Unlock()
		s.cancel()
		for _, a := range agents {
			a.Stop()
		}
		s.apiWG.Wait()
		s.nodes.stop()
		if s.removeState {
			if err := os.RemoveAll(s.state); err != nil {
				s.logger.Printf("removing the state directory: %v", err)
			}
		}
	})
}

// lineLogger writes whole lines, prefixed, to a writer that may be nil.
type lineLogger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineLogger) Printf(format string, args ...any) {
	if l.w == nil {
		return
	}
	line := "redfish-emulator: " + strings.TrimRight(fmt.Sprintf(format, args...), "\n") + "\n"
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, line)
}

// Write lets the http.Server's error log go through the logger.
func (l *lineLogger) Write(p []byte) (int, error) {
	l.Printf("%s", p)
	return len(p), nil
}
