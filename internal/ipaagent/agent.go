package ipaagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/airshipit/airship-go/internal/httplimit"
)

// Version is the agent_version the agent heartbeats with: IPA's of the
// Ironic release the protocol was read from (Zed).
const Version = "9.0.0"

// APITimeout bounds each call of NewAPIClient's client to Ironic's API.
// It is long on purpose: Ironic hands a node's agent token out once, to
// the first lookup it answers (later lookups get the token masked,
// "******"), and an agent that gives up on an answer Ironic is still
// working on has lost the token for good; Ironic then refuses its
// heartbeats and the node waits out its callback timeout (30 minutes by
// default). Under load (hundreds of hosts on one Ironic) a lookup's
// answer has taken over 30 s.
const APITimeout = 5 * time.Minute

// maskedToken is the agent_token of a lookup's answer once Ironic handed
// the token out to an earlier lookup.
const maskedToken = "******"

// NewAPIClient returns the default client of Ironic's API
// (Config.HTTPClient): httplimit's, with APITimeout. A caller running many
// agents shares one.
func NewAPIClient() *http.Client {
	return httplimit.NewClient(httplimit.ClientOptions{Timeout: APITimeout})
}

// apiVersion is the Ironic API microversion of lookup and heartbeat
// requests: agent_token (1.62) and agent_verify_ca (1.68).
const apiVersion = "1.68"

// Disk is one of the host's disks, a file.
type Disk struct {
	// Name is the device name (sda); a root_device name hint matches it
	// with or without /dev/.
	Name string
	// Path is the file holding the disk; made, sparse, on first write.
	Path string
	// Size is the disk's size in bytes.
	Size int64
	// Serial and Model match root device hints.
	Serial, Model string
	// Rotational is a hard disk rather than an SSD.
	Rotational bool
}

// Config is what an agent runs with.
type Config struct {
	// APIURL is Ironic's API (the deploy ISO's ipa-api-url).
	APIURL string
	// MACs are the host's NICs' addresses, for the lookup.
	MACs []string
	// Disks are the host's disks.
	Disks []Disk
	// HTTPClient talks to Ironic's API; default: NewAPIClient's (5
	// minutes, 32 MiB). A shorter timeout risks losing the agent token
	// (see APITimeout).
	HTTPClient *http.Client
	// ImageClient downloads images and config drives; default: an
	// httplimit client of one hour, capped at the largest disk's size.
	ImageClient *http.Client
	// Listen is the address of the agent's API; default 127.0.0.1:0.
	Listen string
	// Timeouts of the agent's API server (httplimit's defaults).
	Timeouts httplimit.ServerTimeouts
	// LookupInterval is how often a failed lookup is retried (default 2 s);
	// HeartbeatInterval overrides a third of Ironic's heartbeat_timeout.
	LookupInterval, HeartbeatInterval time.Duration
	// NoHeartbeat makes the agent look up and never heartbeat (a fault).
	NoHeartbeat bool
	// PowerOff and Reboot are what the host does on standby.power_off
	// and standby.run_image; called on a goroutine of their own.
	PowerOff, Reboot func()
	// DiskChanged is called after a disk was written or erased.
	DiskChanged func(disk string)
	// Logf receives one line per lookup, command and failure (a failure
	// repeated, such as a lookup Ironic refuses until the node waits for
	// its agent, once).
	Logf func(format string, args ...any)
}

// Agent is a running agent.
type Agent struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	srv    *http.Server
	url    string
	wg     sync.WaitGroup

	mu       sync.Mutex
	node     string
	token    string
	timeout  time.Duration
	commands []*command
	stopBeat bool
	force    chan struct{}
	beatDone chan struct{}
	lastErr  string
	beats    int
	written  *Disk
}

// Start serves the agent's API and starts the lookup and heartbeats; Stop
// (or the end of ctx) ends them.
func Start(ctx context.Context, cfg Config) (*Agent, error) {
	if cfg.APIURL == "" {
		return nil, errors.New("ipa agent: no Ironic API URL")
	}
	if len(cfg.MACs) == 0 {
		return nil, errors.New("ipa agent: no MAC address to look the node up by")
	}
	cfg = withDefaults(cfg)
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("ipa agent: listening on %s: %w", cfg.Listen, err)
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &Agent{cfg: cfg, ctx: actx, cancel: cancel, url: "http://" + ln.Addr().String(), force: make(chan struct{}, 1), beatDone: make(chan struct{})}
	a.srv = httplimit.NewServer(a.routes(), cfg.Timeouts)
	a.srv.BaseContext = func(net.Listener) context.Context { return actx }
	a.wg.Add(2)
	go func() {
		defer a.wg.Done()
		if err := a.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.cfg.Logf("serving: %v", err)
		}
	}()
	go func() {
		defer a.wg.Done()
		a.run()
	}()
	go func() {
		select {
		case <-ctx.Done():
			a.Stop()
		case <-actx.Done():
		}
	}()
	return a, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = NewAPIClient()
	}
	if cfg.ImageClient == nil {
		maxSize := int64(0)
		for _, d := range cfg.Disks {
			maxSize = max(maxSize, d.Size)
		}
		cfg.ImageClient = httplimit.NewClient(httplimit.ClientOptions{Timeout: time.Hour, MaxResponseBytes: max(maxSize, 64<<20)})
	}
	if cfg.LookupInterval <= 0 {
		cfg.LookupInterval = 2 * time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
	return cfg
}

// URL is the agent's callback URL (http://127.0.0.1:PORT).
func (a *Agent) URL() string { return a.url }

// Node is the UUID of the node the lookup found; "" before.
func (a *Agent) Node() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.node
}

// Heartbeats counts the heartbeats Ironic accepted.
func (a *Agent) Heartbeats() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.beats
}

// Stop ends the heartbeats and the API server, and waits for them (not for
// a command still running: its disk writes end with the context).
func (a *Agent) Stop() {
	a.cancel()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := a.srv.Shutdown(sctx); err != nil {
		_ = a.srv.Close()
	}
	a.wg.Wait()
}

// Heartbeating reports whether the agent may still heartbeat: false once
// it was stopped, ran a power-off or reboot command, or was told not to
// heartbeat (NoHeartbeat) and looked its node up.
func (a *Agent) Heartbeating() bool {
	select {
	case <-a.beatDone:
		return false
	default:
		return true
	}
}

// run looks the node up, then heartbeats until stopped.
func (a *Agent) run() {
	defer close(a.beatDone)
	for !a.lookup() {
		if !a.sleep(a.cfg.LookupInterval) {
			return
		}
	}
	if a.cfg.NoHeartbeat {
		a.cfg.Logf("not heartbeating (fault)")
		return
	}
	for {
		a.mu.Lock()
		stop, interval := a.stopBeat, a.cfg.HeartbeatInterval
		if interval <= 0 {
			interval = a.timeout / 3
		}
		a.mu.Unlock()
		if stop {
			return
		}
		a.heartbeat()
		if !a.sleep(interval, a.force) {
			return
		}
	}
}

// sleep waits d, or until wake (when not nil) fires; false once stopped.
func (a *Agent) sleep(d time.Duration, wake ...chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	var w chan struct{}
	if len(wake) > 0 {
		w = wake[0]
	}
	select {
	case <-a.ctx.Done():
		return false
	case <-t.C:
		return true
	case <-w:
		return true
	}
}

// forceHeartbeat heartbeats now, as IPA does once a command finished, so
// Ironic moves on without waiting for the next interval.
func (a *Agent) forceHeartbeat() {
	select {
	case a.force <- struct{}{}:
	default:
	}
}

// lookupAnswer is what GET /v1/lookup answers.
type lookupAnswer struct {
	Node struct {
		UUID string `json:"uuid"`
	} `json:"node"`
	Config struct {
		AgentToken       string  `json:"agent_token"`
		HeartbeatTimeout float64 `json:"heartbeat_timeout"`
	} `json:"config"`
}

func (a *Agent) lookup() bool {
	q := url.Values{"addresses": {strings.Join(a.cfg.MACs, ",")}}
	var ans lookupAnswer
	if err := a.call(http.MethodGet, "/v1/lookup?"+q.Encode(), nil, &ans); err != nil {
		a.logOnce(fmt.Sprintf("lookup by %s: %v (retrying every %s)", strings.Join(a.cfg.MACs, ","), err, a.cfg.LookupInterval))
		return false
	}
	if ans.Node.UUID == "" {
		a.cfg.Logf("lookup by %s: no node uuid in the answer", strings.Join(a.cfg.MACs, ","))
		return false
	}
	if ans.Config.AgentToken == maskedToken {
		// Looking up again cannot help: Ironic keeps the token it handed
		// out until the node leaves this wait state. The mask is kept as
		// the token, so the agent's API still refuses commands without
		// the real one.
		a.cfg.Logf("lookup by %s: Ironic handed node %s's agent token out before (to a lookup whose answer was lost, or to another agent): heartbeats will be refused until Ironic's callback timeout ends this wait", strings.Join(a.cfg.MACs, ","), ans.Node.UUID)
	}
	timeout := time.Duration(ans.Config.HeartbeatTimeout * float64(time.Second))
	if timeout <= 0 {
		timeout = 300 * time.Second
	}
	a.mu.Lock()
	a.node, a.token, a.timeout = ans.Node.UUID, ans.Config.AgentToken, timeout
	a.mu.Unlock()
	a.cfg.Logf("looked up: node %s, heartbeat timeout %s, agent API %s", ans.Node.UUID, timeout, a.url)
	return true
}

func (a *Agent) heartbeat() {
	a.mu.Lock()
	node, token := a.node, a.token
	a.mu.Unlock()
	body := map[string]string{"callback_url": a.url, "agent_version": Version}
	if token != "" {
		body["agent_token"] = token
	}
	if err := a.call(http.MethodPost, "/v1/heartbeat/"+url.PathEscape(node), body, nil); err != nil {
		a.logOnce(fmt.Sprintf("heartbeat of node %s: %v", node, err))
		return
	}
	a.mu.Lock()
	a.beats++
	a.lastErr = ""
	a.mu.Unlock()
}

// logOnce logs a failure unless it is the one logged last.
func (a *Agent) logOnce(msg string) {
	a.mu.Lock()
	same := msg == a.lastErr
	a.lastErr = msg
	a.mu.Unlock()
	if !same {
		a.cfg.Logf("%s", msg)
	}
}

// call sends one request to Ironic's API and decodes its JSON answer.
func (a *Agent) call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encoding the request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(a.ctx, method, a.cfg.APIURL+path, rd)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", apiVersion)
	resp, err := a.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, strings.SplitN(path, "?", 2)[0], err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, strings.SplitN(path, "?", 2)[0], err)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %s: %s", method, strings.SplitN(path, "?", 2)[0], resp.Status, faultString(data))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, strings.SplitN(path, "?", 2)[0], err)
	}
	return nil
}

// faultString is the error message of an Ironic error answer, short.
func faultString(data []byte) string {
	var e struct {
		ErrorMessage string `json:"error_message"`
	}
	msg := string(data)
	if json.Unmarshal(data, &e) == nil && e.ErrorMessage != "" {
		var inner struct {
			Faultstring string `json:"faultstring"`
		}
		msg = e.ErrorMessage
		if json.Unmarshal([]byte(e.ErrorMessage), &inner) == nil && inner.Faultstring != "" {
			msg = inner.Faultstring
		}
	}
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}
