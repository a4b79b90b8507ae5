package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/process"
)

// State is what state.json records about a running cluster.
type State struct {
	// APIServerURL is https://127.0.0.1:<port>, or the nodes' bridge
	// address with real nodes.
	APIServerURL string `json:"apiServerURL"`
	// Kubeconfig is the admin kubeconfig for users.
	Kubeconfig string `json:"kubeconfig"`
	// Nodes is how many kwok Nodes were requested.
	Nodes int `json:"nodes"`
	// RealNodeCount is how many real nodes were requested.
	RealNodeCount int `json:"realNodeCount,omitempty"`
	// HostChanged is set once Up recorded the host (nodes/host-before.json)
	// and began to change it for real nodes: only then does stopping the
	// cluster put the host back (a start refused because another cluster
	// owns the bridge must not touch it).
	HostChanged bool `json:"hostChanged,omitempty"`
	// RealNodes are the real nodes started, in start order.
	RealNodes []RealNode `json:"realNodes,omitempty"`
	// Ports of every listener, by name.
	Ports map[string]int `json:"ports"`
	// Processes started, in start order.
	Processes []ProcessRecord `json:"processes"`
}

// ProcessRecord identifies one started process (HealthURL is probed by status).
type ProcessRecord = process.Record

func readState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("reading %s: %w (remove the file or run `airshipctl cluster local down --purge`)", path, err)
	}
	return &s, nil
}

func writeState(path string, s *State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding state: %w", err)
	}
	return fileutil.WriteAtomic(path, append(data, '\n'), 0o600)
}

// wantProcesses is how many processes a finished start-up runs: the
// control plane's, and per real node a containerd and a kubelet, plus the
// host's kube-proxy.
func (s *State) wantProcesses() int {
	n := len(Components)
	if s.RealNodeCount > 0 {
		n += 2*s.RealNodeCount + 1
	}
	return n
}
