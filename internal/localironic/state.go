package localironic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/process"
)

// Names in the state directory.
const (
	ConfigFileName      = "ironic.conf"
	DatabaseFileName    = "ironic.sqlite"
	StateFileName       = "state.json"
	CredentialsFileName = "credentials.yaml"
	HTPasswdFileName    = "htpasswd"
	LogFileName         = "logs/ironic.log"
	ImageServerLogName  = "logs/image-server.log"
	HTTPRootDirName     = "http"
	// DeployISOName is the deploy ISO's name in the image server's root.
	DeployISOName = "deploy.iso"
)

// Components recorded in state.json.
const (
	ComponentIronic      = "ironic"
	ComponentImageServer = "image-server"
)

// paths names the files of one state directory.
type paths struct{ root string }

func (p paths) config() string      { return filepath.Join(p.root, ConfigFileName) }
func (p paths) launcher() string    { return filepath.Join(p.root, "launch.py") }
func (p paths) database() string    { return filepath.Join(p.root, DatabaseFileName) }
func (p paths) state() string       { return filepath.Join(p.root, StateFileName) }
func (p paths) credentials() string { return filepath.Join(p.root, CredentialsFileName) }
func (p paths) htpasswd() string    { return filepath.Join(p.root, HTPasswdFileName) }
func (p paths) log() string         { return filepath.Join(p.root, LogFileName) }
func (p paths) imageLog() string    { return filepath.Join(p.root, ImageServerLogName) }
func (p paths) httpRoot() string    { return filepath.Join(p.root, HTTPRootDirName) }
func (p paths) deployISO() string   { return filepath.Join(p.httpRoot(), DeployISOName) }
func (p paths) tmp() string         { return filepath.Join(p.root, "tmp") }
func (p paths) locks() string       { return filepath.Join(p.root, "tmp", "locks") }
func (p paths) lock() string        { return filepath.Join(p.root, ".lock") }
func (p paths) cache(name string) string {
	return filepath.Join(p.root, "cache", name)
}

// State is state.json: what Up started and where it listens. Down clears
// Processes and keeps the rest, so a restart reuses the ports (nodes'
// driver_info names the deploy ISO's URL).
type State struct {
	Host     string `json:"host"`
	APIPort  int    `json:"apiPort"`
	HTTPPort int    `json:"httpPort"`
	// RPCPort is JSON-RPC's, with more than one conductor.
	RPCPort         int              `json:"rpcPort,omitempty"`
	APIURL          string           `json:"apiURL"`
	HTTPURL         string           `json:"httpURL"`
	HTTPRoot        string           `json:"httpRoot"`
	DeployISOURL    string           `json:"deployISOURL"`
	Auth            AuthMode         `json:"auth"`
	CredentialsFile string           `json:"credentialsFile,omitempty"`
	Log             string           `json:"log"`
	Processes       []process.Record `json:"processes"`
}

// readState returns nil, nil when there is no state.json.
func readState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return &st, nil
}

func writeState(path string, st *State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	if err := fileutil.WriteAtomic(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// record returns the recorded process of component, if any.
func (st *State) record(component string) (process.Record, bool) {
	if st == nil {
		return process.Record{}, false
	}
	for _, r := range st.Processes {
		if r.Component == component {
			return r, true
		}
	}
	return process.Record{}, false
}

// lockState takes the state directory's lock, waiting while another
// command holds it, until ctx ends.
func lockState(ctx context.Context, p paths) (func(), error) {
	f, err := os.OpenFile(p.lock(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", p.root, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close() // a lock file: no data in it
			return nil, fmt.Errorf("locking %s: %w", p.lock(), err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close() // a lock file: no data in it
			return nil, fmt.Errorf("another command holds %s: %w", p.lock(), context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close() // a lock file: no data in it
	}, nil
}
