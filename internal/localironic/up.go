package localironic

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/process"
)

// launchScript runs Ironic's commands (launch.py says why).
//
//go:embed launch.py
var launchScript []byte

// Instance is a running Ironic of a state directory.
type Instance struct {
	// StateDir is the state directory (absolute).
	StateDir string
	// APIURL is Ironic's API, http://HOST:PORT.
	APIURL string
	// HTTPURL and HTTPRoot are the image server's URL and directory:
	// a file dropped at HTTPRoot/NAME is served at HTTPURL/NAME.
	HTTPURL  string
	HTTPRoot string
	// DeployISOURL is the deploy ISO, for nodes' driver_info deploy_iso.
	DeployISOURL string
	// Auth is the API's authentication; with AuthHTTPBasic,
	// CredentialsFile holds the user and password (ReadCredentials).
	Auth            AuthMode
	CredentialsFile string
	// ConfigFile and LogFile are Ironic's configuration and log.
	ConfigFile string
	LogFile    string
	// Resumed is true when Up found this Ironic already running.
	Resumed bool

	images *ImageServer // the in-process image server, if this Up started one
}

// Stop stops the image server this process runs, if any, and then every
// process of the state directory (Down).
func (i *Instance) Stop(ctx context.Context) error {
	var errs []error
	if i.images != nil {
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		errs = append(errs, i.images.Shutdown(shutdownCtx))
		cancel()
		i.images = nil
	}
	errs = append(errs, Down(ctx, i.StateDir))
	return errors.Join(errs...)
}

// Up starts Ironic for the state directory o.StateDir, or returns the one
// already running there. It writes ironic.conf, gives the directory a
// database (the cached pristine schema of this Ironic version, or the
// database of an earlier run), writes the deploy ISO, starts the image
// server and Ironic, and waits until the API answers. On failure it stops
// what it started.
func Up(ctx context.Context, opts Options) (*Instance, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	root, err := filepath.Abs(o.StateDir)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w", o.StateDir, err)
	}
	o.StateDir = root
	p := paths{root: root}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	unlock, err := lockState(ctx, p)
	if err != nil {
		return nil, err
	}
	defer unlock()
	prev, err := readState(p.state())
	if err != nil {
		return nil, err
	}
	if r, ok := prev.record(ComponentIronic); ok && r.Alive() {
		if prev.conductorsAlive() {
			return resume(ctx, o, p, prev)
		}
		// A conductor that died would leave its share of the nodes
		// to the hash ring's next rebalance: start them all again (the
		// nodes are in the database).
		progressf(o.Progress, "a conductor of %s is gone: starting Ironic again", p.root)
	}
	if prev != nil {
		// A background image server may outlive an Ironic that died.
		if err := stopAll(prev.Processes); err != nil {
			return nil, err
		}
	}
	return start(ctx, o, p, prev)
}

// startAttempts bounds the starts of start: ports chosen free can be taken
// by another program before Ironic binds them.
const startAttempts = 3

// errPortTaken marks a start that failed because a port it had chosen was
// taken meanwhile.
var errPortTaken = errors.New("a port was taken before it was bound")

// start prepares the state directory and starts both servers. When a port
// it chose (none was asked for) is taken between the choice and the bind
// (Ironic's listeners bind in a child process, so the port cannot be held
// for it), it starts again on new ports.
func start(ctx context.Context, o Options, p paths, prev *State) (*Instance, error) {
	if _, err := os.Stat(o.IronicBinary); err != nil {
		return nil, fmt.Errorf("no Ironic installed (%w): run `bash hack/setup.sh` as root (it installs Debian's ironic-common)", err)
	}
	for attempt := 1; ; attempt++ {
		inst, err := startOnce(ctx, o, p, prev)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == startAttempts || (o.APIPort != 0 && o.HTTPPort != 0 && o.Tuning.Conductors <= 1) {
			return inst, err
		}
		progressf(o.Progress, "%v; starting again on other ports", err)
		prev = nil // the recorded ports are not to be reused
	}
}

// testHookBeforeIronic, when set by a test, runs after the ports are
// chosen and before Ironic starts.
var testHookBeforeIronic func(*State)

// startOnce is one start of start.
func startOnce(ctx context.Context, o Options, p paths, prev *State) (*Instance, error) {
	st, err := prepare(ctx, o, p, prev)
	if err != nil {
		return nil, err
	}
	inst := newInstance(p, st)
	ok := false
	defer func() {
		if !ok {
			_ = stopAll(st.Processes)
			if inst.images != nil {
				_ = inst.images.Shutdown(context.WithoutCancel(ctx))
			}
			st.Processes = nil
			_ = writeState(p.state(), st)
		}
	}()
	if err := startImageServer(ctx, o, p, st, inst); err != nil {
		return nil, err
	}
	if testHookBeforeIronic != nil {
		testHookBeforeIronic(st)
	}
	progressf(o.Progress, "starting Ironic on %s (log %s)", st.APIURL, st.Log)
	logStart := fileSize(p.log())
	s, err := process.Start(process.Spec{
		Component: ComponentIronic, Binary: o.Python, Args: []string{p.launcher(), o.IronicBinary, "--config-file", p.config()}, Log: p.log(), Dir: p.root,
		StopWithParent: o.StopWithCaller,
	})
	if err != nil {
		return nil, err
	}
	s.Record.HealthURL = st.APIURL + "/"
	st.Processes = append(st.Processes, s.Record)
	if err := writeState(p.state(), st); err != nil {
		return nil, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	if err := waitAPI(waitCtx, st.APIURL, s.Exited()); err != nil {
		if addrInUse(p.log(), logStart) {
			err = fmt.Errorf("%w (%w)", errPortTaken, err)
		}
		return nil, fmt.Errorf("starting Ironic: %w\nlast lines of %s:\n%s", err, p.log(), process.LogTail(p.log(), 20))
	}
	if o.Tuning.Conductors > 1 {
		progressf(o.Progress, "starting %d more conductors", o.Tuning.Conductors-1)
		err := startConductors(ctx, o, p, st)
		if werr := writeState(p.state(), st); err == nil {
			err = werr
		}
		if err != nil {
			return nil, err
		}
	}
	progressf(o.Progress, "Ironic is up: API %s, images %s", st.APIURL, st.HTTPURL)
	ok = true
	return inst, nil
}

// prepare creates the directories, picks the ports, writes the
// credentials, ironic.conf and the deploy ISO and makes the database.
func prepare(ctx context.Context, o Options, p paths, prev *State) (*State, error) {
	for _, d := range []string{filepath.Dir(p.log()), p.httpRoot(), p.tmp(), p.locks(), p.cache("")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", d, err)
		}
	}
	var prevAPI, prevHTTP int
	if prev != nil && prev.Host == o.Host {
		prevAPI, prevHTTP = prev.APIPort, prev.HTTPPort
	}
	apiPort, err := choosePort(ctx, o.Host, o.APIPort, prevAPI, 0)
	if err != nil {
		return nil, fmt.Errorf("API port: %w", err)
	}
	httpPort, err := choosePort(ctx, o.Host, o.HTTPPort, prevHTTP, apiPort)
	if err != nil {
		return nil, fmt.Errorf("image server port: %w", err)
	}
	conductors, err := conductorAddrs(o.Host, o.Tuning.Conductors)
	if err != nil {
		return nil, err
	}
	var (
		rpcPort int
		rpc     rpcCredentials
	)
	if len(conductors) > 1 {
		var prevRPC int
		if prev != nil && prev.Host == o.Host {
			prevRPC = prev.RPCPort
		}
		if rpcPort, err = chooseRPCPort(ctx, conductors, prevRPC, apiPort, httpPort); err != nil {
			return nil, err
		}
		if rpc, err = newRPCCredentials(p); err != nil {
			return nil, err
		}
	}
	st := &State{
		Host: o.Host, APIPort: apiPort, HTTPPort: httpPort, RPCPort: rpcPort,
		APIURL:   "http://" + net.JoinHostPort(o.Host, strconv.Itoa(apiPort)),
		HTTPURL:  "http://" + net.JoinHostPort(o.Host, strconv.Itoa(httpPort)),
		HTTPRoot: p.httpRoot(), Auth: o.Auth, Log: p.log(),
	}
	st.DeployISOURL = st.HTTPURL + "/" + DeployISOName
	if o.Auth == AuthHTTPBasic {
		if err := ensureCredentials(p); err != nil {
			return nil, err
		}
		st.CredentialsFile = p.credentials()
	}
	conf, err := renderConfig(confInput{
		opts: o, paths: p, apiURL: st.APIURL, httpURL: st.HTTPURL, apiPort: apiPort, httpFile: p.htpasswd(),
		conductors: conductors, rpcPort: rpcPort, rpc: rpc,
	})
	if err != nil {
		return nil, err
	}
	if err := fileutil.WriteAtomic(p.config(), []byte(conf), 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", p.config(), err)
	}
	if err := ensureDatabase(ctx, o, p); err != nil {
		return nil, err
	}
	if err := enableWAL(ctx, p.database()); err != nil {
		return nil, err
	}
	if err := fileutil.WriteAtomic(p.launcher(), launchScript, 0o600); err != nil {
		return nil, fmt.Errorf("writing %s: %w", p.launcher(), err)
	}
	if err := WriteDeployISO(p.deployISO(), st.APIURL, p.tmp()); err != nil {
		return nil, err
	}
	return st, nil
}

func newInstance(p paths, st *State) *Instance {
	return &Instance{
		StateDir: p.root, APIURL: st.APIURL, HTTPURL: st.HTTPURL, HTTPRoot: st.HTTPRoot,
		DeployISOURL: st.DeployISOURL, Auth: st.Auth, CredentialsFile: st.CredentialsFile,
		ConfigFile: p.config(), LogFile: st.Log,
	}
}

// resume returns the Ironic already running in the state directory and
// restarts its image server if that is gone.
func resume(ctx context.Context, o Options, p paths, st *State) (*Instance, error) {
	switch {
	case o.APIPort != 0 && o.APIPort != st.APIPort:
		return nil, fmt.Errorf("the Ironic of %s runs with API port %d, not %d: run down first", p.root, st.APIPort, o.APIPort)
	case o.HTTPPort != 0 && o.HTTPPort != st.HTTPPort:
		return nil, fmt.Errorf("the Ironic of %s runs with image server port %d, not %d: run down first", p.root, st.HTTPPort, o.HTTPPort)
	case o.Auth != st.Auth:
		return nil, fmt.Errorf("the Ironic of %s runs with auth %s, not %s: run down first", p.root, st.Auth, o.Auth)
	case o.Host != st.Host:
		return nil, fmt.Errorf("the Ironic of %s listens on %s, not %s: run down first", p.root, st.Host, o.Host)
	case o.Tuning.Conductors != st.conductors():
		return nil, fmt.Errorf("the Ironic of %s runs %d conductors, not %d: run down first", p.root, st.conductors(), o.Tuning.Conductors)
	}
	inst := newInstance(p, st)
	inst.Resumed = true
	waitCtx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	if err := waitAPI(waitCtx, st.APIURL, nil); err != nil {
		return nil, fmt.Errorf("the Ironic of %s runs but its API does not answer: %w", p.root, err)
	}
	if probe(ctx, st.DeployISOURL) == nil {
		progressf(o.Progress, "Ironic already running: API %s, images %s", st.APIURL, st.HTTPURL)
		return inst, nil
	}
	if r, ok := st.record(ComponentImageServer); ok {
		if err := r.Stop(DefaultStopGrace); err != nil {
			return nil, err
		}
		st.Processes = slices.DeleteFunc(st.Processes, func(r process.Record) bool { return r.Component == ComponentImageServer })
	}
	if err := startImageServer(ctx, o, p, st, inst); err != nil {
		return nil, err
	}
	if err := writeState(p.state(), st); err != nil {
		return nil, err
	}
	return inst, nil
}

// startImageServer serves HTTPRoot in this process or in a background
// process, as o says, and waits until it serves the deploy ISO.
func startImageServer(ctx context.Context, o Options, p paths, st *State, inst *Instance) error {
	addr := net.JoinHostPort(st.Host, strconv.Itoa(st.HTTPPort))
	if o.ServeImagesInProcess {
		s, err := StartImageServer(ctx, p.httpRoot(), addr)
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w: %w", errPortTaken, err)
		}
		if err != nil {
			return err
		}
		inst.images = s
		return nil
	}
	argv := o.ImageServerCommand
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("image server: finding this program: %w", err)
		}
		argv = []string{exe, "ironic", defaultImageServerCmd}
	}
	s, err := process.Start(process.Spec{
		Component: ComponentImageServer, Binary: argv[0],
		Args: append(slices.Clone(argv[1:]), "--root", p.httpRoot(), "--listen", addr),
		Log:  p.imageLog(), Dir: p.root, StopWithParent: o.StopWithCaller,
	})
	if err != nil {
		return err
	}
	s.Record.HealthURL = st.DeployISOURL
	st.Processes = append(st.Processes, s.Record)
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		err := probe(waitCtx, st.DeployISOURL)
		if err == nil {
			return nil
		}
		select {
		case <-s.Exited():
			return fmt.Errorf("image server exited: %w\nlast lines of %s:\n%s", err, p.imageLog(), process.LogTail(p.imageLog(), 10))
		case <-waitCtx.Done():
			return fmt.Errorf("image server did not answer: %w\nlast lines of %s:\n%s", err, p.imageLog(), process.LogTail(p.imageLog(), 10))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// client is the bounded client of every probe.
var client = httplimit.NewClient(httplimit.ClientOptions{Timeout: 5 * time.Second, MaxResponseBytes: 1 << 20})

// probe checks that url answers 200 to HEAD.
func probe(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close() // HEAD: no body
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HEAD %s: %s", url, resp.Status)
	}
	return nil
}

// waitAPI polls GET / of Ironic's API until it names its versions, exited
// is closed or ctx ends.
func waitAPI(ctx context.Context, apiURL string, exited <-chan struct{}) error {
	var last error
	for {
		if last = getRoot(ctx, apiURL); last == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("the process exited (last check: %w)", last)
		case <-ctx.Done():
			return fmt.Errorf("timed out (last check: %w)", last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func getRoot(ctx context.Context, apiURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, apiURL+"/", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // read only
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("GET %s/: %w", apiURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s/: %s", apiURL, resp.Status)
	}
	var root struct {
		Versions []struct {
			Version string `json:"version"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(body, &root); err != nil || len(root.Versions) == 0 {
		return fmt.Errorf("GET %s/ answered no API versions", apiURL)
	}
	return nil
}

// choosePort returns want if set, else prev if it is free, else a free port.
func choosePort(ctx context.Context, host string, want, prev, exclude int) (int, error) {
	if want != 0 {
		return want, nil
	}
	if prev != 0 && prev != exclude && portFree(ctx, host, prev) {
		return prev, nil
	}
	for range 10 {
		ln, err := listenConfig.Listen(ctx, "tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return 0, fmt.Errorf("finding a free port on %s: %w", host, err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		if err := ln.Close(); err != nil {
			return 0, fmt.Errorf("finding a free port on %s: %w", host, err)
		}
		if port != exclude {
			return port, nil
		}
	}
	return 0, fmt.Errorf("finding a free port on %s: none", host)
}

func portFree(ctx context.Context, host string, port int) bool {
	ln, err := listenConfig.Listen(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	return ln.Close() == nil
}

// fileSize is path's size, 0 if it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// addrInUse reports whether the log, from offset on (what the process
// just started wrote), says a listener's address was in use.
func addrInUse(path string, offset int64) bool {
	return logged(path, offset, "Address already in use")
}

// logged reports whether the log holds text after offset (in its first
// MiB from there).
func logged(path string, offset int64, text string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }() // read only
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return false
	}
	data, err := io.ReadAll(io.LimitReader(f, 1<<20))
	return err == nil && bytes.Contains(data, []byte(text))
}

// stopAll stops every live recorded process, newest first.
func stopAll(recs []process.Record) error {
	var errs []error
	for i := len(recs) - 1; i >= 0; i-- {
		errs = append(errs, recs[i].Stop(DefaultStopGrace))
	}
	return errors.Join(errs...)
}

func progressf(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, "[ironic] "+format+"\n", args...)
}
