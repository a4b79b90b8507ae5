package ironiccmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// TestMain lets the test binary play airshipctl for the background image
// server `ironic local up` starts by re-executing itself.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "ironic" && os.Args[2] == "serve-http" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		code := cli.Run(ctx, NewCmd(cli.StdStreams()), os.Args[2:], cli.StdStreams())
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := cli.Run(t.Context(), NewCmd(streams), args, streams)
	return out.String(), errOut.String(), code
}

func TestCommands(t *testing.T) {
	state := filepath.Join(t.TempDir(), "ironic")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  []string
		notOut   []string
	}{
		{"help lists local, hides serve-http", []string{"--help"}, 0, []string{"local"}, nil, []string{"serve-http"}},
		{"up help", []string{"local", "up", "--help"}, 0, []string{"--api-port", "--http-port", "--auth", "--conductors", "--conductor-workers", "--state-dir", "$AIRSHIP_IRONIC_STATE_DIR", "--timeout"}, nil, []string{"--wait-timeout"}},
		{"unknown flag", []string{"local", "up", "--bogus"}, cli.ExitUsage, nil, []string{"unknown flag: --bogus"}, nil},
		{"bad port value", []string{"local", "up", "--api-port=x"}, cli.ExitUsage, nil, []string{"--api-port"}, nil},
		{"unknown auth", []string{"local", "up", "--state-dir", state, "--auth=kerberos"}, 1, nil, []string{`Auth "kerberos"`}, nil},
		{"noauth off loopback", []string{"local", "up", "--state-dir", state, "--host=0.0.0.0"}, 1, nil, []string{"loopback", "http_basic"}, nil},
		{"conductors off loopback", []string{"local", "up", "--state-dir", state, "--host", "::1", "--conductors=2"}, 1, nil, []string{"need an IPv4 loopback Host"}, nil},
		{"too few workers", []string{"local", "up", "--state-dir", state, "--conductor-workers=1"}, 1, nil, []string{"workers_pool_size"}, nil},
		{"down takes no args", []string{"local", "down", "extra"}, 1, nil, []string{"unknown command"}, nil},
		{"down of nothing", []string{"local", "down", "--state-dir", state}, 0, []string{"No local Ironic process was running."}, nil, nil},
		{"status of nothing", []string{"local", "status", "--state-dir", state}, 1, []string{"No local Ironic in", "airshipctl ironic local up"}, []string{"no local Ironic runs"}, nil},
		{"status of nothing, json", []string{"local", "status", "--state-dir", state, "-o", "json"}, 1, []string{`"recorded": false`, `"running": false`}, []string{"no local Ironic runs"}, []string{"No local Ironic in"}},
		{"status bad output", []string{"local", "status", "--state-dir", state, "-o", "xml"}, 1, nil, []string{"xml"}, nil},
		{"serve-http needs its flags", []string{"serve-http"}, 1, nil, []string{"required flag", "listen", "root"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notOut {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// up, status, up again, down and status against the real Ironic, with the
// image server in a background process (this test binary, see TestMain).
func TestUpStatusDown(t *testing.T) {
	for _, bin := range []string{localironic.DefaultIronicBinary, localironic.DefaultDBSyncBinary} {
		if _, err := os.Stat(bin); err != nil {
			testtool.Missing(t, "%s is not installed; %s", bin, testtool.SetupHint)
		}
	}
	state := filepath.Join(t.TempDir(), "ironic")
	t.Cleanup(func() { _ = localironic.Down(context.Background(), state) })

	out, errOut, code := run(t, "local", "up", "--state-dir", state, "--auth", "http_basic", "--sync-power-state-interval=-1s")
	if code != 0 {
		t.Fatalf("up: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, w := range []string{"Ironic is up", "API:          http://127.0.0.1:", "Images:       http://127.0.0.1:", "Deploy ISO:   http://127.0.0.1:", "/deploy.iso", "Credentials:  " + filepath.Join(state, "credentials.yaml"), "Log:          " + filepath.Join(state, "logs", "ironic.log")} {
		if !strings.Contains(out, w) {
			t.Errorf("up output lacks %q:\n%s", w, out)
		}
	}
	creds, err := localironic.ReadCredentials(filepath.Join(state, "credentials.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out+errOut, creds.Password) {
		t.Error("up printed the password")
	}
	conf, err := os.ReadFile(filepath.Join(state, "ironic.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "sync_power_state_interval = 0\n") {
		t.Error("--sync-power-state-interval=-1s did not disable the power sync")
	}

	out, errOut, code = run(t, "local", "status", "--state-dir", state, "-o", "json")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errOut)
	}
	var st localironic.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, out)
	}
	if !st.Running || len(st.Processes) != 2 || st.Auth != localironic.AuthHTTPBasic {
		t.Errorf("status %+v", st)
	}

	if out, _, code = run(t, "local", "up", "--state-dir", state, "--auth", "http_basic"); code != 0 || !strings.Contains(out, "already running") {
		t.Errorf("second up: exit %d\n%s", code, out)
	}

	out, errOut, code = run(t, "local", "down", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "Stopped image-server") || !strings.Contains(out, "ironic (pid") {
		t.Fatalf("down: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, p := range st.Processes {
		waitGone(t, p.PID)
	}
	if _, _, code = run(t, "local", "status", "--state-dir", state); code != 1 {
		t.Errorf("status after down: exit %d, want 1", code)
	}
}

// waitGone polls /proc until pid is gone or a zombie, or fails.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(data, ')'); i > 0 && i+2 < len(data) && (data[i+2] == 'Z' || data[i+2] == 'X') {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUpTimeout: --timeout, and --wait-timeout as every command takes it,
// reach up's options.
func TestUpTimeout(t *testing.T) {
	tests := []struct {
		args []string
		want time.Duration
	}{
		{nil, localironic.DefaultStartTimeout},
		{[]string{"--timeout=90s"}, 90 * time.Second},
		{[]string{"--wait-timeout=3m"}, 3 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			state := "/state"
			var got *UpOptions
			cmd := NewCmdUp(cli.IOStreams{Out: io.Discard, ErrOut: io.Discard}, &state, func(_ context.Context, o *UpOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if got.Timeout != tt.want || *got.StateDir != state {
				t.Errorf("timeout %s, state dir %s; want %s, %s", got.Timeout, *got.StateDir, tt.want, state)
			}
		})
	}
}
