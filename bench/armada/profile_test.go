package armada

import (
	"context"
	"flag"
	"os"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/airshipit/airship-go/internal/armada/armadaoperator"
)

// profileInProcess runs the operator inside the benchmark process, with its
// default options (ARMADA_BENCH_OPERATOR_ARGS applies too), and writes a CPU
// profile of the run to path. Only for finding where time goes: peak RSS
// and CPU time are not reported in this mode.
func profileInProcess(b *testing.B, cfg *rest.Config, path string) (stop func()) {
	b.Helper()
	o := armadaoperator.DefaultOptions()
	o.LeaderElection, o.MetricsAddr, o.ProbeAddr, o.SkipControllerNameValidation = false, "0", "0", true
	fs := flagSet(&o)
	if err := fs.Parse(strings.Fields(os.Getenv("ARMADA_BENCH_OPERATOR_ARGS"))); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := armadaoperator.NewManager(ctx, cfg, o, logr.Discard())
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}
}

func flagSet(o *armadaoperator.Options) *flag.FlagSet {
	fs := flag.NewFlagSet("armada-operator", flag.ContinueOnError)
	o.BindFlags(fs)
	return fs
}
