//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestVersionOfEveryBinary builds the three binaries and checks that
// `version -o json` names the library versions each was linked with, and
// that --help exits 0 and a bad flag exits 2 with the usage.
func TestVersionOfEveryBinary(t *testing.T) {
	tests := []struct {
		binary string
		want   []string // modules that must be reported
	}{
		{"airshipctl", []string{"kubernetes", "kustomize", "clusterAPI", "controllerRuntime"}},
		{"promenade", []string{"kubernetes"}},
		{"armada-operator", []string{"kubernetes", "helm", "controllerRuntime"}},
		{"metal3-operator", []string{"kubernetes", "controllerRuntime"}},
		{"sip-operator", []string{"kubernetes", "controllerRuntime"}},
		{"redfish-emulator", []string{"kubernetes"}},
	}
	for _, tt := range tests {
		t.Run(tt.binary, func(t *testing.T) {
			bin := build(t, tt.binary)
			r := run(t, bin, "version", "-o", "json")
			if r.code != 0 {
				t.Fatalf("version exit %d: %s", r.code, r.stderr)
			}
			var v struct {
				Binary  string            `json:"binary"`
				Modules map[string]string `json:"modules"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
				t.Fatalf("%v\n%s", err, r.stdout)
			}
			if v.Binary != tt.binary {
				t.Errorf("binary %q", v.Binary)
			}
			for _, m := range tt.want {
				if !strings.HasPrefix(v.Modules[m], "v") {
					t.Errorf("module %s = %q in %s", m, v.Modules[m], r.stdout)
				}
			}
			if r := run(t, bin, "--help"); r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
				t.Errorf("--help: exit %d, stdout %q", r.code, r.stdout)
			}
			if r := run(t, bin, "--no-such-flag"); r.code != 2 || !strings.Contains(r.stderr, "Usage:") || !strings.Contains(r.stderr, "unknown flag") {
				t.Errorf("bad flag: exit %d, stderr %q", r.code, r.stderr)
			}
		})
	}
}
