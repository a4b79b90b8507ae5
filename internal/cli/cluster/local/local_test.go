package local

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cli"
)

func streams() (cli.IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &out, &errOut
}

func TestUpFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want UpOptions
	}{
		{"defaults", nil, UpOptions{Nodes: 3, Timeout: 2 * time.Minute}},
		{"all flags", []string{"--port=7443", "--nodes=5", "--timeout=30s", "--bin-dir=/bins"},
			UpOptions{Port: 7443, Nodes: 5, Timeout: 30 * time.Second, BinDir: "/bins"}},
		// An explicit 0 is zero kwok Nodes, not the default.
		{"zero nodes", []string{"--nodes=0"}, UpOptions{Nodes: 0, Timeout: 2 * time.Minute}},
		{"five nodes", []string{"--nodes", "5"}, UpOptions{Nodes: 5, Timeout: 2 * time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := streams()
			state := "/state"
			var got *UpOptions
			cmd := NewCmdUp(s, &state, func(_ context.Context, o *UpOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if got.Port != tt.want.Port || got.Nodes != tt.want.Nodes || got.Timeout != tt.want.Timeout {
				t.Errorf("got port=%d nodes=%d timeout=%v, want %d %d %v", got.Port, got.Nodes, got.Timeout, tt.want.Port, tt.want.Nodes, tt.want.Timeout)
			}
			if tt.want.BinDir != "" && got.BinDir != tt.want.BinDir {
				t.Errorf("bin dir %q, want %q", got.BinDir, tt.want.BinDir)
			}
			if *got.StateDir != "/state" {
				t.Errorf("state dir %q", *got.StateDir)
			}
			// What cluster.Up is asked for; cluster/local's own tests show it keeps Nodes as given.
			if co := got.clusterOptions(nil); co.Nodes != tt.want.Nodes || co.APIServerPort != tt.want.Port || co.StateDir != "/state" {
				t.Errorf("cluster options nodes=%d port=%d state=%q, want %d %d /state", co.Nodes, co.APIServerPort, co.StateDir, tt.want.Nodes, tt.want.Port)
			}
		})
	}
}

func TestUpRejectsNegativeNodes(t *testing.T) {
	s, _, _ := streams()
	state := t.TempDir()
	cmd := NewCmdUp(s, &state, nil)
	cmd.SetArgs([]string{"--nodes=-1"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--nodes") {
		t.Fatalf("got %v, want an error naming --nodes", err)
	}
}

func TestStatusWithoutCluster(t *testing.T) {
	for _, format := range []string{"table", "json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			s, out, _ := streams()
			state := filepath.Join(t.TempDir(), "none")
			cmd := NewCmdStatus(s, &state)
			cmd.SetArgs([]string{"-o", format})
			err := cmd.Execute()
			if cli.ExitCode(err) != 1 {
				t.Fatalf("exit code %d (%v), want 1 for a cluster that is not running", cli.ExitCode(err), err)
			}
			switch format {
			case "json":
				var v map[string]any
				if err := json.Unmarshal(out.Bytes(), &v); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, out)
				}
				if v["running"] != false {
					t.Errorf("running = %v", v["running"])
				}
			case "yaml":
				if !strings.Contains(out.String(), "running: false") {
					t.Errorf("yaml:\n%s", out)
				}
			default:
				if !strings.Contains(out.String(), "airshipctl cluster local up") {
					t.Errorf("table does not say how to start one:\n%s", out)
				}
			}
		})
	}
}

func TestDownWithoutCluster(t *testing.T) {
	s, out, _ := streams()
	state := filepath.Join(t.TempDir(), "none")
	cmd := NewCmdDown(s, &state)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "No local cluster process was running") {
		t.Errorf("output:\n%s", out)
	}
}
