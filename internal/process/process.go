package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KillWait bounds the wait for a process to vanish after SIGKILL.
const KillWait = 10 * time.Second

// pollInterval is how often Stop checks whether a process has exited.
const pollInterval = 50 * time.Millisecond

// Record identifies one started process. It is stored as JSON in state
// files, so its field names are stable.
type Record struct {
	Component string `json:"component"`
	PID       int    `json:"pid"`
	// StartTicks is the process start time from /proc/<pid>/stat; a PID
	// reused by another program has a different one, so it is never signalled.
	StartTicks uint64 `json:"startTicks"`
	Binary     string `json:"binary"`
	Log        string `json:"log"`
	// HealthURL is what a status check probes, if the caller sets it.
	HealthURL string `json:"healthURL,omitempty"`
}

// Spec describes a process to start.
type Spec struct {
	// Component names the process in records, logs and errors.
	Component string
	// Binary is the program's path; Args its arguments.
	Binary string
	Args   []string
	// Log is the file stdout and stderr are appended to (created 0600, its
	// directory 0700).
	Log string
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Env is the environment; nil means the caller's.
	Env []string
	// StopWithParent has the kernel send SIGTERM to the process when the
	// process that started it exits, even killed: for processes a test or
	// another long-lived Go program owns, which must not outlive it.
	StopWithParent bool
}

// Started is a process launched by Start.
type Started struct {
	Record Record
	exited chan struct{}
}

// Exited is closed when the process exits, while the starting process lives.
func (s *Started) Exited() <-chan struct{} { return s.exited }

// Start launches s.Binary in its own process group with stdout and stderr
// appended to s.Log, after a line naming the component and the time.
func Start(s Spec) (*Started, error) {
	if err := os.MkdirAll(filepath.Dir(s.Log), 0o700); err != nil {
		return nil, fmt.Errorf("creating log directory of %s: %w", s.Component, err)
	}
	logFile, err := os.OpenFile(s.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening log for %s: %w", s.Component, err)
	}
	// The child holds its own descriptor; ours only wrote the line below.
	defer func() { _ = logFile.Close() }()
	if _, err := fmt.Fprintf(logFile, "=== %s starting %s at %s\n", s.Component, s.Binary, time.Now().Format(time.RFC3339)); err != nil {
		return nil, fmt.Errorf("writing log of %s: %w", s.Component, err)
	}

	cmd := exec.Command(s.Binary, s.Args...) //nolint:noctx // the process outlives this command; its owner stops it by its Record
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.StopWithParent {
		// The kernel sends it when the starting thread ends; the Go
		// runtime ends a thread only when a goroutine locked to it
		// (runtime.LockOSThread) exits, so call Start from an unlocked
		// goroutine, as tests and commands do.
		cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", s.Component, err)
	}
	ticks, err := StartTicks(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("reading start time of %s (pid %d): %w", s.Component, cmd.Process.Pid, err)
	}
	st := &Started{
		Record: Record{
			Component: s.Component, PID: cmd.Process.Pid, StartTicks: ticks, Binary: s.Binary, Log: s.Log,
		},
		exited: make(chan struct{}),
	}
	// Reap the child while this process lives; after it exits, init does.
	go func() {
		_ = cmd.Wait()
		close(st.exited)
	}()
	return st, nil
}

// StartTicks reads field 22 (starttime) of /proc/<pid>/stat.
func StartTicks(pid int) (uint64, error) {
	st, err := readProcStat(pid)
	if err != nil {
		return 0, err
	}
	return st.startTicks, nil
}

type procStat struct {
	state      byte
	startTicks uint64
}

func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(pid, data)
}

func parseProcStat(pid int, data []byte) (procStat, error) {
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(data[i+2:]))
	// fields[0] is field 3 (state); starttime is field 22, i.e. fields[19].
	if len(fields) < 20 || len(fields[0]) == 0 {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	ticks, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat: %w", pid, err)
	}
	return procStat{state: fields[0][0], startTicks: ticks}, nil
}

// Alive reports whether the recorded process still runs: same PID, same
// start time, not a zombie.
func (r Record) Alive() bool {
	if r.PID <= 0 {
		return false
	}
	st, err := readProcStat(r.PID)
	if err != nil {
		return false
	}
	return st.startTicks == r.StartTicks && st.state != 'Z' && st.state != 'X'
}

// Stop sends SIGTERM, waits up to grace for the process to exit, then sends
// SIGKILL and waits up to KillWait. It never signals a process that is not
// the recorded one, and a process already gone is no error.
func (r Record) Stop(grace time.Duration) error {
	if !r.Alive() {
		return nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s (pid %d): %w", r.Component, r.PID, err)
	}
	if r.WaitGone(grace) {
		return nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s (pid %d): %w", r.Component, r.PID, err)
	}
	if r.WaitGone(KillWait) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", r.Component, r.PID)
}

// WaitGone polls until the recorded process is no longer alive or d has
// passed, and reports whether it is gone.
func (r Record) WaitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !r.Alive() {
			return true
		}
		time.Sleep(pollInterval)
	}
	return !r.Alive()
}

// LogTail returns the last n lines of a log file, for error messages; ""
// when it cannot be read.
func LogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
