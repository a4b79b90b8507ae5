package process

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/test/testtool"
)

func TestStartStopOnlyOwnProcess(t *testing.T) {
	sleep := testtool.Path(t, "sleep")
	log := filepath.Join(t.TempDir(), "logs", "sleeper.log")
	s, err := Start(Spec{Component: "sleeper", Binary: sleep, Args: []string{"60"}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Record.Alive() {
		t.Fatal("started process not alive")
	}
	if s.Record.Component != "sleeper" || s.Record.Binary != sleep || s.Record.Log != log || s.Record.StartTicks == 0 {
		t.Errorf("record %+v", s.Record)
	}
	// A record with the same PID but another start time is somebody else's process.
	foreign := s.Record
	foreign.StartTicks++
	if foreign.Alive() {
		t.Fatal("record with wrong start time reported alive")
	}
	if err := foreign.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if !s.Record.Alive() {
		t.Fatal("stop of a foreign record killed our process")
	}
	if err := s.Record.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if s.Record.Alive() {
		t.Fatal("process alive after stop")
	}
	select {
	case <-s.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("exit not observed")
	}
	if err := s.Record.Stop(time.Second); err != nil {
		t.Errorf("stopping a gone process: %v", err)
	}
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("log mode %v, want 0600", fi.Mode().Perm())
	}
}

// A process that ignores SIGTERM is killed after the grace period.
func TestStopEscalatesToKill(t *testing.T) {
	sh := testtool.Path(t, "sh")
	log := filepath.Join(t.TempDir(), "stubborn.log")
	s, err := Start(Spec{Component: "stubborn", Binary: sh, Args: []string{"-c", "trap '' TERM; echo ready; while :; do sleep 1; done"}, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(LogTail(log, 5), "ready") {
		if time.Now().After(deadline) {
			t.Fatalf("the shell never set its trap; log: %s", LogTail(log, 5))
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	if err := s.Record.Stop(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if s.Record.Alive() {
		t.Fatal("alive after Stop")
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Errorf("stopped in %v: SIGTERM should have been ignored", time.Since(start))
	}
}

func TestStartAppendsLogAndUsesEnvAndDir(t *testing.T) {
	sh := testtool.Path(t, "sh")
	dir := t.TempDir()
	log := filepath.Join(dir, "out.log")
	if err := os.WriteFile(log, []byte("earlier\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Start(Spec{Component: "echo", Binary: sh, Args: []string{"-c", "echo $GREETING; pwd"}, Log: log, Dir: dir, Env: []string{"GREETING=hello"}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("exit not observed")
	}
	got := LogTail(log, 10)
	lines := strings.Split(got, "\n")
	if len(lines) != 4 || lines[0] != "earlier" || !strings.HasPrefix(lines[1], "=== echo starting ") || lines[2] != "hello" || lines[3] != dir {
		t.Errorf("log:\n%s", got)
	}
	if tail := LogTail(log, 1); tail != dir {
		t.Errorf("LogTail(1) = %q", tail)
	}
	if LogTail(filepath.Join(dir, "missing"), 3) != "" {
		t.Error("LogTail of a missing file is not empty")
	}
}

func TestStartFailsForMissingBinary(t *testing.T) {
	_, err := Start(Spec{Component: "ghost", Binary: filepath.Join(t.TempDir(), "none"), Log: filepath.Join(t.TempDir(), "g.log")})
	if err == nil || !strings.Contains(err.Error(), "starting ghost") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name      string
		data      string
		wantState byte
		wantTicks uint64
		wantErr   bool
	}{
		{"plain", "42 (sleep) S 1 42 42 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 123456 1000 100", 'S', 123456, false},
		{"name with spaces and parens", "42 (a (b) c) Z 1 42 42 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 99 1000 100", 'Z', 99, false},
		{"too short", "42 (x) S 1 2 3", 0, 0, true},
		{"no parens", "42 x S", 0, 0, true},
		{"bad ticks", "42 (x) S 1 42 42 0 -1 4194304 100 0 0 0 0 0 0 0 20 0 1 0 notanumber 1000 100", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := parseProcStat(42, []byte(tt.data))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && (st.state != tt.wantState || st.startTicks != tt.wantTicks) {
				t.Errorf("got %c %d, want %c %d", st.state, st.startTicks, tt.wantState, tt.wantTicks)
			}
		})
	}
}

// childEnv makes the test binary the parent of TestStopWithParent: it
// starts sleep with StopWithParent, prints its PID and exits.
const childEnv = "AIRSHIP_PROCESS_TEST_PARENT"

func TestMain(m *testing.M) {
	if sleep := os.Getenv(childEnv); sleep != "" {
		s, err := Start(Spec{Component: "orphan", Binary: sleep, Args: []string{"60"}, Log: os.Getenv(childEnv + "_LOG"), StopWithParent: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(s.Record.PID, s.Record.StartTicks)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStopWithParent(t *testing.T) {
	sleep := testtool.Path(t, "sleep")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+sleep, childEnv+"_LOG="+filepath.Join(t.TempDir(), "orphan.log"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("parent: %v", err)
	}
	var r Record
	if _, err := fmt.Sscan(string(out), &r.PID, &r.StartTicks); err != nil {
		t.Fatalf("parent printed %q: %v", out, err)
	}
	t.Cleanup(func() { _ = r.Stop(time.Second) })
	if !r.WaitGone(10 * time.Second) {
		t.Fatalf("pid %d outlived the process that started it", r.PID)
	}
}
