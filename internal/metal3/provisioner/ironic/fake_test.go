package ironic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// fakeIronic answers as Ironic does for one node, and records the
// requests that change something ("PUT provision active", "PATCH", ...).
type fakeIronic struct {
	t  *testing.T
	mu sync.Mutex
	// node is the node's JSON fields; nil means no node.
	node map[string]any
	// maxVersion is GET /'s v1 maximum.
	maxVersion string
	// status, when set, answers every /v1 request with it.
	status int
	// fault is the faultstring of the status answers; default "fake failure".
	fault string
	// validate is the validate answer's deploy result.
	validateDeploy bool
	actions        []string
	// roots counts GET / requests; rootStatus, when set, answers them.
	roots      int
	rootStatus int
	bodies     []map[string]any
}

func newFake(t *testing.T, node map[string]any) (*fakeIronic, string) {
	f := &fakeIronic{t: t, node: node, maxVersion: "1.82", validateDeploy: true}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeIronic) record(action string, r *http.Request) map[string]any {
	var body map[string]any
	data, _ := io.ReadAll(r.Body)
	if len(data) > 0 && data[0] == '{' {
		_ = json.Unmarshal(data, &body)
	}
	f.actions = append(f.actions, action)
	f.bodies = append(f.bodies, body)
	return body
}

func (f *fakeIronic) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/" {
		f.roots++
		if f.rootStatus != 0 {
			w.WriteHeader(f.rootStatus)
			return
		}
		_, _ = io.WriteString(w, `{"versions":[{"id":"v1","version":"`+f.maxVersion+`","min_version":"1.1","status":"CURRENT"}]}`)
		return
	}
	if f.status != 0 {
		w.WriteHeader(f.status)
		fault := f.fault
		if fault == "" {
			fault = "fake failure"
		}
		inner, _ := json.Marshal(map[string]string{"faultstring": fault})
		_ = json.NewEncoder(w).Encode(map[string]string{"error_message": string(inner)})
		return
	}
	if got := r.Header.Get("X-OpenStack-Ironic-API-Version"); got != Microversion {
		f.t.Errorf("%s %s: API version %q, want %q", r.Method, r.URL.Path, got, Microversion)
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodGet && len(parts) == 3 && parts[1] == "nodes":
		if f.node == nil || (parts[2] != f.node["uuid"] && parts[2] != f.node["name"]) {
			notFound(w)
			return
		}
		_ = json.NewEncoder(w).Encode(f.node)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/nodes":
		body := f.record("POST node", r)
		body["uuid"] = "11111111-2222-3333-4444-555555555555"
		body["provision_state"] = "enroll"
		f.node = body
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(f.node)
	case r.Method == http.MethodPatch:
		f.record("PATCH", r)
		_ = json.NewEncoder(w).Encode(f.node)
	case r.Method == http.MethodPut && len(parts) == 5 && parts[3] == "states":
		body := f.record("", r)
		f.actions[len(f.actions)-1] = "PUT " + parts[4] + " " + str(body["target"])
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodPut && len(parts) == 4 && parts[3] == "maintenance":
		f.record("PUT maintenance", r)
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodDelete:
		f.record("DELETE", r)
		f.node = nil
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodGet && len(parts) == 4 && parts[3] == "validate":
		_, _ = io.WriteString(w, `{"boot":{"result":true},"deploy":{"result":`+map[bool]string{true: "true", false: `false,"reason":"no image_source"`}[f.validateDeploy]+`}}`)
	case r.Method == http.MethodGet && len(parts) == 4 && parts[3] == "inventory":
		notFound(w)
	case r.Method == http.MethodGet && parts[1] == "ports":
		_, _ = io.WriteString(w, `{"ports":[]}`)
	case r.Method == http.MethodPost && parts[1] == "ports":
		f.record("POST port", r)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{}`)
	default:
		f.t.Errorf("fake ironic: unexpected %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusNotImplemented)
	}
}

func notFound(w http.ResponseWriter) {
	w.WriteHeader(http.StatusNotFound)
	_, _ = io.WriteString(w, `{"error_message": "{\"faultstring\": \"Node could not be found.\"}"}`)
}

func (f *fakeIronic) takeActions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.actions
	f.actions, f.bodies = nil, nil
	return a
}

// testHost is a host whose BMC is the redfish emulator's address form.
func testHost() provisioner.Host {
	return provisioner.Host{
		Namespace: "metal3", Name: "node-0", UID: "uid-0",
		BMC: provisioner.Target{
			Access:      bmc.Access{Driver: bmc.RedfishVirtualMedia, Endpoint: "http://127.0.0.1:8000", SystemPath: "/redfish/v1/Systems/node-0"},
			Credentials: provisioner.Credentials{Username: "admin", Password: "s3cret-pw"},
		},
		BootMode: "UEFI",
	}
}

// provisionUpdatedAt is node()'s provision_updated_at; fakeNow, the
// clock of openFake's factory, is a minute after it (a node that has just
// entered its state).
var (
	provisionUpdatedAt = time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	fakeNow            = provisionUpdatedAt.Add(time.Minute)
)

// openFake opens a provisioner for testHost against the fake, at fakeNow.
func openFake(t *testing.T, url string) provisioner.Provisioner {
	t.Helper()
	return openFakeAt(t, url, Options{}, func() time.Time { return fakeNow })
}

// openFakeAt opens a provisioner for testHost against the fake with o's
// timeouts, its factory's clock now.
func openFakeAt(t *testing.T, url string, o Options, now func() time.Time) provisioner.Provisioner {
	t.Helper()
	o.Endpoint, o.PollInterval, o.HTTPTimeout = url, 5*time.Second, 5*time.Second
	f, err := newFactory(o)
	if err != nil {
		t.Fatal(err)
	}
	f.now = now
	p, err := f.Open(context.Background(), testHost())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// node is a node JSON in state with last_error.
func node(state, lastError string) map[string]any {
	auto := false
	return map[string]any{
		"uuid": "11111111-2222-3333-4444-555555555555", "name": "metal3~node-0",
		"provision_state": state, "last_error": lastError, "power_state": "power off",
		"provision_updated_at": "2026-11-27T01:00:00+00:00",
		"automated_clean":      auto, "deploy_interface": "direct", "inspect_interface": "redfish",
		"properties":    map[string]any{"capabilities": "boot_mode:uefi"},
		"driver_info":   map[string]any{"redfish_address": "http://127.0.0.1:8000", "redfish_system_id": "/redfish/v1/Systems/node-0", "redfish_username": "admin", "redfish_password": "******", "deploy_forces_oob_reboot": true},
		"instance_info": map[string]any{},
	}
}
