package server

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/promenade/builder"
	"github.com/airshipit/airship-go/internal/promenade/certs"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

// design writes the example site plus generated certificates into a
// directory and returns it and the whole set as one YAML stream.
func design(t testing.TB) (string, []byte) {
	t.Helper()
	files, err := filepath.Glob("../../../examples/site/promenade/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal("no example")
	}
	set, err := docset.Load(files...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := certs.Generate(set, certs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var all bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		all.WriteString("---\n")
		all.Write(b)
		all.WriteString("\n")
	}
	if err := certs.Write(dir, res); err != nil {
		t.Fatal(err)
	}
	c, err := os.ReadFile(filepath.Join(dir, "certificates.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	all.Write(c)
	return dir, all.Bytes()
}

func newServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decodeStatus(t *testing.T, body []byte) Status {
	t.Helper()
	var st Status
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("body is not a JSON status: %v\n%s", err, body)
	}
	return st
}

func get(t *testing.T, h http.Handler, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func joinURL(params map[string]string) string {
	q := url.Values{}
	for k, v := range params {
		q.Set(k, v)
	}
	return "/api/v1.0/join-scripts?" + q.Encode()
}

func TestJoinScriptsBadRequests(t *testing.T) {
	dir, _ := design(t)
	h := newServer(t, Options{DesignRoot: dir})
	ok := map[string]string{"hostname": "n7", "ip": "192.168.77.17", "design_ref": dir}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range ok {
			m[a] = b
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name   string
		params map[string]string
		param  string
		msg    string
	}{
		{"missing hostname", with("hostname", ""), "hostname", "required parameter hostname is missing"},
		{"bad hostname", with("hostname", "N7_x"), "hostname", "not a valid hostname"},
		{"missing ip", with("ip", ""), "ip", "required parameter ip"},
		{"bad ip", with("ip", "192.168.77.300"), "ip", "not an IPv4 address"},
		{"missing design_ref", with("design_ref", ""), "design_ref", "required parameter design_ref"},
		{"malformed design_ref", with("design_ref", "http://%zz"), "design_ref", "malformed design_ref"},
		{"URL without host", with("design_ref", "https:///site.yaml"), "design_ref", "no host"},
		{"unsupported scheme", with("design_ref", "ftp://example.com/site.yaml"), "design_ref", `unsupported design_ref scheme "ftp"`},
		{"missing file", with("design_ref", filepath.Join(dir, "nope.yaml")), "design_ref", "no such file"},
		{"bad label", with("labels.static", "not a label"), "labels.static", "not a label of the form key=value"},
		{"bad leave_kubectl", with("leave_kubectl", "perhaps"), "leave_kubectl", "not a boolean"},
		{"node already in the design", with("hostname", "n1"), "hostname", "already defined in the design"},
		{"genesis node", with("hostname", "n0"), "hostname", "genesis node"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := get(t, h, joinURL(tc.params))
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, body %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("content type %q", ct)
			}
			st := decodeStatus(t, rec.Body.Bytes())
			if st.Parameter != tc.param || !strings.Contains(st.Message, tc.msg) || st.Code != 400 {
				t.Errorf("got parameter %q message %q, want %q containing %q", st.Parameter, st.Message, tc.param, tc.msg)
			}
		})
	}
}

func TestJoinScript(t *testing.T) {
	dir, all := design(t)
	h := newServer(t, Options{DesignRoot: dir, AllowRemote: true})
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/site.yaml" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(all)
	}))
	defer web.Close()
	for _, ref := range []string{dir, "file://" + dir, filepath.Join(dir, "certificates.yaml") + "-missing-is-not-used", web.URL + "/site.yaml"} {
		if strings.HasSuffix(ref, "-missing-is-not-used") {
			continue
		}
		t.Run(ref, func(t *testing.T) {
			q := url.Values{
				"hostname": {"n7"}, "ip": {"192.168.77.17"}, "design_ref": {ref},
				"labels.static":  {"node-role.kubernetes.io/worker="},
				"labels.dynamic": {"ceph-osd=enabled,openstack-compute=enabled", "zone=a"},
				"leave_kubectl":  {"true"},
			}
			rec := get(t, h, "/api/v1.0/join-scripts?"+q.Encode())
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/x-shellscript" {
				t.Errorf("content type %q", ct)
			}
			script := rec.Body.String()
			for _, want := range []string{"NODE_NAME=n7", "NODE_IP=192.168.77.17", "LEAVE_KUBECTL=1",
				"--overwrite node-role.kubernetes.io/worker= ceph-osd=enabled openstack-compute=enabled zone=a"} {
				if !strings.Contains(script, want) {
					t.Errorf("script lacks %q", want)
				}
			}
			files, err := builder.ExtractPayload(rec.Body.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				if f.Path == "/etc/kubernetes/kubelet/pki/kubelet.pem" {
					b, _ := pem.Decode(f.Content)
					c, err := x509.ParseCertificate(b.Bytes)
					if err != nil || c.Subject.CommonName != "system:node:n7" || c.IPAddresses[0].String() != "192.168.77.17" {
						t.Errorf("kubelet certificate %v %v", c.Subject, err)
					}
				}
			}
		})
	}
	rec := get(t, h, joinURL(map[string]string{"hostname": "n7", "ip": "192.168.77.17", "design_ref": web.URL + "/missing.yaml"}))
	if st := decodeStatus(t, rec.Body.Bytes()); rec.Code != 400 || st.Parameter != "design_ref" || !strings.Contains(st.Message, "404") {
		t.Errorf("missing remote design: %d %+v", rec.Code, st)
	}
}

func TestDesignRoot(t *testing.T) {
	dir, _ := design(t)
	h := newServer(t, Options{DesignRoot: t.TempDir()})
	rec := get(t, h, joinURL(map[string]string{"hostname": "n7", "ip": "10.0.0.7", "design_ref": dir}))
	if st := decodeStatus(t, rec.Body.Bytes()); rec.Code != 400 || !strings.Contains(st.Message, "outside the design root") {
		t.Errorf("%d %+v", rec.Code, st)
	}
}

func TestValidateDesign(t *testing.T) {
	dir, _ := design(t)
	h := newServer(t, Options{DesignRoot: dir})
	post := func(body string) (*httptest.ResponseRecorder, Status) {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1.0/validatedesign", strings.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec, decodeStatus(t, rec.Body.Bytes())
	}
	rec, st := post(`{"href": "` + dir + `"}`)
	if rec.Code != 200 || st.Status != "Success" || st.Details.ErrorCount != 0 {
		t.Errorf("valid design: %d %+v", rec.Code, st)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.Mkdir(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "site.yaml"), []byte(`
schema: promenade/KubernetesNode/v1
metadata: {schema: metadata/Document/v1, name: n1}
data: {hostname: n1}
---
schema: promenade/KubernetesNode/v1
metadata: {schema: metadata/Document/v1, name: n1}
data: {hostname: n1, ip: 10.0.0.1}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	rec, st = post(`{"href": "` + bad + `"}`)
	if rec.Code != 400 || st.Status != "Failure" || st.Details == nil || st.Details.ErrorCount != 2 {
		t.Fatalf("invalid design: %d %s", rec.Code, rec.Body)
	}
	msgs := st.Details.MessageList[0].Message + st.Details.MessageList[1].Message
	if !strings.Contains(msgs, "missing property 'ip'") || !strings.Contains(msgs, "duplicate document name") {
		t.Errorf("messages %s", msgs)
	}
	// A design that validates but cannot be built (no Genesis) fails too.
	partial := filepath.Join(dir, "partial")
	if err := os.Mkdir(partial, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "PKICatalog.yaml"))
	os.WriteFile(filepath.Join(partial, "PKICatalog.yaml"), b, 0o644) //nolint:errcheck
	rec, st = post(`{"href": "` + partial + `"}`)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "no promenade/Genesis/v1 document") {
		t.Errorf("partial design: %d %s", rec.Code, rec.Body)
	}
	for body, param := range map[string]string{`not json`: "body", `{}`: "href", `{"href": "gopher://x"}`: "href"} {
		rec, st = post(body)
		if rec.Code != 400 || st.Parameter != param {
			t.Errorf("%s: %d %+v", body, rec.Code, st)
		}
	}
}

func TestHealthVersionsAndToken(t *testing.T) {
	dir, _ := design(t)
	h := newServer(t, Options{Token: "s3cret", DesignRoot: dir})
	if rec := get(t, h, "/api/v1.0/health"); rec.Code != http.StatusNoContent {
		t.Errorf("health %d", rec.Code)
	}
	rec := get(t, h, "/api/v1.0/versions")
	var v map[string]map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil || v["v1.0"]["path"] != "/api/v1.0" {
		t.Errorf("versions %s", rec.Body)
	}
	target := joinURL(map[string]string{"hostname": "n7", "ip": "10.0.0.7", "design_ref": dir})
	if rec := get(t, h, target); rec.Code != http.StatusUnauthorized {
		t.Errorf("no token: %d", rec.Code)
	}
	if rec := get(t, h, target, "Authorization", "Bearer wrong"); rec.Code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", rec.Code)
	}
	if rec := get(t, h, target, "Authorization", "Bearer s3cret"); rec.Code != http.StatusOK {
		t.Errorf("right token: %d %s", rec.Code, rec.Body)
	}
	if rec := get(t, h, "/api/v1.0/nothing"); rec.Code != http.StatusNotFound {
		t.Errorf("unknown route: %d", rec.Code)
	}
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1.0/join-scripts", nil)
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, req)
	if rr.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST join-scripts: %d", rr.Code)
	}
	_ = io.Discard
}
