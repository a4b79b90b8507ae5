package clusterctl

import (
	"os"
	"testing"

	"github.com/airshipit/airship-go/internal/document/fn"
)

// TestMain lets this test binary act as the KRM function kustomize
// executes, as airshipctl's main does.
func TestMain(m *testing.M) {
	if code, ok := fn.ServeIfRequested(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
