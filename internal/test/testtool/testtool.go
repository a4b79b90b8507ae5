package testtool

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireEnv, when set to any value, turns a skip for a missing tool or
// binary into a failure.
const RequireEnv = "AIRSHIP_REQUIRE_TESTBIN"

// SetupHint tells a user how to get the system tools.
const SetupHint = "run `bash hack/setup.sh` (make test and make demo run it) to install the system tools"

// Required reports whether missing tools fail tests instead of skipping them.
func Required() bool { return os.Getenv(RequireEnv) != "" }

// Path returns the path of the named tool: from PATH, else from the first of
// dirs that holds an executable of that name. When it is in neither, the
// test skips, or fails when RequireEnv is set.
func Path(t testing.TB, name string, dirs ...string) string {
	t.Helper()
	p, err := Find(name, dirs...)
	if err != nil {
		Missing(t, "%v; %s", err, SetupHint)
	}
	return p
}

// Find is Path without a test: the tool's path or an error saying where it
// was looked for.
func Find(name string, dirs ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("%s not found on PATH", name)
	}
	return "", fmt.Errorf("%s not found on PATH nor in %v", name, dirs)
}

// Missing skips the test with the formatted reason, or fails it when
// RequireEnv is set. Use it for any precondition a test cannot run without.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (%s is set, so this fails instead of skipping)", msg, RequireEnv)
		return
	}
	t.Skip(msg)
}
