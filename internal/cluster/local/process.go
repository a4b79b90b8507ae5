package local

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

// started is a process launched by this package.
type started struct {
	rec    ProcessRecord
	exited chan struct{} // closed when the process exits, if it is our child
}

// startProcess launches binary with args in its own process group, so it
// outlives the command that started it, with stdout and stderr appended to logPath.
func startProcess(component, binary string, args []string, logPath string) (*started, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening log for %s: %w", component, err)
	}
	// The child holds its own descriptor; ours only wrote the line below.
	defer func() { _ = logFile.Close() }()
	fmt.Fprintf(logFile, "=== %s starting %s at %s\n", component, binary, time.Now().Format(time.RFC3339))

	cmd := exec.Command(binary, args...) //nolint:noctx // the component outlives this command; cluster local down stops it
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", component, err)
	}
	ticks, err := processStartTicks(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("reading start time of %s (pid %d): %w", component, cmd.Process.Pid, err)
	}
	s := &started{
		rec: ProcessRecord{
			Component: component, PID: cmd.Process.Pid, StartTicks: ticks, Binary: binary, Log: logPath,
		},
		exited: make(chan struct{}),
	}
	// Reap the child while this process lives; after it exits, init does.
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// processStartTicks reads field 22 (starttime) of /proc/<pid>/stat.
func processStartTicks(pid int) (uint64, error) {
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
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(data[i+2:]))
	// fields[0] is field 3 (state); starttime is field 22, i.e. fields[19].
	if len(fields) < 20 {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	ticks, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("malformed /proc/%d/stat: %w", pid, err)
	}
	return procStat{state: fields[0][0], startTicks: ticks}, nil
}

// alive reports whether the recorded process still runs: same PID, same
// start time, not a zombie.
func (r ProcessRecord) alive() bool {
	if r.PID <= 0 {
		return false
	}
	st, err := readProcStat(r.PID)
	if err != nil {
		return false
	}
	return st.startTicks == r.StartTicks && st.state != 'Z' && st.state != 'X'
}

// stop sends SIGTERM, waits up to grace for the process to exit, then sends
// SIGKILL and waits again. It never signals a process that is not the recorded one.
func (r ProcessRecord) stop(grace time.Duration) error {
	if !r.alive() {
		return nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s (pid %d): %w", r.Component, r.PID, err)
	}
	if waitGone(r, grace) {
		return nil
	}
	if err := syscall.Kill(r.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s (pid %d): %w", r.Component, r.PID, err)
	}
	if waitGone(r, 10*time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", r.Component, r.PID)
}

func waitGone(r ProcessRecord, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !r.alive() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !r.alive()
}

// logTail returns the last n lines of a log file, for error messages.
func logTail(path string, n int) string {
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
