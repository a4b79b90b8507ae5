package clitest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func tree(example string) *cobra.Command {
	root := &cobra.Command{Use: "tool"}
	var n int
	sub := &cobra.Command{Use: "run NAME", Example: example, RunE: func(*cobra.Command, []string) error { return nil }}
	sub.Flags().IntVarP(&n, "count", "c", 1, "")
	root.AddCommand(sub)
	return root
}

func TestCheckExamples(t *testing.T) {
	tests := []struct {
		name    string
		example string
		wantErr string
	}{
		{"good", "  # comment\n  tool run x --count 2\n  tool run y -c 3 > out.txt", ""},
		{"continued line", "  tool run x \\\n    --count 2", ""},
		{"missing", "", "has no Example"},
		{"unknown flag", "  tool run x --size 2", "unknown flag: --size"},
		{"bad flag value", "  tool run x --count many", "invalid argument"},
		{"unknown flag after continuation", "  tool run x \\\n    --nope", "unknown flag: --nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckExamples(r, tree(tt.example))
			got := strings.Join(r.errs, "\n")
			if tt.wantErr == "" && got != "" || tt.wantErr != "" && !strings.Contains(got, tt.wantErr) {
				t.Errorf("errors %q, want %q", got, tt.wantErr)
			}
		})
	}
}
