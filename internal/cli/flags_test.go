package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestAddTimeoutFlag(t *testing.T) {
	tests := []struct {
		args []string
		want time.Duration
	}{
		{nil, 3 * time.Second},
		{[]string{"--timeout=1m"}, time.Minute},
		{[]string{"--wait-timeout=2m"}, 2 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
			var d time.Duration
			AddTimeoutFlag(fs, &d, 3*time.Second, "wait")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if d != tt.want {
				t.Errorf("got %s, want %s", d, tt.want)
			}
			if strings.Contains(fs.FlagUsages(), "wait-timeout") {
				t.Error("--wait-timeout is shown in the usage")
			}
		})
	}
}

// TestAddStateDirFlag: --state-dir of the parent is read by a subcommand,
// its usage names the environment variable.
func TestAddStateDirFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"sub"}, "/default"},
		{[]string{"sub", "--state-dir", "/other"}, "/other"},
		{[]string{"--state-dir=/before", "sub"}, "/before"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			parent := &cobra.Command{Use: "local"}
			var dir, seen string
			AddStateDirFlag(parent, &dir, "/default", "the state", "AIRSHIP_X_STATE_DIR")
			parent.AddCommand(&cobra.Command{Use: "sub", RunE: func(*cobra.Command, []string) error { seen = dir; return nil }})
			parent.SetArgs(tt.args)
			if err := parent.Execute(); err != nil {
				t.Fatal(err)
			}
			if seen != tt.want {
				t.Errorf("sub read %q, want %q", seen, tt.want)
			}
			if u := parent.PersistentFlags().FlagUsages(); !strings.Contains(u, "directory holding the state ($AIRSHIP_X_STATE_DIR)") {
				t.Errorf("usage: %s", u)
			}
		})
	}
}
