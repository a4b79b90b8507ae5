package root

import (
	"strings"
	"testing"
)

// TestShellCompletion asks for completions the way a shell does (the hidden
// __complete command) against the example site.
func TestShellCompletion(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"phase names", []string{"phase", "render", ""}, []string{"armada-ephemeral", "initinfra-ephemeral", "workload-ephemeral"}, nil},
		{"phase prefix", []string{"phase", "run", "work"}, []string{"workload-ephemeral"}, []string{"initinfra-ephemeral"}},
		{"only the first argument", []string{"phase", "status", "initinfra-ephemeral", ""}, nil, []string{"workload-ephemeral"}},
		{"plan names", []string{"plan", "run", ""}, []string{"deploy-local"}, nil},
		{"--resume-from takes phases", []string{"plan", "run", "deploy-local", "--resume-from", "arm"}, []string{"armada-ephemeral"}, nil},
		{"--plan of phase list", []string{"phase", "list", "--plan", ""}, []string{"deploy-local"}, nil},
		{"cluster names", []string{"cluster", "get-kubeconfig", ""}, []string{"ephemeral-cluster", "target-cluster"}, nil},
		{"cluster names not repeated", []string{"cluster", "get-kubeconfig", "ephemeral-cluster", ""}, []string{"target-cluster"}, []string{"ephemeral-cluster"}},
		{"context names", []string{"config", "use-context", ""}, []string{"local"}, nil},
		{"output formats", []string{"phase", "status", "x", "-o", ""}, []string{"table", "yaml", "json"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, append([]string{exampleConfig, "__complete"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			// The last line is the directive (":4" = no file completion).
			got := lines[:len(lines)-1]
			for _, w := range tt.want {
				if !contains(got, w) {
					t.Errorf("completions %q lack %q", got, w)
				}
			}
			for _, n := range tt.not {
				if contains(got, n) {
					t.Errorf("completions %q include %q", got, n)
				}
			}
			if len(tt.want) == 0 && len(got) != 0 {
				t.Errorf("completions %q, want none", got)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}
