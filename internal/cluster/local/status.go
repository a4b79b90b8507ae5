package local

import (
	"context"
	"fmt"
	"time"
)

// Status values of a component.
const (
	StatusHealthy   = "Healthy"
	StatusUnhealthy = "Unhealthy"
	StatusExited    = "Exited"
)

// ComponentStatus is one row of `cluster local status`.
type ComponentStatus struct {
	Name     string `json:"name"`
	PID      int    `json:"pid"`
	Status   string `json:"status"`
	Endpoint string `json:"endpoint,omitempty"`
	Message  string `json:"message,omitempty"`
	Log      string `json:"log,omitempty"`
}

// ClusterStatus is what `cluster local status` shows.
type ClusterStatus struct {
	// Running is true when a state file exists.
	Running    bool              `json:"running"`
	Healthy    bool              `json:"healthy"`
	StateDir   string            `json:"stateDir"`
	Server     string            `json:"server,omitempty"`
	Kubeconfig string            `json:"kubeconfig,omitempty"`
	Components []ComponentStatus `json:"components"`
	NodesReady int               `json:"nodesReady"`
	Nodes      int               `json:"nodes"`
	Message    string            `json:"message,omitempty"`
}

// GetStatus inspects the cluster recorded in stateDir without changing it.
func GetStatus(ctx context.Context, stateDir string) (*ClusterStatus, error) {
	if stateDir == "" {
		stateDir = DefaultStateDir()
	}
	p := paths{root: stateDir}
	cs := &ClusterStatus{StateDir: stateDir}
	st, err := readState(p.state())
	if err != nil {
		return nil, err
	}
	if st == nil {
		cs.Message = "no local cluster is running; start one with `airshipctl cluster local up`"
		return cs, nil
	}
	cs.Running = true
	cs.Server = st.APIServerURL
	cs.Kubeconfig = st.Kubeconfig
	h, err := newHealth(p)
	if err != nil {
		return nil, err
	}
	cs.Healthy = true
	for _, r := range st.Processes {
		c := componentStatus(ctx, h, r)
		if c.Status != StatusHealthy {
			cs.Healthy = false
		}
		cs.Components = append(cs.Components, c)
	}
	if len(st.Processes) < st.wantProcesses() {
		cs.Healthy = false
		cs.Message = "start-up did not finish"
	}
	cs.Nodes = st.Nodes
	if kc, err := clientset(st.Kubeconfig); err == nil {
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ready, total, err := countNodes(nctx, kc)
		cancel()
		if err == nil {
			cs.NodesReady, cs.Nodes = ready, total
		} else if cs.Message == "" {
			cs.Message = fmt.Sprintf("cannot list nodes: %v", err)
		}
	}
	if cs.NodesReady < st.Nodes {
		cs.Healthy = false
	}
	return cs, nil
}

// componentStatus checks that a recorded process is alive and healthy.
func componentStatus(ctx context.Context, h *health, r ProcessRecord) ComponentStatus {
	c := ComponentStatus{Name: r.Component, PID: r.PID, Endpoint: r.HealthURL, Log: r.Log}
	if !r.Alive() {
		c.Status, c.Message = StatusExited, "process is gone (stale PID record); see its log"
		return c
	}
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := h.probe(pctx, r.Component, r.HealthURL); err != nil {
		c.Status, c.Message = StatusUnhealthy, err.Error()
	} else {
		c.Status = StatusHealthy
	}
	return c
}

// inspect reports whether every recorded component is alive and healthy,
// and what is wrong otherwise.
func inspect(ctx context.Context, p paths, st *State) (bool, []string) {
	h, err := newHealth(p)
	if err != nil {
		return false, []string{err.Error()}
	}
	var problems []string
	if len(st.Processes) < st.wantProcesses() {
		problems = append(problems, "start-up did not finish")
	}
	for _, r := range st.Processes {
		if c := componentStatus(ctx, h, r); c.Status != StatusHealthy {
			problems = append(problems, fmt.Sprintf("%s (pid %d): %s: %s", r.Component, r.PID, c.Status, c.Message))
		}
	}
	return len(problems) == 0, problems
}
