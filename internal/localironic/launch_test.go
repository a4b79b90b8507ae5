package localironic

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/process"
)

// lockHolder holds SQLite's write lock on a database for a while: a
// transaction of another process, longer than the 5 s a writer waits.
const lockHolder = `
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
c.execute("COMMIT")
`

// nodeWriter saves a node through Ironic's database API, as a conductor
// does on every node change.
const nodeWriter = `
import sys
import ironic.cmd  # Ironic's eventlet monkey patching
from ironic.common import service
service.prepare_service("ironic", [sys.argv[0], "--config-file", sys.argv[1]])
from ironic.db import api as dbapi
db = dbapi.get_instance()
node = db.get_node_by_name("locked-node")
db.update_node(node.id, {"extra": {"written": "yes"}})
print("updated", flush=True)
`

// A node save that meets another process's write transaction longer than
// SQLite's wait fails with "database is locked" when Ironic's code runs
// as it is; through launch.py it is retried and succeeds once the lock is
// released.
func TestLaunchRetriesLockedDatabase(t *testing.T) {
	requireIronic(t)
	state := t.TempDir()
	inst, err := Up(t.Context(), Options{StateDir: state, ServeImagesInProcess: true, StopWithCaller: true, FakeHardware: true})
	if err != nil {
		t.Fatal(err)
	}
	if code, body := call(t, http.MethodPost, inst.APIURL+"/v1/nodes", nil, map[string]any{"name": "locked-node", "driver": "fake-hardware"}); code != http.StatusCreated {
		t.Fatalf("creating the node: %d %v", code, body)
	}
	if err := inst.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	p := paths{root: state}
	writer := filepath.Join(t.TempDir(), "writer.py")
	if err := os.WriteFile(writer, []byte(nodeWriter), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		argv     []string
		wantOK   bool
		wantText string
	}{
		{"as Ironic runs it", []string{writer, p.config()}, false, "database is locked"},
		{"through launch.py", []string{p.launcher(), writer, p.config()}, true, "updated"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			holder := exec.CommandContext(ctx, DefaultPython, "-c", lockHolder, p.database(), "8")
			out, err := holder.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := holder.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
			if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
				t.Fatalf("lock holder: %q %v", line, err)
			}
			logStart := fileSize(p.log())
			got, err := exec.CommandContext(ctx, DefaultPython, tt.argv...).CombinedOutput()
			// Ironic's logging sends an uncaught error to its log file.
			if (err == nil) != tt.wantOK || !strings.Contains(string(got), tt.wantText) && !logged(p.log(), logStart, tt.wantText) {
				t.Fatalf("writer: err %v, want success %v and %q in its output or %s:\n%s\n%s", err, tt.wantOK, tt.wantText, p.log(), tail(string(got), 2000), process.LogTail(p.log(), 10))
			}
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
