package fn

import (
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden expected.yaml files from the actual output")

// TestMain lets the test binary act as the KRM function when kustomize
// execs it, which is how the krusty integration tests run for real.
func TestMain(m *testing.M) {
	if code, ok := ServeIfRequested(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
