package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// DownOptions configure Down.
type DownOptions struct {
	StateDir string
	// Purge removes the state directory (data, PKI, kubeconfigs, logs) too.
	Purge    bool
	Progress io.Writer
}

// DownResult says what Down did.
type DownResult struct {
	// Stopped names the components whose processes were stopped.
	Stopped []string
	// Stale names recorded components whose processes were already gone.
	Stale  []string
	Purged bool
}

// stopGrace is how long a component gets to exit after SIGTERM.
const stopGrace = 20 * time.Second

// Down stops the processes recorded in the state directory, newest first,
// waiting for each to exit before the next, and never signals a process
// whose PID was reused by another program.
func Down(opts DownOptions) (*DownResult, error) {
	if opts.StateDir == "" {
		opts.StateDir = DefaultStateDir()
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	p := paths{root: opts.StateDir}
	res := &DownResult{}
	if _, err := os.Stat(p.root); errors.Is(err, os.ErrNotExist) {
		return res, nil
	}
	unlock, err := lockState(p)
	if err != nil {
		return nil, err
	}
	st, err := readState(p.state())
	if err != nil && !opts.Purge {
		unlock()
		return nil, err
	}
	if st != nil {
		for i := len(st.Processes) - 1; i >= 0; i-- {
			r := st.Processes[i]
			if !r.Alive() {
				res.Stale = append(res.Stale, r.Component)
				continue
			}
			progressf(opts.Progress, "stopping %s (pid %d)", r.Component, r.PID)
			if err := r.Stop(stopGrace); err != nil {
				unlock()
				return res, err
			}
			res.Stopped = append(res.Stopped, r.Component)
		}
		if err := os.Remove(p.state()); err != nil && !errors.Is(err, os.ErrNotExist) {
			unlock()
			return res, fmt.Errorf("removing %s: %w", p.state(), err)
		}
	}
	unlock()
	if opts.Purge {
		if err := os.RemoveAll(p.root); err != nil {
			return res, fmt.Errorf("purging %s: %w", p.root, err)
		}
		res.Purged = true
	}
	return res, nil
}

// stopAll stops every live recorded process, newest first.
func stopAll(st *State, progress io.Writer) error {
	var errs []error
	for i := len(st.Processes) - 1; i >= 0; i-- {
		r := st.Processes[i]
		if r.Alive() {
			progressf(progress, "stopping %s (pid %d)", r.Component, r.PID)
			errs = append(errs, r.Stop(stopGrace))
		}
	}
	return errors.Join(errs...)
}
