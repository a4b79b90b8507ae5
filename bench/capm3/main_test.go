package capm3

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestMain runs the emulator when this binary is re-executed as its
// child (see startEmulator), and otherwise quiets controller-runtime's
// complaint that no logger is set and client-go's notes on watches ending.
func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	if os.Getenv(childEnv) == emulatorChild {
		if err := serveEmulator(); err != nil {
			fmt.Fprintln(os.Stderr, "emulator:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
