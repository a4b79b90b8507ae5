package output

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/airshipit/airship-go/internal/cli"
)

type svc struct {
	Up  bool   `json:"up"`
	Dir string `json:"dir"`
}

func TestStatusCmd(t *testing.T) {
	getErr := errors.New("reading the state: denied")
	tests := []struct {
		name     string
		args     []string
		st       svc
		getErr   error
		wantCode int
		wantOut  string
		wantErr  string
		wantGets int
	}{
		{"up, table", nil, svc{Up: true, Dir: "/s"}, nil, 0, "STATE   DIR\nup      /s\n", "", 1},
		{"down, table: printed, then exit 1", nil, svc{Dir: "/s"}, nil, 1, "STATE   DIR\ndown    /s\n", "nothing runs in /s", 1},
		{"down, json", []string{"-o", "json"}, svc{Dir: "/s"}, nil, 1, "{\n  \"up\": false,\n  \"dir\": \"/s\"\n}\n", "nothing runs in /s", 1},
		{"up, yaml", []string{"-o", "yaml"}, svc{Up: true, Dir: "/s"}, nil, 0, "dir: /s\nup: true\n", "", 1},
		{"bad format: the status is not read", []string{"-o", "xml"}, svc{}, nil, 1, "", `unknown output format "xml"`, 0},
		{"an argument", []string{"extra"}, svc{}, nil, 1, "", "unknown command", 0},
		{"the status cannot be read", nil, svc{}, getErr, 1, "", "reading the state: denied", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			gets := 0
			cmd := StatusCmd(&cobra.Command{Use: "status"}, &out, func(context.Context) (svc, error) {
				gets++
				return tt.st, tt.getErr
			}, func(tw *tabwriter.Writer, s svc) {
				Row(tw, "STATE", "DIR")
				state := "down"
				if s.Up {
					state = "up"
				}
				Row(tw, state, s.Dir)
			}, func(s svc) error {
				if !s.Up {
					return fmt.Errorf("nothing runs in %s", s.Dir)
				}
				return nil
			})
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if code := cli.ExitCode(err); code != tt.wantCode {
				t.Fatalf("exit %d (%v), want %d", code, err, tt.wantCode)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want one with %q", err, tt.wantErr)
			}
			if out.String() != tt.wantOut {
				t.Errorf("printed %q, want %q", out.String(), tt.wantOut)
			}
			if gets != tt.wantGets {
				t.Errorf("status read %d times, want %d", gets, tt.wantGets)
			}
		})
	}
}
