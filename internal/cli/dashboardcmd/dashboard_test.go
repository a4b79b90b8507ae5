package dashboardcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/dashboard"
)

const exampleConfig = "../../../examples/site/airship-config.yaml"

func runCmd(ctx context.Context, t *testing.T, o *Options, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	g := &siteflags.Options{ConfigPath: exampleConfig, NoCache: true}
	cmd := NewCmd(cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, g)
	if o != nil {
		cmd.RunE = func(c *cobra.Command, _ []string) error {
			return o.Run(c.Context(), cli.IOStreams{Out: &out, ErrOut: &errOut}, g)
		}
	}
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(ctx)
	return out.String() + errOut.String(), err
}

// TestRefusesUnsafeExposure: beyond loopback the dashboard needs a token
// and TLS; it checks before it loads anything.
func TestRefusesUnsafeExposure(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		errHas string
	}{
		{"no token beyond loopback", []string{"--listen", "0.0.0.0:0"}, "--token-file"},
		{"plain HTTP beyond loopback", []string{"--listen", "0.0.0.0:0", "--token-file", token}, "--tls-cert"},
		{"key without certificate", []string{"--tls-key", "k"}, "go together"},
		{"empty token file", []string{"--token-file", empty}, "is empty"},
		{"bad address", []string{"--listen", "nowhere"}, "--listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(TokenEnv, "")
			_, err := runCmd(context.Background(), t, nil, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("error %v; want a refusal naming %q", err, tt.errHas)
			}
		})
	}
}

// TestServesTheExampleSite starts the dashboard of the example site on a
// free loopback port, prints its address, answers with the site's plans,
// and stops with its context.
func TestServesTheExampleSite(t *testing.T) {
	t.Setenv(TokenEnv, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	state := t.TempDir()
	o := &Options{Listen: "127.0.0.1:0", AuditLog: filepath.Join(state, "audit.jsonl"), RunLog: filepath.Join(state, "runs.jsonl"), Started: func(u string) { urls <- u }}
	done := make(chan error, 1)
	var out string
	go func() {
		var err error
		out, err = runCmd(ctx, t, o)
		done <- err
	}()
	var u string
	select {
	case u = <-urls:
	case err := <-done:
		t.Fatalf("dashboard ended: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("dashboard did not start within a minute")
	}
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Errorf("URL %q", u)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, u+"api/info", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var info dashboard.Info
	err = json.NewDecoder(resp.Body).Decode(&info)
	_ = resp.Body.Close()
	if err != nil || info.AllowActions || len(info.Plans) == 0 || info.Site == "" {
		t.Errorf("info %+v %v", info, err)
	}
	// A browser keeps its event stream open: stopping does not wait for it.
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	sreq, _ := http.NewRequestWithContext(sctx, http.MethodGet, u+"api/events", nil)
	stream, err := http.DefaultClient.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stream.Body.Close() }()
	stopped := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("dashboard ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("dashboard did not stop")
	}
	if _, err := io.ReadAll(stream.Body); err != nil {
		t.Errorf("the event stream did not end cleanly: %v", err)
	}
	t.Logf("stopped %s after the signal with an event stream open", time.Since(stopped).Round(time.Millisecond))
	if !strings.Contains(out, "listening on "+u) || !strings.Contains(out, "actions: off") {
		t.Errorf("output %q", out)
	}
}
