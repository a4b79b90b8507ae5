// Package ipaagenttest is a test double of Ironic's two ramdisk endpoints
// (GET /v1/lookup, POST /v1/heartbeat/{node}), answering as Ironic's
// ramdisk controller does, and a client of the agent's command API as
// Ironic's agent client drives it, for tests of the deploy agent and of
// the hosts that run it.
package ipaagenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/httplimit"
)

// Heartbeat is one heartbeat Ironic accepted.
type Heartbeat struct {
	CallbackURL, Token, Version string
}

// Ironic is the double.
type Ironic struct {
	// URL is the API's base URL.
	URL string
	// Node is the node's UUID, Token its agent token.
	Node, Token string
	// HeartbeatTimeout is the lookup config's heartbeat_timeout (s).
	HeartbeatTimeout int

	macs   []string
	client *http.Client
	mu     sync.Mutex
	beats  []Heartbeat
	bad    []string
	// once, handed: TokenOnce; hold: HoldLookups; lookups, abandoned:
	// lookups answered, and those whose client had gone.
	once, handed       bool
	hold               <-chan struct{}
	lookups, abandoned int
}

// TokenOnce makes the double hand the token out as Ironic's conductor
// does: to the first lookup only; later lookups get it masked ("******").
// Call it before an agent looks up.
func (f *Ironic) TokenOnce() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.once = true
}

// HoldLookups holds the answer of each lookup until release is closed, as
// a loaded Ironic that is slow to answer: the token is taken (TokenOnce)
// when the lookup arrives, so a client that gives up before the answer
// lost it. Call it before an agent looks up.
func (f *Ironic) HoldLookups(release <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = release
}

// Lookups returns how many lookups were answered, and how many of those
// had been given up by their client before the answer.
func (f *Ironic) Lookups() (answered, abandoned int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups, f.abandoned
}

// New starts a double knowing one node with these MACs.
func New(t testing.TB, macs ...string) *Ironic {
	t.Helper()
	f := &Ironic{Node: "6f0c8a4e-2b1d-4c7e-9a35-0d9b8e2f1a77", Token: "tok-" + strconv.FormatInt(time.Now().UnixNano(), 36), HeartbeatTimeout: 300,
		client: httplimit.NewClient(httplimit.ClientOptions{Timeout: time.Minute})}
	for _, m := range macs {
		f.macs = append(f.macs, strings.ToLower(m))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/lookup", f.lookup)
	mux.HandleFunc("POST /v1/heartbeat/{node}", f.heartbeat)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func ironicError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	inner, _ := json.Marshal(map[string]string{"faultstring": msg})
	_ = json.NewEncoder(w).Encode(map[string]string{"error_message": string(inner)})
}

// apiVersionOK: the ramdisk endpoints need API 1.22, agent_token 1.62.
func apiVersionOK(r *http.Request, minor int) bool {
	v := r.Header.Get("X-OpenStack-Ironic-API-Version")
	major, m, ok := strings.Cut(v, ".")
	n, err := strconv.Atoi(m)
	return ok && major == "1" && err == nil && n >= minor
}

func (f *Ironic) lookup(w http.ResponseWriter, r *http.Request) {
	if !apiVersionOK(r, 22) {
		ironicError(w, http.StatusNotFound, "Not Found")
		return
	}
	var found bool
	for _, a := range strings.Split(r.URL.Query().Get("addresses"), ",") {
		found = found || slices.Contains(f.macs, strings.ToLower(strings.TrimSpace(a)))
	}
	if !found {
		ironicError(w, http.StatusNotFound, "Not Found")
		return
	}
	f.mu.Lock()
	token := f.Token
	if f.once && f.handed {
		token = "******"
	}
	f.handed = true
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		<-hold
	}
	f.mu.Lock()
	f.lookups++
	if r.Context().Err() != nil {
		f.abandoned++
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"node": map[string]any{"uuid": f.Node, "properties": map[string]any{}, "instance_info": map[string]any{}, "driver_internal_info": map[string]any{}},
		"config": map[string]any{"heartbeat_timeout": f.HeartbeatTimeout, "agent_token": token, "agent_token_required": true,
			"metrics": map[string]any{"backend": "noop"}},
	})
}

func (f *Ironic) heartbeat(w http.ResponseWriter, r *http.Request) {
	var body map[string]string
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		ironicError(w, http.StatusBadRequest, "Invalid body")
		return
	}
	var why string
	switch {
	case !apiVersionOK(r, 62):
		why = "API version below 1.62"
	case r.PathValue("node") != f.Node:
		why = "Node " + r.PathValue("node") + " could not be found"
	case body["callback_url"] == "":
		why = "callback_url missing"
	case body["agent_version"] == "":
		why = "Agent did not transmit a version"
	case body["agent_token"] != f.Token:
		why = "Invalid or missing agent token received."
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if why != "" {
		f.bad = append(f.bad, why)
		ironicError(w, http.StatusBadRequest, why)
		return
	}
	f.beats = append(f.beats, Heartbeat{CallbackURL: body["callback_url"], Token: body["agent_token"], Version: body["agent_version"]})
	w.WriteHeader(http.StatusAccepted)
}

// Heartbeats returns the heartbeats accepted so far.
func (f *Ironic) Heartbeats() []Heartbeat {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.beats)
}

// Refused returns why heartbeats were refused.
func (f *Ironic) Refused() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.bad)
}

// WaitHeartbeat polls until a heartbeat arrived and returns the first.
func (f *Ironic) WaitHeartbeat(t testing.TB, within time.Duration) Heartbeat {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if b := f.Heartbeats(); len(b) > 0 {
			return b[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no heartbeat within %s (refused: %v)", within, f.Refused())
	return Heartbeat{}
}

// Result is a command result as the agent answers it.
type Result struct {
	ID            string          `json:"id"`
	CommandName   string          `json:"command_name"`
	CommandStatus string          `json:"command_status"`
	CommandError  *CommandError   `json:"command_error"`
	CommandResult json.RawMessage `json:"command_result"`
}

// CommandError is a failed command's error.
type CommandError struct {
	Type, Message, Details string
	Code                   int
}

// Command posts a command to the agent at callback (POST
// {callback}/v1/commands/?wait=...&agent_token=...), as Ironic does, and
// returns the HTTP status and the result.
func (f *Ironic) Command(ctx context.Context, callback, name string, params any, wait bool) (int, Result, error) {
	body, err := json.Marshal(map[string]any{"name": name, "params": params})
	if err != nil {
		return 0, Result{}, err
	}
	q := url.Values{"wait": {strconv.FormatBool(wait)}, "agent_token": {f.Token}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, callback+"/v1/commands/?"+q.Encode(), bytes.NewReader(body))
	if err != nil {
		return 0, Result{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	return f.do(req)
}

func (f *Ironic) do(req *http.Request) (int, Result, error) {
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, Result{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, Result{}, err
	}
	var res Result
	if resp.StatusCode < 300 {
		err = json.Unmarshal(data, &res)
	}
	return resp.StatusCode, res, err
}

// Commands lists the agent's command results (GET /v1/commands/).
func (f *Ironic) Commands(ctx context.Context, callback string) ([]Result, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, callback+"/v1/commands/?agent_token="+url.QueryEscape(f.Token), nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var out struct {
		Commands []Result `json:"commands"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /v1/commands/: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	return out.Commands, nil
}

// Step runs execute_<kind>_step of step (with args) and polls the
// command list until its result is no longer RUNNING, as Ironic does on
// each heartbeat.
func (f *Ironic) Step(ctx context.Context, callback, kind, step string, args map[string]any, nodeProps map[string]any) (Result, error) {
	params := map[string]any{
		"step":  map[string]any{"interface": "deploy", "step": step, "args": args, "priority": 0},
		"node":  map[string]any{"uuid": f.Node, "properties": nodeProps},
		"ports": []any{},
	}
	status, res, err := f.Command(ctx, callback, kind+".execute_"+kind+"_step", params, false)
	if err != nil {
		return res, err
	}
	if status != http.StatusOK {
		return res, fmt.Errorf("execute_%s_step %s: HTTP %d", kind, step, status)
	}
	for {
		cmds, err := f.Commands(ctx, callback)
		if err != nil {
			return Result{}, err
		}
		for _, c := range cmds {
			if c.ID == res.ID && c.CommandStatus != "RUNNING" {
				return c, nil
			}
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
