// Package runlog is where a site's runs are recorded on this machine: one
// JSON line per run of a phase or plan, whether `airshipctl phase run`,
// `plan run` or the dashboard ran it, so the dashboard can show each
// phase's last run and how long it took. The dashboard's audit log lives
// beside it.
//
// The directory is <state>/dashboard/<manifest>, <state> being the parent
// of the phases' state directory (genericcontainer.StateDir:
// $AIRSHIP_PHASE_STATE_DIR, else ~/.airship/state/phases). Files are 0600
// in 0700 directories; a record holds no output, only what airshipctl
// itself wrote about the run.
package runlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/airshipit/airship-go/internal/phase/executors/genericcontainer"
)

// Record is one run (the dashboard's Run without its progress lines).
type Record struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"` // phase or plan
	Name    string    `json:"name"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end,omitzero"`
	Seconds float64   `json:"seconds"`
	// Result is succeeded or failed.
	Result  string `json:"result"`
	Message string `json:"message,omitempty"`
	By      string `json:"by,omitempty"`
}

// Dir is where a site's runs and actions are recorded.
func Dir(manifest string) string {
	return filepath.Join(filepath.Dir(genericcontainer.StateDir()), "dashboard", manifest)
}

// RunsPath is the run log of a site; AuditPath its dashboard's audit log.
func RunsPath(manifest string) string  { return filepath.Join(Dir(manifest), "runs.jsonl") }
func AuditPath(manifest string) string { return filepath.Join(Dir(manifest), "audit.jsonl") }

// Append appends v as one JSON line to a 0600 file, creating its
// directory (0700) when needed.
func Append(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		_ = f.Close() // the write's error is the one to report
		return err
	}
	return f.Close()
}
