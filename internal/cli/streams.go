package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// IOStreams are the standard streams a command reads and writes; tests swap
// them for buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// StdStreams returns the process's standard input, output and error.
func StdStreams() IOStreams {
	return IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// ExitError carries a specific exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode maps an error from a command to the process exit code: 0 for
// nil, the code of an ExitError, and 1 for anything else.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}

// Synchronized returns streams whose writers are safe for concurrent use,
// for commands that run work in parallel.
func (s IOStreams) Synchronized() IOStreams {
	return IOStreams{In: s.In, Out: &lockedWriter{w: s.Out}, ErrOut: &lockedWriter{w: s.ErrOut}}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
