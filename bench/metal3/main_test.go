package metal3

import (
	"testing"

	"github.com/airshipit/airship-go/bench/internal/harness"
)

func TestMain(m *testing.M) {
	harness.Main(m, map[string]func() error{emulatorChild: runEmulatorChild})
}
