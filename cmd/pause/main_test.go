package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/test/testtool"
)

// deadline bounds each wait for pause to reach a state; it only fails a
// test that would otherwise hang.
const deadline = time.Minute

// buildPause builds this command into a temporary directory.
func buildPause(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pause")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building pause: %v\n%s", err, out)
	}
	return bin
}

// startPause starts pause with SIGINT ignored, as that disposition is
// inherited, and waits until pause catches SIGINT: main asks for it after
// SIGTERM and SIGCHLD, so pause is then ready for all three.
func startPause(t *testing.T, bin string, attr *syscall.SysProcAttr) *exec.Cmd {
	t.Helper()
	signal.Ignore(syscall.SIGINT)
	cmd := exec.Command(bin) //nolint:noctx // stopped by signals; killed at cleanup
	cmd.SysProcAttr = attr
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Start()
	signal.Reset(syscall.SIGINT)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill() // a failed test's pause: its exit is of no interest
			_ = cmd.Wait()
		}
		if out.Len() > 0 {
			t.Errorf("pause printed %q", out.String())
		}
	})
	waitFor(t, "pause to catch SIGINT", func() (bool, error) {
		mask, err := statusMask(cmd.Process.Pid, "SigCgt")
		return mask&(1<<(uint(syscall.SIGINT)-1)) != 0, err
	})
	return cmd
}

// statusMask reads a signal mask (SigCgt, SigIgn) of /proc/PID/status.
func statusMask(pid int, field string) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

func waitFor(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("waited %s for %s (last error: %v)", deadline, what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// state is the state letter of /proc/PID/stat: Z for a process that has
// exited and is not yet reaped.
func state(pid int) (string, int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, err
	}
	// pid (comm) state ppid ...: comm may hold spaces, not ")".
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 2 {
		return "", 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	ppid, err := strconv.Atoi(f[1])
	return f[0], ppid, err
}

// running fails the test if pid, a child of the test, has exited.
func running(t *testing.T, pid int) {
	t.Helper()
	if st, _, err := state(pid); err != nil || st == "Z" {
		t.Fatalf("pause (pid %d) has exited before any signal stops it: state %q, %v", pid, st, err)
	}
}

// TestPauseStopsOnSignal: pause, ready, has not exited on its own, and
// exits 0 on SIGTERM or SIGINT. (That it stays up later, and through a
// SIGCHLD, is TestPauseReapsOrphans's.)
func TestPauseStopsOnSignal(t *testing.T) {
	bin := buildPause(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := startPause(t, bin, nil)
			running(t, cmd.Process.Pid)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if err != nil {
				t.Fatalf("pause after %s: %v", sig, err)
			}
		})
	}
}

// TestPauseReapsOrphans runs pause as the PID 1 of a new PID namespace, as
// in a pod sharing its process namespace, leaves an orphan to it there
// (a shell started in the namespace with nsenter backgrounds a sleep and
// exits), kills the orphan and waits until pause has reaped it; pause is
// then still up and exits 0 on SIGTERM. Needs root, for the namespace.
func TestPauseReapsOrphans(t *testing.T) {
	if os.Geteuid() != 0 {
		testtool.Missing(t, "reaping needs a PID namespace, so root")
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		t.Fatalf("nsenter (util-linux) enters pause's namespace: %v", err)
	}
	bin := buildPause(t)
	cmd := startPause(t, bin, &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID})
	pid := cmd.Process.Pid
	// The sleep outlives the test only if the test fails before killing it,
	// and then dies with pause's namespace at cleanup.
	out, err := exec.CommandContext(t.Context(), nsenter, "--target", strconv.Itoa(pid), "--pid", "--",
		"/bin/sh", "-c", "sleep 3600 >/dev/null 2>&1 & echo started").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "started" {
		t.Fatalf("nsenter: %v\n%s", err, out)
	}
	var orphan int
	waitFor(t, "the orphaned sleep to be pause's child", func() (bool, error) {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return false, err
		}
		for _, e := range entries {
			p, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if _, ppid, err := state(p); err == nil && ppid == pid {
				orphan = p
				return true, nil
			}
		}
		return false, nil
	})
	if err := syscall.Kill(orphan, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Unreaped, the killed sleep would stay a zombie under pause for good.
	waitFor(t, "pause to reap the orphan", func() (bool, error) {
		_, _, err := state(orphan)
		return os.IsNotExist(err), err
	})
	running(t, pid)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("pause after SIGTERM: %v", err)
	}
}
