package testtool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "airship-fake-tool")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "airship-not-executable")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		tool    string
		dirs    []string
		want    string
		wantErr string
	}{
		{"on PATH", "sh", nil, "", ""},
		{"in a fallback dir", "airship-fake-tool", []string{t.TempDir(), dir}, exe, ""},
		{"missing without dirs", "airship-no-such-tool", nil, "", "not found on PATH"},
		{"missing in dirs", "airship-no-such-tool", []string{dir}, "", dir},
		{"not executable", "airship-not-executable", []string{dir}, "", "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(tt.tool, tt.dirs...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			if tt.want == "" && filepath.Base(got) != tt.tool {
				t.Errorf("got %s", got)
			}
		})
	}
}

// recorder is a testing.TB that records whether the test was skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skip(...any)           { r.skipped = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestMissingFailsWhenRequired(t *testing.T) {
	for _, required := range []bool{false, true} {
		if required {
			t.Setenv(RequireEnv, "1")
		} else {
			t.Setenv(RequireEnv, "")
		}
		r := &recorder{TB: t}
		Missing(r, "shellcheck not found")
		if r.failed != required || r.skipped == required {
			t.Errorf("required=%v: failed=%v skipped=%v", required, r.failed, r.skipped)
		}
	}
}
