package capienv

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cluster/capilocal"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// The manager processes are internal/cluster/capilocal's; these names keep
// the tests' spelling.
type (
	// Options configure Start.
	Options = capilocal.Options
	// Manager is one running manager process.
	Manager = capilocal.Manager
	// Env is the set of managers started for one cluster.
	Env = capilocal.Env
)

// Version is the Cluster API release the manager binaries are built from.
const Version = capilocal.Version

// Names of the manager binaries hack/testbin/build.sh writes.
const (
	CoreManager                = capilocal.CoreManager
	KubeadmBootstrapManager    = capilocal.KubeadmBootstrapManager
	KubeadmControlPlaneManager = capilocal.KubeadmControlPlaneManager
)

// Binaries maps a clusterctl provider label to the binary that runs it.
var Binaries = capilocal.Binaries

// DefaultSyncPeriod is the managers' sync period unless Options say otherwise.
const DefaultSyncPeriod = capilocal.DefaultSyncPeriod

// Start starts the managers of every provider `clusterctl init` installed
// into env and stops them when the test ends. A missing binary skips the
// test, or fails it when testenv.RequireEnv is set. On failure the tail of
// every manager's log is printed.
func Start(t testing.TB, env *testenv.Env, opts Options) *Env {
	t.Helper()
	if opts.LogDir == "" {
		opts.LogDir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout(opts))
	defer cancel()
	e, err := capilocal.New(ctx, env.Config, env.Kubeconfig, opts)
	if err != nil {
		if errors.Is(err, testenv.ErrNoBinaries) && os.Getenv(testenv.RequireEnv) == "" {
			t.Skipf("skipping: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range e.Managers {
				t.Logf("%s log (%s), last lines:\n%s", filepath.Base(m.Binary), m.Log, m.Tail(40))
			}
		}
		if err := e.Stop(); err != nil {
			t.Errorf("stopping Cluster API managers: %v", err)
		}
	})
	return e
}

func timeout(opts Options) time.Duration {
	if opts.Timeout > 0 {
		return opts.Timeout
	}
	return 2 * time.Minute
}
