package document

import (
	"os"
	"testing"

	"github.com/airshipit/airship-go/internal/document/fn"
)

// TestMain lets the test binary act as the KRM functions that builds with
// fn.Runner run (the sops function, in the cache tests).
func TestMain(m *testing.M) {
	if code, ok := fn.ServeIfRequested(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
