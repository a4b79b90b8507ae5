package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
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
		for _, r := range st.Processes {
			if r.Alive() {
				res.Stopped = append([]string{r.Component}, res.Stopped...)
			} else {
				res.Stale = append([]string{r.Component}, res.Stale...)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := stopCluster(ctx, p, st, opts.Progress)
		cancel()
		if err != nil {
			unlock()
			return res, err
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

// stopCluster stops every live recorded process, newest first. With real
// nodes the kubelets and kube-proxy stop first, then each node's pods are
// stopped and removed through its containerd (containers do not end with
// containerd), then the rest stops and the host is put back as it was.
func stopCluster(ctx context.Context, p paths, st *State, progress io.Writer) error {
	var errs []error
	stop := func(r ProcessRecord) {
		if r.Alive() {
			progressf(progress, "stopping %s (pid %d)", r.Component, r.PID)
			errs = append(errs, r.Stop(stopGrace))
		}
	}
	isNodeAgent := func(c string) bool { return c == KubeProxy || strings.HasPrefix(c, "kubelet/") }
	for i := len(st.Processes) - 1; i >= 0; i-- {
		if isNodeAgent(st.Processes[i].Component) {
			stop(st.Processes[i])
		}
	}
	for _, n := range st.RealNodes {
		progressf(progress, "stopping the pods of %s", n.Name)
		errs = append(errs, stopPodSandboxes(ctx, n))
	}
	for i := len(st.Processes) - 1; i >= 0; i-- {
		if !isNodeAgent(st.Processes[i].Component) {
			stop(st.Processes[i])
		}
	}
	if st.HostChanged {
		if _, err := os.Stat(p.hostSnapshot()); err == nil {
			progressf(progress, "restoring the host (mounts, iptables chains, bridge %s, cgroups, sysctls)", nodeBridge)
			killLeftovers(st.RealNodes)
			errs = append(errs, restoreHost(ctx, p, st.RealNodes))
		}
	}
	return errors.Join(errs...)
}
