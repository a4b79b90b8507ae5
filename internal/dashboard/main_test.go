package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/config"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase"
	"github.com/airshipit/airship-go/internal/phase/executors"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.MainAPI(m, testenv.Options{
		CRDDirs: []string{
			"config/metal3/crd/bases/metal3.io_baremetalhosts.yaml",
			"config/armada/crd/bases",
		},
		AddToScheme: []func(*runtime.Scheme) error{},
	}, &env))
}

// siteFiles is a small site: phase a applies ConfigMap a, phase b (after
// a) ConfigMap b, both to cluster c1; plan p runs them.
func siteFiles(ns string) map[string]string {
	return map[string]string{
		"repo/metadata.yaml":             "phase:\n  path: phases\n  docEntryPointPrefix: entries\n",
		"repo/phases/kustomization.yaml": "resources: [phases.yaml, executors.yaml, map.yaml, plan.yaml]\n",
		"repo/phases/phases.yaml": `apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: a, clusterName: c1}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: KubernetesApply, name: apply-a}
  documentEntryPoint: a
---
apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: b, clusterName: c1}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: KubernetesApply, name: apply-b}
  documentEntryPoint: b
`,
		// Each test's phases keep their own inventories (named after its
		// namespace): the API server is shared.
		"repo/phases/executors.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: KubernetesApply\nmetadata: {name: apply-a}\nconfig: {phaseName: " + ns + "-a, waitOptions: {timeout: 20}}\n---\n" +
			"apiVersion: airshipit.org/v1alpha1\nkind: KubernetesApply\nmetadata: {name: apply-b}\nconfig: {phaseName: " + ns + "-b, waitOptions: {timeout: 20}}\n",
		"repo/phases/map.yaml":              "apiVersion: airshipit.org/v1alpha1\nkind: ClusterMap\nmetadata: {name: m}\nmap:\n  c1: {}\n",
		"repo/phases/plan.yaml":             "apiVersion: airshipit.org/v1alpha1\nkind: PhasePlan\nmetadata: {name: p}\nphases: [{name: a}, {name: b, dependsOn: [a]}]\n",
		"repo/entries/a/kustomization.yaml": "resources: [cm.yaml, secret.yaml]\n",
		"repo/entries/a/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: " + ns + "}\ndata: {k: v}\n",
		"repo/entries/a/secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: " + ns + "}\nstringData: {password: hunter2}\n",
		"repo/entries/b/kustomization.yaml": "resources: [cm.yaml]\n",
		"repo/entries/b/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: " + ns + "}\n",
	}
}

func loadSite(t *testing.T, files map[string]string) *phase.Site {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := config.NewSite("test-site", &v1.Manifest{
		PhaseRepositoryName: "r", TargetPath: dir, MetadataPath: "metadata.yaml",
		Repositories: map[string]*v1.Repository{"r": {URL: "/anywhere/repo"}},
	}, dir)
	executors.Register()
	site, err := phase.LoadSite(s, document.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	site.KubeconfigOverride = env.Kubeconfig
	return site
}

// dash is a running dashboard on a test server.
type dash struct {
	srv *Server
	ts  *httptest.Server
	dir string
}

func startDashboard(t *testing.T, opts Options) *dash {
	t.Helper()
	if opts.Site == nil {
		opts.Site = loadSite(t, siteFiles(testenv.Namespace(t, env, "dash")))
	}
	dir := t.TempDir()
	if opts.AuditLog == "" {
		opts.AuditLog = filepath.Join(dir, "state", "audit.jsonl")
	}
	if opts.RunLog == "" {
		opts.RunLog = filepath.Join(dir, "state", "runs.jsonl")
	}
	opts.Watch.Retry = 500 * time.Millisecond
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv.Start(ctx)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		ts.Close()
		cancel()
	})
	return &dash{srv: srv, ts: ts, dir: dir}
}

// get fetches a path and decodes its JSON into v; it returns the status.
func (d *dash) get(t *testing.T, path string, v any) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, d.ts.URL+path, nil)
	resp, err := d.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	if v != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return resp.StatusCode
}

// post sends an action the way the front end does.
func (d *dash) post(t *testing.T, path, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, d.ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", d.ts.URL)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := d.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// stream is an open event stream: its "change" topics and "runevent"s.
type stream struct {
	changes chan []string
	runs    chan string
}

func (d *dash) events(t *testing.T) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.ts.URL+"/api/events", nil)
	resp, err := d.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("event stream Content-Type %q", ct)
	}
	s := &stream{changes: make(chan []string, 1000), runs: make(chan string, 1000)}
	go func() {
		defer func() { _ = resp.Body.Close() }()
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "change":
				var c struct{ Topics []string }
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &c)
				s.changes <- c.Topics
			case strings.HasPrefix(line, "data: ") && event == "runevent":
				s.runs <- strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

// waitChange waits for a change naming topic, then for cond to hold; it
// fails after a minute.
func (s *stream) waitChange(t *testing.T, topic string, cond func() bool) {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case topics := <-s.changes:
			for _, tp := range topics {
				if tp == topic && cond() {
					return
				}
			}
		case <-deadline:
			t.Fatalf("no change of %q that made the condition true within a minute", topic)
		}
	}
}

// waitFor is waitChange for a condition that may hold already (a change
// seen while waiting for another).
func (s *stream) waitFor(t *testing.T, topic string, cond func() bool) {
	t.Helper()
	if !cond() {
		s.waitChange(t, topic, cond)
	}
}
