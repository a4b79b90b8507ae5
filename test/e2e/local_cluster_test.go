//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// airshipctl builds the binary once per test run.
func airshipctl(t *testing.T) string { return build(t, "airshipctl") }

// build compiles cmd/NAME of this repository into a temporary directory.
func build(t *testing.T, name string) string {
	t.Helper()
	return buildPath(t, name, "./cmd/"+name)
}

// buildPath compiles the package at pkg (relative to the repository root)
// into a temporary directory as name.
func buildPath(t *testing.T, name, pkg string) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), name)
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return bin
}

type result struct {
	stdout, stderr string
	code           int
}

// lastErr is the last lines of the command's standard error, where its
// error is: a failure message leads with it, before the whole output.
func (r result) lastErr() string {
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-6):], "\n")
}

func run(t *testing.T, bin string, args ...string) result {
	t.Helper()
	// Not canceled with the test: cleanups run commands too (down,
	// demo-down), and the test stops what it starts itself.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", args, err)
	}
	return result{out.String(), errOut.String(), code}
}

func kubectlPath(t *testing.T) string {
	return testtool.Path(t, "kubectl", local.DefaultBinDir())
}

func requireBinaries(t *testing.T) {
	if missing := local.MissingBinaries(local.DefaultBinDir()); len(missing) > 0 {
		msg := "control-plane binaries missing: " + strings.Join(missing, ", ") + "; " + local.BuildHint
		testtool.Missing(t, "%s", msg)
	}
}

func recordedPIDs(t *testing.T, stateDir string) []int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(stateDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st local.State
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range st.Processes {
		pids = append(pids, p.PID)
	}
	return pids
}

func processGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// A zombie has exited; only its parent has not reaped it yet.
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && i+2 < len(data) && (data[i+2] == 'Z' || data[i+2] == 'X')
}

// TestLocalClusterLifecycle: up → kubectl lists the nodes → status healthy →
// a second up reports the running cluster → a crashed component shows in
// status and the next up repairs it → down --purge leaves no process and no state.
func TestLocalClusterLifecycle(t *testing.T) {
	requireBinaries(t)
	bin := airshipctl(t)
	kubectl := kubectlPath(t)
	stateDir := filepath.Join(t.TempDir(), "state")
	sd := "--state-dir=" + stateDir
	t.Cleanup(func() { run(t, bin, "cluster", "local", "down", "--purge", sd) })

	start := time.Now()
	up := run(t, bin, "cluster", "local", "up", sd, "--nodes=3")
	if up.code != 0 {
		t.Fatalf("up exited %d\nstdout:\n%s\nstderr:\n%s", up.code, up.stdout, up.stderr)
	}
	t.Logf("cluster local up took %s", time.Since(start).Round(time.Millisecond))
	kubeconfig := filepath.Join(stateDir, "kubeconfig")
	if !strings.Contains(up.stdout, "export KUBECONFIG="+kubeconfig) {
		t.Errorf("up does not say how to use the cluster:\n%s", up.stdout)
	}
	if !strings.Contains(up.stderr, "kube-apiserver is healthy") {
		t.Errorf("up showed no progress on stderr:\n%s", up.stderr)
	}
	if st, err := os.Stat(kubeconfig); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig %s: %v, mode must be 0600", kubeconfig, err)
	}

	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "get", "nodes", "--no-headers",
		"-o", "custom-columns=NAME:.metadata.name,READY:.status.conditions[?(@.type==\"Ready\")].status").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get nodes: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("kubectl lists %d nodes, want 3:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if !strings.HasSuffix(strings.TrimSpace(l), "True") {
			t.Errorf("node not Ready: %s", l)
		}
	}

	status := run(t, bin, "cluster", "local", "status", sd, "-o", "json")
	if status.code != 0 {
		t.Fatalf("status exited %d: %s %s", status.code, status.stdout, status.stderr)
	}
	var cs local.ClusterStatus
	if err := json.Unmarshal([]byte(status.stdout), &cs); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, status.stdout)
	}
	if !cs.Healthy || cs.NodesReady != 3 || len(cs.Components) != len(local.Components) {
		t.Fatalf("status = %+v, want healthy with 5 components and 3 ready nodes", cs)
	}
	for _, c := range cs.Components {
		if c.Status != local.StatusHealthy || c.PID <= 0 {
			t.Errorf("component %+v not healthy", c)
		}
	}
	table := run(t, bin, "cluster", "local", "status", sd)
	for _, want := range []string{"COMPONENT", "kube-scheduler", "Healthy", "Nodes: 3/3 Ready"} {
		if !strings.Contains(table.stdout, want) {
			t.Errorf("status table lacks %q:\n%s", want, table.stdout)
		}
	}

	again := run(t, bin, "cluster", "local", "up", sd)
	if again.code != 0 || !strings.Contains(again.stdout, "already running") {
		t.Fatalf("second up: code %d\n%s%s", again.code, again.stdout, again.stderr)
	}

	// A crashed component: status reports it and exits non-zero; up repairs.
	var schedPID int
	for _, c := range cs.Components {
		if c.Name == local.Scheduler {
			schedPID = c.PID
		}
	}
	if err := syscall.Kill(schedPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !processGone(schedPID) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	crashed := run(t, bin, "cluster", "local", "status", sd)
	if crashed.code == 0 || !strings.Contains(crashed.stdout, "Exited") {
		t.Fatalf("status after a crash: code %d, want non-zero and an Exited component\n%s", crashed.code, crashed.stdout)
	}
	repaired := run(t, bin, "cluster", "local", "up", sd)
	if repaired.code != 0 || !strings.Contains(repaired.stderr, "kube-scheduler (pid") {
		t.Fatalf("up after a crash: code %d\n%s\n%s", repaired.code, repaired.stdout, repaired.stderr)
	}
	if st := run(t, bin, "cluster", "local", "status", sd); st.code != 0 {
		t.Fatalf("status after repair: code %d\n%s", st.code, st.stdout)
	}

	pids := recordedPIDs(t, stateDir)
	down := run(t, bin, "cluster", "local", "down", "--purge", sd)
	if down.code != 0 {
		t.Fatalf("down exited %d: %s %s", down.code, down.stdout, down.stderr)
	}
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("process %d still running after down", pid)
		}
	}
	if _, err := os.Stat(stateDir); !os.IsNotExist(err) {
		t.Errorf("state directory left after down --purge: %v", err)
	}
}

// TestLocalClusterBadInput: a port in use and missing binaries give clear
// errors, a non-zero exit, and leave no process or state behind.
func TestLocalClusterBadInput(t *testing.T) {
	bin := airshipctl(t)

	t.Run("missing binaries", func(t *testing.T) {
		stateDir := filepath.Join(t.TempDir(), "state")
		r := run(t, bin, "cluster", "local", "up", "--state-dir="+stateDir, "--bin-dir="+t.TempDir())
		if r.code == 0 || !strings.Contains(r.stderr, "make testbin") || !strings.Contains(r.stderr, "kube-apiserver") {
			t.Fatalf("code %d, stderr:\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(stateDir, "state.json")); !os.IsNotExist(err) {
			t.Error("state.json written")
		}
	})

	t.Run("port in use", func(t *testing.T) {
		requireBinaries(t)
		l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }() // holds the port the test expects to be refused
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		stateDir := filepath.Join(t.TempDir(), "state")
		r := run(t, bin, "cluster", "local", "up", "--state-dir="+stateDir, "--port="+port)
		if r.code == 0 || !strings.Contains(r.stderr, "port "+port) {
			t.Fatalf("code %d, stderr:\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(stateDir, "state.json")); !os.IsNotExist(err) {
			t.Error("state.json written")
		}
		st := run(t, bin, "cluster", "local", "status", "--state-dir="+stateDir)
		if st.code == 0 || !strings.Contains(st.stdout, "no local cluster is running") {
			t.Errorf("status after failed up: code %d\n%s", st.code, st.stdout)
		}
	})

	t.Run("bad output format", func(t *testing.T) {
		r := run(t, bin, "cluster", "local", "status", "--state-dir="+t.TempDir(), "-o", "xml")
		if r.code == 0 || !strings.Contains(r.stderr, `unknown output format "xml"`) {
			t.Fatalf("code %d, stderr:\n%s", r.code, r.stderr)
		}
	})
}
