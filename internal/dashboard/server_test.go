package dashboard

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/cache"

	promv1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/phase/runlog"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

// TestPagesAndAssets: every page answers the front end with the security
// headers; the assets have their types; nothing else is served.
func TestPagesAndAssets(t *testing.T) {
	d := startDashboard(t, Options{})
	tests := []struct {
		path, typ string
		code      int
		has       string
	}{
		{"/", "text/html; charset=utf-8", 200, "/assets/app.js"},
		{"/overview", "text/html; charset=utf-8", 200, "/assets/app.js"},
		{"/plans/p", "text/html; charset=utf-8", 200, "/assets/app.css"},
		{"/phases/a", "text/html; charset=utf-8", 200, "<html"},
		{"/hosts?q=rack-1", "text/html; charset=utf-8", 200, "<html"},
		{"/clusters", "text/html; charset=utf-8", 200, "<html"},
		{"/charts", "text/html; charset=utf-8", 200, "<html"},
		{"/certificates", "text/html; charset=utf-8", 200, "<html"},
		{"/audit", "text/html; charset=utf-8", 200, "<html"},
		{"/assets/app.js", "text/javascript; charset=utf-8", 200, "EventSource"},
		{"/assets/app.css", "text/css; charset=utf-8", 200, "{"},
		{"/assets/index.html", "", 404, ""},
		{"/assets/..%2fserver.go", "", 404, ""},
		{"/nope", "", 404, ""},
		{"/api/nope", "", 404, ""},
	}
	for _, tt := range tests {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, d.ts.URL+tt.path, nil)
		resp, err := d.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("GET %s: %d, want %d", tt.path, resp.StatusCode, tt.code)
			continue
		}
		if tt.code != 200 {
			continue
		}
		if got := resp.Header.Get("Content-Type"); got != tt.typ {
			t.Errorf("GET %s: Content-Type %q, want %q", tt.path, got, tt.typ)
		}
		if !strings.Contains(string(b), tt.has) {
			t.Errorf("GET %s: body lacks %q", tt.path, tt.has)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: security headers %v", tt.path, resp.Header)
		}
	}
	var info Info
	d.get(t, "/api/info", &info)
	if info.Site != "test-site" || info.AllowActions || len(info.Plans) != 1 || info.Plans[0] != "p" {
		t.Errorf("info %+v", info)
	}
}

// TestHostHeader: without a token, only requests addressed to an IP
// address or localhost are answered (no DNS rebinding).
func TestHostHeader(t *testing.T) {
	d := startDashboard(t, Options{})
	for host, want := range map[string]int{"evil.example": 421, "evil.example:80": 421, "localhost:1": 200, "127.0.0.1:5": 200, "[::1]:5": 200} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, d.ts.URL+"/api/info", nil)
		req.Host = host
		resp, err := d.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestToken: with a token, the API wants it as a bearer token or the
// session cookie sign-in sets (which is not the token), pages send to the
// sign-in page, and sign-in never redirects off the server.
func TestToken(t *testing.T) {
	d := startDashboard(t, Options{Token: "t0ken"})
	c := d.ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	do := func(method, path, bearer string, form url.Values) *http.Response {
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequestWithContext(context.Background(), method, d.ts.URL+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}
	if r := do("GET", "/api/info", "", nil); r.StatusCode != 401 {
		t.Errorf("no token: %d", r.StatusCode)
	}
	if r := do("GET", "/api/info", "wrong", nil); r.StatusCode != 401 {
		t.Errorf("wrong token: %d", r.StatusCode)
	}
	if r := do("GET", "/api/info", "t0ken", nil); r.StatusCode != 200 {
		t.Errorf("token: %d", r.StatusCode)
	}
	if r := do("GET", "/hosts", "", nil); r.StatusCode != 303 || r.Header.Get("Location") != "/login?next=%2Fhosts" {
		t.Errorf("page without a session: %d %s", r.StatusCode, r.Header.Get("Location"))
	}
	if r := do("POST", "/login", "", url.Values{"token": {"wrong"}, "next": {"/hosts"}}); r.StatusCode != 401 || len(r.Cookies()) != 0 {
		t.Errorf("sign-in with a wrong token: %d %v", r.StatusCode, r.Cookies())
	}
	r := do("POST", "/login", "", url.Values{"token": {"t0ken"}, "next": {"//evil.example/x"}})
	if r.StatusCode != 303 || r.Header.Get("Location") != "/" || len(r.Cookies()) != 1 {
		t.Fatalf("sign-in: %d %q %v", r.StatusCode, r.Header.Get("Location"), r.Cookies())
	}
	ck := r.Cookies()[0]
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || strings.Contains(ck.Value, "t0ken") {
		t.Errorf("session cookie %+v", ck)
	}
	req, _ := http.NewRequestWithContext(context.Background(), "GET", d.ts.URL+"/api/info", nil)
	req.AddCookie(ck)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("with the session cookie: %d", resp.StatusCode)
	}
	// With a token, the name the client used does not matter.
	req, _ = http.NewRequestWithContext(context.Background(), "GET", d.ts.URL+"/api/info", nil)
	req.Host = "dashboard.example"
	req.Header.Set("Authorization", "Bearer t0ken")
	if resp, err = c.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("token and a host name: %v %v", resp, err)
	}
}

// TestActionGuards: an action needs a JSON body from this origin; a
// refusal for actions being off is audited.
func TestActionGuards(t *testing.T) {
	d := startDashboard(t, Options{})
	tests := []struct {
		name string
		hdr  map[string]string
		code int
	}{
		{"form post", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"another origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"cross-site fetch without Origin", map[string]string{"Origin": "", "Sec-Fetch-Site": "cross-site"}, 403},
		{"actions off", nil, 403},
		{"a tool without Origin, actions off", map[string]string{"Origin": ""}, 403},
	}
	for _, tt := range tests {
		if code, body := d.post(t, "/api/phases/a/run", "{}", tt.hdr); code != tt.code {
			t.Errorf("%s: %d %s, want %d", tt.name, code, body, tt.code)
		}
	}
	var audit []AuditRecord
	d.get(t, "/api/audit", &audit)
	if len(audit) != 2 || audit[0].Action != "run-phase" || audit[0].Target != "a" || audit[0].Result != "refused" || audit[0].Who != "local" {
		t.Errorf("audit %+v: want the two refusals for actions being off", audit)
	}
}

func TestRedactSecrets(t *testing.T) {
	in := `apiVersion: v1
kind: Secret
metadata: {name: s}
data: {a: aHVudGVyMg==}
stringData: {b: hunter2}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
data: {a: visible}
`
	out, err := redactSecrets([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "hunter2") || strings.Contains(s, "aHVudGVyMg") || strings.Count(s, "REDACTED") != 2 || !strings.Contains(s, "visible") || !strings.Contains(s, "b: REDACTED") {
		t.Errorf("redacted:\n%s", s)
	}
	if _, err := redactSecrets([]byte("a: [")); err == nil {
		t.Error("broken YAML: no error")
	}
}

func TestStateOf(t *testing.T) {
	read := phaseStatus{}
	ok := &Run{Record: runlog.Record{Result: RunSucceeded}}
	tests := []struct {
		name      string
		pp        PlanPhase
		ps        phaseStatus
		read      bool
		movedAway bool
		want      string
	}{
		{"running", PlanPhase{LastRun: &Run{Record: runlog.Record{Result: RunRunning}}}, read, true, false, StateRunning},
		{"failed last", PlanPhase{LastRun: &Run{Record: runlog.Record{Result: RunFailed}}, Objects: 2, Applied: 2, Ready: 2}, read, true, false, StateFailed},
		{"not read yet", PlanPhase{}, read, false, false, StateUnknown},
		{"status error", PlanPhase{}, phaseStatus{err: io.EOF}, true, false, StateUnknown},
		{"nothing applied", PlanPhase{Objects: 2}, read, true, false, StateNotRun},
		{"moved away", PlanPhase{Objects: 2}, read, true, true, StateMoved},
		{"no objects, ran", PlanPhase{LastRun: ok}, read, true, false, StateReady},
		{"no objects, never ran", PlanPhase{}, read, true, false, StateNotRun},
		{"drifted", PlanPhase{Objects: 2, Applied: 2, Ready: 2, Drifted: 1}, read, true, false, StateDrifted},
		{"ready", PlanPhase{Objects: 2, Applied: 2, Ready: 2}, read, true, false, StateReady},
		{"applied", PlanPhase{Objects: 2, Applied: 2, Ready: 1}, read, true, false, StateApplied},
		{"half moved", PlanPhase{Objects: 2, Applied: 1, Ready: 1}, read, true, true, StateMoved},
	}
	for _, tt := range tests {
		if got := stateOf(tt.pp, tt.ps, tt.read, tt.movedAway); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestHostJoin: a host's Machine and Node come from the Machine whose
// infrastructureRef is the host's consumer; its rack from the label a
// SIPCluster names as topologyKey, else a common rack label.
func TestHostJoin(t *testing.T) {
	cw := &clusterWatch{name: "target", stores: map[string]cache.Store{}}
	add := func(key string, o *obj) {
		if cw.stores[key] == nil {
			cw.stores[key] = cache.NewStore(cache.MetaNamespaceKeyFunc)
		}
		if err := cw.stores[key].Add(o); err != nil {
			t.Fatal(err)
		}
	}
	o := func(ns, name string, v any) *obj {
		x := &obj{V: v}
		x.Namespace, x.Name = ns, name
		return x
	}
	add("hosts", o("m3", "h1", &hostObj{Host: Host{Namespace: "m3", Name: "h1", Consumer: "Metal3Machine/m3/cp-x"}, labels: internLabels(map[string]string{"dc/rack": "r9", "rack": "r1"})}))
	add("hosts", o("m3", "h2", &hostObj{Host: Host{Namespace: "m3", Name: "h2"}, labels: internLabels(map[string]string{"rack": "r2"})}))
	add("machines", o("m3", "cp-0", &machineObj{infra: "Metal3Machine/m3/cp-x", node: "node-a", phase: "Running"}))
	add("machines", o("m3", "cp-1", &machineObj{infra: "Metal3Machine/m3/other", phase: "Provisioning"}))
	add("sipclusters", o("sip", "t", &sipClusterObj{topologyKeys: []string{"dc/rack"}}))
	l := &live{clusters: map[string]*clusterWatch{"target": cw}, order: []string{"target"}}
	hosts := l.hostList()
	if len(hosts) != 2 {
		t.Fatalf("hosts %+v", hosts)
	}
	if h := hosts[0]; h.Machine != "m3/cp-0" || h.Node != "node-a" || h.Rack != "r9" || h.Cluster != "target" {
		t.Errorf("h1 %+v", h)
	}
	if h := hosts[1]; h.Machine != "" || h.Rack != "r2" {
		t.Errorf("h2 %+v", h)
	}
	if a := l.machinesNotRunning(); len(a) != 1 || a[0].Name != "m3/cp-1" || !strings.Contains(a[0].Message, "Provisioning") {
		t.Errorf("machines not running %+v", a)
	}
}

// TestCertificates: the catalog's CAs and certificates with the expiry of
// those the PKI holds; one within 30 days is expiring and needs
// attention; a catalog entry not generated yet is listed without expiry.
func TestCertificates(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	catalog := `---
schema: promenade/PKICatalog/v1
metadata: {schema: metadata/Document/v1, name: cluster-certificates, layeringDefinition: {abstract: false, layer: site}, storagePolicy: cleartext}
data:
  certificate_authorities:
    kubernetes:
      certificates:
      - {document_name: apiserver, common_name: apiserver, hosts: [10.0.0.1]}
      - {document_name: admin, common_name: admin}
      - {document_name: later, common_name: later}
`
	if err := os.WriteFile(filepath.Join(dir, "PKICatalog.yaml"), []byte(catalog), 0o600); err != nil {
		t.Fatal(err)
	}
	mk := func(cn string, notAfter time.Time) string {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: now.Add(-time.Hour), NotAfter: notAfter}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	var docs []docset.Document
	for _, c := range []struct {
		schema, name string
		notAfter     time.Time
	}{
		{promv1.SchemaCertificateAuthority, "kubernetes", now.AddDate(10, 0, 0)},
		{promv1.SchemaCertificate, "apiserver", now.AddDate(0, 0, 10)},
		{promv1.SchemaCertificate, "admin", now.AddDate(1, 0, 0)},
		{promv1.SchemaCertificate, "removed-from-catalog", now.AddDate(0, 0, -2)},
	} {
		d, err := docset.NewDocument(c.schema, c.name, mk(c.name, c.notAfter))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	b, err := docset.MarshalYAML(docs)
	if err != nil {
		t.Fatal(err)
	}
	pkiDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(pkiDir, "certificates.yaml"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDashboard(t, Options{PKIConfigDir: dir, PKIDir: pkiDir, Now: func() time.Time { return now }})
	var certs []Certificate
	d.get(t, "/api/certificates", &certs)
	got := map[string]Certificate{}
	var order []string
	for _, c := range certs {
		got[c.Name] = c
		order = append(order, c.Name)
	}
	if strings.Join(order, ",") != "removed-from-catalog,apiserver,admin,kubernetes,later" {
		t.Errorf("order %v: want soonest expiry first, not generated last", order)
	}
	if c := got["apiserver"]; !c.Expiring || c.DaysLeft != 10 || c.CA != "kubernetes" || !c.Generated {
		t.Errorf("apiserver %+v", c)
	}
	if c := got["removed-from-catalog"]; !c.Expiring || c.DaysLeft >= 0 {
		t.Errorf("expired %+v", c)
	}
	if c := got["admin"]; c.Expiring || c.DaysLeft != 365 {
		t.Errorf("admin %+v", c)
	}
	if c := got["later"]; c.Generated || !c.NotAfter.IsZero() {
		t.Errorf("not generated %+v", c)
	}
	var ov Overview
	d.get(t, "/api/overview", &ov)
	n := 0
	for _, a := range ov.Attention {
		if a.Kind == "Certificate" {
			n++
		}
	}
	if n != 2 || ov.Counts["certificatesExpiring"] != 2 {
		t.Errorf("overview: %d certificates need attention, counts %v", n, ov.Counts)
	}
}

// TestHubSlowSubscriber: a browser that stops reading misses messages
// without holding up the others, and then gets a change of every topic,
// so its page reads everything again.
func TestHubSlowSubscriber(t *testing.T) {
	h := newHub()
	slow, fast := h.subscribe(), h.subscribe()
	for i := range cap(slow) + 5 {
		h.runEvent("r", RunEvent{Message: fmt.Sprint(i)})
		<-fast
	}
	for range cap(slow) {
		<-slow
	}
	h.runEvent("r", RunEvent{Message: "next"})
	if m := <-slow; m.event != "change" || !strings.Contains(string(m.data), `"hosts"`) || !strings.Contains(string(m.data), `"runs"`) {
		t.Errorf("after missing messages: %s %s, want a change of every topic", m.event, m.data)
	}
	if m := <-fast; m.event != "runevent" || !strings.Contains(string(m.data), "next") {
		t.Errorf("the other subscriber: %s %s", m.event, m.data)
	}
	h.runEvent("r", RunEvent{Message: "after"})
	if m := <-slow; m.event != "runevent" {
		t.Errorf("once caught up: %s %s", m.event, m.data)
	}
}
