package testtool

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSetupScript runs hack/setup.sh --check with a PATH that holds only the
// tools listed, and checks what it reports missing and the command it names.
func TestSetupScript(t *testing.T) {
	script, err := filepath.Abs("../../../hack/setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	// What the script itself runs, plus what it checks for.
	base := []string{"env", "bash", "dirname", "sed", "sort", "head", "id", "go"}
	listed := []string{"make", "git", "gcc", "shellcheck", "openssl", "tar", "sha256sum", "taskset", "qemu-img", "genisoimage"}
	tests := []struct {
		name     string
		drop     []string
		wantCode int
		wantErr  []string
	}{
		{"all present", nil, 0, nil},
		{"shellcheck missing", []string{"shellcheck"}, 1, []string{"missing shellcheck", "apt-get install -y shellcheck"}},
		{"two missing, packages named", []string{"gcc", "sha256sum"}, 1, []string{"missing gcc sha256sum", "apt-get install -y build-essential coreutils"}},
		{"go missing", []string{"go"}, 1, []string{"Go 1.", "go is not on PATH"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			for _, name := range append(append([]string{}, base...), listed...) {
				if slices.Contains(tt.drop, name) {
					continue
				}
				p := Path(t, name)
				if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.CommandContext(t.Context(), "bash", script, "--check")
			cmd.Env = append(os.Environ(), "PATH="+bin)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.wantCode, stderr.String())
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q does not contain %q", stderr.String(), w)
				}
			}
		})
	}
}
