package harness

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// ChildEnv names the child a benchmark's test binary is re-executed as
// (see Main): a side of a comparison, or a server, in its own process so
// that its peak RSS is its own.
const ChildEnv = "BENCH_CHILD"

// Main is the TestMain of a benchmark package. It quiets
// controller-runtime's complaint that no logger is set and client-go's
// notes on watches ending (the benchmarks' clients log nothing worth
// reading). Then, when $BENCH_CHILD names one of children, it runs that
// child and exits 1 on its error, 0 otherwise; else it runs the tests.
func Main(m *testing.M, children map[string]func() error) {
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	if name := os.Getenv(ChildEnv); name != "" {
		if run, ok := children[name]; ok {
			if err := run(); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
	}
	os.Exit(m.Run())
}
