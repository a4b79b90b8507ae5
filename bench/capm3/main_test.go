package capm3

import (
	"testing"

	"github.com/airshipit/airship-go/bench/internal/harness"
)

// TestMain runs the emulator when this binary is re-executed as its
// child (see startEmulator), and otherwise the benchmarks.
func TestMain(m *testing.M) {
	harness.Main(m, map[string]func() error{emulatorChild: serveEmulator})
}
