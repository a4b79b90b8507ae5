package cli

import (
	"strings"
	"testing"
	"time"

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
