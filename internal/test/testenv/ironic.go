package testenv

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/process"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// ironicStartTimeout bounds one Ironic's start in a test (its API answers
// in a few seconds; the first run on a machine also creates the schema).
const ironicStartTimeout = 3 * time.Minute

// Ironic starts a real Ironic (internal/localironic) for the test in a
// temporary state directory, its image server running in the test
// process, and stops it when the test ends (or, should the test binary be
// killed, when it exits: StopWithCaller); if the test failed, the last
// lines of Ironic's log are logged. opts adjust the Options (Auth,
// FakeHardware, Tuning, ...). The database schema comes from the cache
// under the user cache directory, so a test pays only Ironic's start.
//
// Without /usr/bin/ironic the test fails when AIRSHIP_REQUIRE_TESTBIN is
// set and is skipped otherwise, naming `bash hack/setup.sh`.
func Ironic(t testing.TB, opts ...func(*localironic.Options)) *localironic.Instance {
	t.Helper()
	for _, bin := range []string{localironic.DefaultIronicBinary, localironic.DefaultDBSyncBinary} {
		if _, err := os.Stat(bin); err != nil {
			testtool.Missing(t, "Ironic is not installed (%s is missing): run `bash hack/setup.sh` as root", bin)
		}
	}
	o := localironic.Options{StateDir: t.TempDir(), ServeImagesInProcess: true, StopWithCaller: true}
	for _, f := range opts {
		f(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ironicStartTimeout)
	defer cancel()
	inst, err := localironic.Up(ctx, o)
	if err != nil {
		t.Fatalf("starting Ironic: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last lines of %s:\n%s", inst.LogFile, process.LogTail(inst.LogFile, 40))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := inst.Stop(ctx); err != nil {
			t.Errorf("stopping Ironic: %v", err)
		}
	})
	return inst
}
