package genericcontainer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// StateDirEnv overrides StateDir.
const StateDirEnv = "AIRSHIP_PHASE_STATE_DIR"

// StateDir is where the last run of each GenericContainer phase is
// recorded: $AIRSHIP_PHASE_STATE_DIR, else ~/.airship/state/phases. A run
// changes nothing a cluster could report (a script, a function writing
// files), so its result is kept here rather than in a cluster.
func StateDir() string {
	if d := os.Getenv(StateDirEnv); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "airship-state", "phases")
	}
	return filepath.Join(home, ".airship", "state", "phases")
}

// lastRun is the state file of a phase: what ran and how it ended. It
// holds no output, environment or kubeconfig: only the error text
// airshipctl itself wrote.
type lastRun struct {
	Phase     string    `json:"phase"`
	Executor  string    `json:"executor"`
	Image     string    `json:"image"`
	Mode      Mode      `json:"mode"`
	Started   time.Time `json:"started"`
	Finished  time.Time `json:"finished"`
	Succeeded bool      `json:"succeeded"`
	Error     string    `json:"error,omitempty"`
	// Outputs is the number of documents written (to Sink, or printed).
	Outputs int    `json:"outputs"`
	Sink    string `json:"sink,omitempty"`
}

// statePath is the phase's state file: one directory per site (its
// target path and site directory), one file per phase.
func (e *Executor) statePath() string {
	sum := sha256.Sum256([]byte(e.cfg.TargetPath + "\x00" + e.cfg.SiteDir))
	return filepath.Join(StateDir(), hex.EncodeToString(sum[:8]), e.cfg.PhaseName+".json")
}

func (e *Executor) saveState(p *Plan, start time.Time, res runResult, runErr error) error {
	r := lastRun{
		Phase: e.cfg.PhaseName, Executor: e.api.Kind + "/" + e.api.Name, Image: p.Image, Mode: p.Mode,
		Started: start.UTC(), Finished: e.now().UTC(), Succeeded: runErr == nil, Outputs: res.outputs, Sink: p.Sink,
	}
	if runErr != nil {
		r.Error = runErr.Error()
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := e.statePath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("recording the run for phase status: %w", err)
	}
	if err := fileutil.WriteAtomic(path, data, 0o600); err != nil {
		return fmt.Errorf("recording the run for phase status: %w", err)
	}
	return nil
}

// Status reports the last run recorded on this machine: one object, the
// executor document, applied once it has run and ready when that run
// succeeded.
func (e *Executor) Status(context.Context) (*executor.Status, error) {
	st := &executor.Status{Phase: e.cfg.PhaseName}
	obj := executor.ObjectStatus{ID: e.api.Kind + "/" + e.api.Name}
	data, err := os.ReadFile(e.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		st.Message = "never run on this machine (no record in " + StateDir() + ")"
		obj.Message = "not run"
		st.Objects = []executor.ObjectStatus{obj}
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("phase %q: reading its last run: %w", e.cfg.PhaseName, err)
	}
	var r lastRun
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("phase %q: reading its last run from %s: %w", e.cfg.PhaseName, e.statePath(), err)
	}
	obj.Applied = true
	obj.Ready = r.Succeeded
	took := r.Finished.Sub(r.Started).Round(100 * time.Millisecond)
	when := r.Finished.Local().Format(time.RFC3339)
	if r.Succeeded {
		obj.Message = fmt.Sprintf("succeeded %s in %s (%s, %s)", when, took, r.Image, r.Mode)
		if r.Sink != "" {
			obj.Message += fmt.Sprintf(", %d documents written to %s", r.Outputs, r.Sink)
		}
	} else {
		obj.Message = fmt.Sprintf("failed %s after %s (%s, %s): %s", when, took, r.Image, r.Mode, r.Error)
	}
	st.Message = "last run on this machine"
	st.Objects = []executor.ObjectStatus{obj}
	return st, nil
}
