package ipaagent

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Command statuses.
const (
	statusRunning   = "RUNNING"
	statusSucceeded = "SUCCEEDED"
	statusFailed    = "FAILED"
)

// command is one command's result.
type command struct {
	mu     sync.Mutex
	id     string
	name   string
	status string
	err    *commandError
	result any
	done   chan struct{}
}

// commandError is IPA's serialized RESTError.
type commandError struct {
	Type    string `json:"type"`
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details string `json:"details"`
}

func (c *command) MarshalJSON() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return json.Marshal(map[string]any{
		"id":             c.id,
		"command_name":   c.name,
		"command_status": c.status,
		"command_error":  c.err,
		"command_result": c.result,
	})
}

func (c *command) finish(result any, err error) {
	c.mu.Lock()
	if err != nil {
		c.status = statusFailed
		c.err = &commandError{Type: "CommandExecutionError", Code: 500, Message: "Command execution failed", Details: err.Error()}
	} else {
		c.status, c.result = statusSucceeded, result
	}
	c.mu.Unlock()
	close(c.done)
}

func (a *Agent) routes() http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/v1/commands", "/v1/commands/", "/commands", "/commands/"} {
		// Ironic (up to Zed at least) polls the list without the token.
		mux.HandleFunc("GET "+p, a.listCommands)
		mux.HandleFunc("POST "+p, a.authed(a.runCommand))
	}
	mux.HandleFunc("GET /v1/commands/{id}", a.getCommand)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"name": "Emulated Ironic Python Agent", "default_version": map[string]string{"id": "v1"}})
	})
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"version": Version})
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fault(w http.ResponseWriter, status int, msg string) {
	code := "Client"
	if status >= 500 {
		code = "Server"
	}
	writeJSON(w, status, map[string]string{"faultcode": code, "faultstring": msg})
}

// authed checks the agent_token query parameter once the lookup gave one.
func (a *Agent) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		token := a.token
		a.mu.Unlock()
		if token != "" && subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("agent_token")), []byte(token)) != 1 {
			fault(w, http.StatusUnauthorized, "401 Unauthorized: Token invalid.")
			return
		}
		h(w, r)
	}
}

func (a *Agent) listCommands(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	cmds := append([]*command{}, a.commands...)
	a.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"commands": cmds})
}

func (a *Agent) getCommand(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	var found *command
	for _, c := range a.commands {
		if c.id == r.PathValue("id") {
			found = c
		}
	}
	a.mu.Unlock()
	if found == nil {
		fault(w, http.StatusNotFound, "Not found: The requested URL was not found.")
		return
	}
	if strings.EqualFold(r.URL.Query().Get("wait"), "true") {
		wait(r.Context(), found)
	}
	writeJSON(w, http.StatusOK, found)
}

func wait(ctx context.Context, c *command) {
	select {
	case <-c.done:
	case <-ctx.Done():
	}
}

// commandRequest is the body of POST /v1/commands/.
type commandRequest struct {
	Name   string          `json:"name"`
	Params json.RawMessage `json:"params"`
}

func (a *Agent) runCommand(w http.ResponseWriter, r *http.Request) {
	var req commandRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 128<<20)).Decode(&req); err != nil || req.Name == "" || len(req.Params) == 0 || req.Params[0] != '{' {
		fault(w, http.StatusBadRequest, "400 Bad Request: Missing or invalid name or params")
		return
	}
	h, ok := a.handlers()[req.Name]
	if !ok {
		fault(w, http.StatusBadRequest, fmt.Sprintf("Invalid command: Unknown command: %s", req.Name))
		return
	}
	_, short, _ := strings.Cut(req.Name, ".")
	c := &command{id: newID(), name: short, status: statusRunning, done: make(chan struct{})}
	a.mu.Lock()
	if n := len(a.commands); n > 0 {
		last := a.commands[n-1]
		last.mu.Lock()
		busy := last.status == statusRunning
		last.mu.Unlock()
		if busy {
			a.mu.Unlock()
			fault(w, http.StatusConflict, "Agent is busy: executing command "+last.name)
			return
		}
	}
	a.commands = append(a.commands, c)
	a.mu.Unlock()
	a.cfg.Logf("command %s", req.Name)
	run := func() {
		res, err := h.run(a.ctx, req.Params)
		if err != nil {
			a.cfg.Logf("command %s failed: %v", req.Name, err)
		}
		c.finish(res, err)
		if err == nil && h.after != nil {
			go h.after()
		} else if !h.sync {
			a.forceHeartbeat()
		}
	}
	if h.sync {
		run()
	} else {
		go run()
		if strings.EqualFold(r.URL.Query().Get("wait"), "true") {
			wait(r.Context(), c)
		}
	}
	writeJSON(w, http.StatusOK, c)
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
