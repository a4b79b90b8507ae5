package localironic

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"
)

// AuthMode is how Ironic's API authenticates its clients.
type AuthMode string

const (
	// AuthNoAuth accepts every request as an administrator's. Up allows it
	// only when every listener is on a loopback address.
	AuthNoAuth AuthMode = "noauth"
	// AuthHTTPBasic checks HTTP basic credentials against an htpasswd file
	// (bcrypt). Up generates one user; clients read it from CredentialsFile.
	AuthHTTPBasic AuthMode = "http_basic"
)

// Defaults of Options.
const (
	DefaultHost           = "127.0.0.1"
	DefaultIronicBinary   = "/usr/bin/ironic"
	DefaultDBSyncBinary   = "/usr/bin/ironic-dbsync"
	DefaultPython         = "/usr/bin/python3"
	DefaultStartTimeout   = 2 * time.Minute
	DefaultStopGrace      = 30 * time.Second
	defaultImageServerCmd = "serve-http"
)

// DefaultStateDir is $AIRSHIP_IRONIC_STATE_DIR, else ~/.airship/ironic.
func DefaultStateDir() string {
	if d := os.Getenv("AIRSHIP_IRONIC_STATE_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "airship-ironic")
	}
	return filepath.Join(home, ".airship", "ironic")
}

// Options configure Up. Only StateDir is required.
type Options struct {
	// StateDir holds everything of this Ironic: configuration, database,
	// logs, the image server's root and state.json.
	StateDir string
	// Host is the address both listeners bind and every URL names;
	// default 127.0.0.1.
	Host string
	// APIPort and HTTPPort are the ports of Ironic's API and of the image
	// server; 0 reuses the port recorded in the state directory by an
	// earlier Up, else picks a free one.
	APIPort  int
	HTTPPort int
	// Auth is the API's authentication; default AuthNoAuth.
	Auth AuthMode
	// ServeImagesInProcess runs the image server inside the calling
	// process (it stops with Instance.Stop); otherwise Up starts it as a
	// background process with ImageServerCommand.
	ServeImagesInProcess bool
	// StopWithCaller has the kernel stop Ironic (and a background image
	// server) when the calling process exits, even killed: for tests and
	// other Go programs whose Ironic must not outlive them. A later Up on
	// the directory then starts a new one.
	StopWithCaller bool
	// ImageServerCommand is the argv prefix of the background image
	// server, to which Up appends --root DIR --listen ADDR; default the
	// running executable with "ironic serve-http" (airshipctl's hidden
	// command).
	ImageServerCommand []string
	// IronicBinary, ConductorBinary and DBSyncBinary are Ironic's
	// commands; defaults Debian's /usr/bin/ironic, /usr/bin/ironic-conductor
	// (for Tuning.Conductors above 1) and /usr/bin/ironic-dbsync. The
	// first two are Python scripts, run by Python through launch.py.
	IronicBinary    string
	ConductorBinary string
	DBSyncBinary    string
	// Python runs Ironic's scripts; default /usr/bin/python3.
	Python string
	// SchemaCacheDir holds the pristine database schema of each Ironic
	// version; default os.UserCacheDir()/airship.
	SchemaCacheDir string
	// FakeHardware also enables Ironic's fake-hardware type and the fake
	// interfaces, for tests that need no BMC at all.
	FakeHardware bool
	// Debug turns on Ironic's debug logging.
	Debug bool
	// StartTimeout bounds the wait for the API to answer; default 2 minutes.
	StartTimeout time.Duration
	// Tuning holds the settings a large site or a benchmark tunes.
	Tuning Tuning
	// Progress receives one line per step; nil means none.
	Progress io.Writer
}

// Tuning holds the Ironic settings that govern its throughput and its
// timeouts. A zero field takes the default named beside it (Ironic's own
// unless said otherwise); durations are written in whole seconds.
type Tuning struct {
	// Conductors is how many conductors run: the all-in-one process and
	// Conductors-1 ironic-conductor processes (default 1; more need an
	// IPv4 loopback Host, conductors.go). Each is one core at most.
	Conductors int
	// ConductorWorkers is [conductor] workers_pool_size, the green threads
	// running node operations (default 100, at least 3).
	ConductorWorkers int
	// PeriodicMaxWorkers is [conductor] periodic_max_workers, the threads
	// of one periodic task such as the power sync (default 8).
	PeriodicMaxWorkers int
	// SyncPowerStateInterval is [conductor] sync_power_state_interval,
	// how often every node's power state is read from its BMC (default
	// 60s; negative disables the sync).
	SyncPowerStateInterval time.Duration
	// SyncPowerStateWorkers is [conductor] sync_power_state_workers
	// (default 8).
	SyncPowerStateWorkers int
	// CheckProvisionStateInterval is [conductor]
	// check_provision_state_interval, how often timeouts are checked
	// (default 60s).
	CheckProvisionStateInterval time.Duration
	// DeployCallbackTimeout is [conductor] deploy_callback_timeout, how
	// long a deploy waits for the agent (default 30m).
	DeployCallbackTimeout time.Duration
	// CleanCallbackTimeout is [conductor] clean_callback_timeout (default 30m).
	CleanCallbackTimeout time.Duration
	// InspectWaitTimeout is [conductor] inspect_wait_timeout (default 30m).
	InspectWaitTimeout time.Duration
	// PowerStateChangeTimeout is [conductor] power_state_change_timeout,
	// the wait for a requested power state (default 60s).
	PowerStateChangeTimeout time.Duration
	// MaxConcurrentDeploy and MaxConcurrentClean are [conductor]
	// max_concurrent_deploy and max_concurrent_clean (defaults 250 and 50).
	MaxConcurrentDeploy int
	MaxConcurrentClean  int
	// NodeLockedRetryAttempts and NodeLockedRetryInterval are [conductor]
	// node_locked_retry_attempts and node_locked_retry_interval, how an
	// API call waits for a node another operation holds (defaults 3, 1s).
	NodeLockedRetryAttempts int
	NodeLockedRetryInterval time.Duration
	// RedfishConnectionAttempts and RedfishConnectionRetryInterval are
	// [redfish] connection_attempts and connection_retry_interval
	// (defaults 5 and 4s).
	RedfishConnectionAttempts      int
	RedfishConnectionRetryInterval time.Duration
	// AgentCommandTimeout is [agent] command_timeout, one call to the
	// deploy agent (default 60s).
	AgentCommandTimeout time.Duration
	// RamdiskHeartbeatTimeout is [api] ramdisk_heartbeat_timeout, the
	// longest gap between agent heartbeats (default 300s).
	RamdiskHeartbeatTimeout time.Duration
	// APIMaxLimit is [api] max_limit, the most items one list answer
	// holds (default 1000).
	APIMaxLimit int
}

// withDefaults fills the zero fields of o.
func (o Options) withDefaults() Options {
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.Auth == "" {
		o.Auth = AuthNoAuth
	}
	if o.IronicBinary == "" {
		o.IronicBinary = DefaultIronicBinary
	}
	if o.ConductorBinary == "" {
		o.ConductorBinary = DefaultConductorBinary
	}
	if o.Python == "" {
		o.Python = DefaultPython
	}
	if o.DBSyncBinary == "" {
		o.DBSyncBinary = DefaultDBSyncBinary
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	o.Tuning = o.Tuning.withDefaults()
	return o
}

func (t Tuning) withDefaults() Tuning {
	intDefault(&t.Conductors, 1)
	intDefault(&t.ConductorWorkers, 100)
	intDefault(&t.PeriodicMaxWorkers, 8)
	intDefault(&t.SyncPowerStateWorkers, 8)
	intDefault(&t.MaxConcurrentDeploy, 250)
	intDefault(&t.MaxConcurrentClean, 50)
	intDefault(&t.NodeLockedRetryAttempts, 3)
	intDefault(&t.RedfishConnectionAttempts, 5)
	intDefault(&t.APIMaxLimit, 1000)
	durDefault(&t.SyncPowerStateInterval, 60*time.Second)
	durDefault(&t.CheckProvisionStateInterval, 60*time.Second)
	durDefault(&t.DeployCallbackTimeout, 30*time.Minute)
	durDefault(&t.CleanCallbackTimeout, 30*time.Minute)
	durDefault(&t.InspectWaitTimeout, 30*time.Minute)
	durDefault(&t.PowerStateChangeTimeout, 60*time.Second)
	durDefault(&t.NodeLockedRetryInterval, time.Second)
	durDefault(&t.RedfishConnectionRetryInterval, 4*time.Second)
	durDefault(&t.AgentCommandTimeout, 60*time.Second)
	durDefault(&t.RamdiskHeartbeatTimeout, 300*time.Second)
	return t
}

func intDefault(v *int, d int) {
	if *v == 0 {
		*v = d
	}
}

func durDefault(v *time.Duration, d time.Duration) {
	if *v == 0 {
		*v = d
	}
}

// validate checks o after withDefaults.
func (o Options) validate() error {
	var errs []error
	if o.StateDir == "" {
		errs = append(errs, errors.New("options: StateDir is required"))
	}
	ip := net.ParseIP(o.Host)
	if ip == nil {
		errs = append(errs, fmt.Errorf("options: Host %q is not an IP address", o.Host))
	}
	switch o.Auth {
	case AuthNoAuth:
		if ip != nil && !ip.IsLoopback() {
			errs = append(errs, fmt.Errorf("options: Auth %s needs every listener on loopback, and Host is %s: use %s", AuthNoAuth, o.Host, AuthHTTPBasic))
		}
	case AuthHTTPBasic:
	default:
		errs = append(errs, fmt.Errorf("options: Auth %q is neither %s nor %s", o.Auth, AuthNoAuth, AuthHTTPBasic))
	}
	for name, p := range map[string]int{"APIPort": o.APIPort, "HTTPPort": o.HTTPPort} {
		if p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("options: %s %d is out of range", name, p))
		}
	}
	if o.APIPort != 0 && o.APIPort == o.HTTPPort {
		errs = append(errs, fmt.Errorf("options: APIPort and HTTPPort are both %d", o.APIPort))
	}
	if _, err := conductorAddrs(o.Host, o.Tuning.Conductors); err != nil && ip != nil {
		errs = append(errs, fmt.Errorf("options: %w", err))
	}
	if _, err := tuningSettings(o.Tuning); err != nil {
		errs = append(errs, fmt.Errorf("options: %w", err))
	}
	return errors.Join(errs...)
}
