package localironic

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Down stops the processes Up started for the state directory (each only
// if it still is the recorded process: same PID, same start time) and
// clears their records. The database, the logs, the configuration and the
// images stay, so a later Up restarts the site's Ironic with its nodes. A
// directory without state is no error.
func Down(ctx context.Context, stateDir string) error {
	root, err := filepath.Abs(stateDir)
	if err != nil {
		return fmt.Errorf("state directory %s: %w", stateDir, err)
	}
	p := paths{root: root}
	if _, err := os.Stat(p.state()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	unlock, err := lockState(ctx, p)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := readState(p.state())
	if err != nil || st == nil {
		return err
	}
	if err := stopAll(st.Processes); err != nil {
		return err
	}
	st.Processes = nil
	return writeState(p.state(), st)
}

// Status is what a state directory's Ironic is doing.
type Status struct {
	StateDir string `json:"stateDir"`
	// Recorded is false when Up never ran there.
	Recorded bool `json:"recorded"`
	// Running is true when the recorded Ironic process is alive.
	Running         bool            `json:"running"`
	APIURL          string          `json:"apiURL,omitempty"`
	HTTPURL         string          `json:"httpURL,omitempty"`
	DeployISOURL    string          `json:"deployISOURL,omitempty"`
	Auth            AuthMode        `json:"auth,omitempty"`
	CredentialsFile string          `json:"credentialsFile,omitempty"`
	Log             string          `json:"log,omitempty"`
	Processes       []ProcessStatus `json:"processes"`
}

// ProcessStatus is one recorded process.
type ProcessStatus struct {
	Component string `json:"component"`
	PID       int    `json:"pid"`
	Alive     bool   `json:"alive"`
}

// GetStatus reads the state directory's record and checks each process is
// alive; it reads no network.
func GetStatus(stateDir string) (*Status, error) {
	root, err := filepath.Abs(stateDir)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", stateDir, err)
	}
	p := paths{root: root}
	s := &Status{StateDir: root, Processes: []ProcessStatus{}}
	st, err := readState(p.state())
	if err != nil || st == nil {
		return s, err
	}
	s.Recorded = true
	s.APIURL, s.HTTPURL, s.DeployISOURL = st.APIURL, st.HTTPURL, st.DeployISOURL
	s.Auth, s.CredentialsFile, s.Log = st.Auth, st.CredentialsFile, st.Log
	for _, r := range st.Processes {
		alive := r.Alive()
		s.Processes = append(s.Processes, ProcessStatus{Component: r.Component, PID: r.PID, Alive: alive})
		if r.Component == ComponentIronic && alive {
			s.Running = true
		}
	}
	return s, nil
}
