package localironic

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/process"
)

// More than one conductor. Ironic's all-in-one process (API and conductor
// in one eventlet loop) uses one core at most, and at a thousand hosts
// that core is what limits a site on one machine. Each extra conductor is
// an ironic-conductor process beside it; Ironic's hash ring spreads the
// nodes over all of them and the API reaches a node's conductor over
// JSON-RPC. JSON-RPC sends a client's address only by its conductor's
// name and one port for all, so every conductor is named by an address of
// its own: the Host for the all-in-one process, then the next loopback
// addresses (127.0.0.2, 127.0.0.3, ... for Host 127.0.0.1). The JSON-RPC
// listeners carry BMC credentials between the processes: they check HTTP
// basic credentials generated at every Up (rpc-htpasswd; the password is
// in ironic.conf, 0600, and nowhere else).

// ComponentConductor is the prefix of the extra conductors' components in
// state.json: "conductor-2", "conductor-3", ...
const ComponentConductor = "conductor-"

// DefaultConductorBinary is Debian's ironic-conductor.
const DefaultConductorBinary = "/usr/bin/ironic-conductor"

// rpcUser is the JSON-RPC user; its password is new at every Up.
const rpcUser = "airship-rpc"

// rpcCredentials are the JSON-RPC user's.
type rpcCredentials struct{ user, password string }

// conductorAddrs returns the names (and JSON-RPC addresses) of n
// conductors: host, then the next addresses. More than one needs an IPv4
// loopback host, whose next addresses are loopback too.
func conductorAddrs(host string, n int) ([]string, error) {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return nil, fmt.Errorf("conductors: Host %q: %w", host, err)
	}
	out := []string{host}
	if n > 1 && (!addr.Is4() || !addr.IsLoopback()) {
		return nil, fmt.Errorf("tuning: %d conductors need an IPv4 loopback Host (each conductor listens on an address of its own), and Host is %s", n, host)
	}
	for len(out) < n {
		addr = addr.Next()
		if !addr.IsValid() || !addr.IsLoopback() {
			return nil, fmt.Errorf("tuning: %d conductors: no loopback address left after %s", n, out[len(out)-1])
		}
		out = append(out, addr.String())
	}
	return out, nil
}

// conductorName is the conductor's name in Ironic's database. One
// conductor keeps the fixed name (a restarted Ironic takes its nodes
// back); several are named by their JSON-RPC addresses.
func conductorName(addrs []string, i int) string {
	if len(addrs) == 1 {
		return conductorHost
	}
	return addrs[i]
}

// newRPCCredentials generates the JSON-RPC user's password and writes its
// htpasswd file.
func newRPCCredentials(p paths) (rpcCredentials, error) {
	pass := make([]byte, 32)
	if _, err := rand.Read(pass); err != nil {
		return rpcCredentials{}, fmt.Errorf("generating the JSON-RPC password: %w", err)
	}
	c := rpcCredentials{user: rpcUser, password: base64.RawURLEncoding.EncodeToString(pass)}
	hash, err := bcrypt.GenerateFromPassword([]byte(c.password), bcrypt.MinCost)
	if err != nil {
		return rpcCredentials{}, fmt.Errorf("hashing the JSON-RPC password: %w", err)
	}
	if err := fileutil.WriteAtomic(p.rpcHTPasswd(), []byte(c.user+":"+string(hash)+"\n"), 0o600); err != nil {
		return rpcCredentials{}, fmt.Errorf("writing %s: %w", p.rpcHTPasswd(), err)
	}
	return c, nil
}

// chooseRPCPort returns a port free on every conductor address: prev if
// it is, else one the kernel gave for the first address and the others
// have free.
func chooseRPCPort(ctx context.Context, addrs []string, prev int, exclude ...int) (int, error) {
	freeOnAll := func(port int) bool {
		for _, a := range addrs {
			if !portFree(ctx, a, port) {
				return false
			}
		}
		for _, e := range exclude {
			if port == e {
				return false
			}
		}
		return true
	}
	if prev != 0 && freeOnAll(prev) {
		return prev, nil
	}
	for range 20 {
		port, err := choosePort(ctx, addrs[0], 0, 0, 0)
		if err != nil {
			return 0, fmt.Errorf("JSON-RPC port: %w", err)
		}
		if freeOnAll(port) {
			return port, nil
		}
	}
	return 0, errors.New("JSON-RPC port: none free on every conductor address")
}

// conductorConfig is the extra conductor i's file, read after
// ironic.conf: its name, log and JSON-RPC address.
func conductorConfig(p paths, addrs []string, i int) string {
	return fmt.Sprintf("# Written by airshipctl (internal/localironic) on every start; edits are lost.\n\n[DEFAULT]\nhost = %s\nlog_file = %s\n\n[json_rpc]\nhost_ip = %s\n",
		conductorName(addrs, i), p.conductorLog(i), addrs[i])
}

// startConductors starts the extra conductors and waits until each has
// registered in the database, which it logs after its JSON-RPC listener
// is up: the API then counts it in the hash ring it builds at its first
// node request.
func startConductors(ctx context.Context, o Options, p paths, st *State) error {
	addrs, err := conductorAddrs(o.Host, o.Tuning.Conductors)
	if err != nil {
		return err
	}
	var (
		started   []*process.Started
		logStarts []int64
	)
	for i := 1; i < len(addrs); i++ {
		logStarts = append(logStarts, fileSize(p.conductorLog(i)))
		if err := fileutil.WriteAtomic(p.conductorConfig(i), []byte(conductorConfig(p, addrs, i)), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", p.conductorConfig(i), err)
		}
		s, err := process.Start(process.Spec{
			Component: ComponentConductor + strconv.Itoa(i+1), Binary: o.Python,
			Args: []string{p.launcher(), o.ConductorBinary, "--config-file", p.config(), "--config-file", p.conductorConfig(i)},
			Log:  p.conductorLog(i), Dir: p.root, StopWithParent: o.StopWithCaller,
		})
		if err != nil {
			return err
		}
		st.Processes = append(st.Processes, s.Record)
		started = append(started, s)
	}
	waitCtx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	for j, s := range started {
		i := j + 1
		for {
			if logged(p.conductorLog(i), logStarts[j], registeredLine) {
				break
			}
			select {
			case <-s.Exited():
				if addrInUse(p.conductorLog(i), logStarts[j]) {
					return fmt.Errorf("conductor %d: %w", i+1, errPortTaken)
				}
				return fmt.Errorf("conductor %d exited: last lines of %s:\n%s", i+1, p.conductorLog(i), process.LogTail(p.conductorLog(i), 20))
			case <-waitCtx.Done():
				return fmt.Errorf("conductor %d did not register: %w\nlast lines of %s:\n%s", i+1, context.Cause(waitCtx), p.conductorLog(i), process.LogTail(p.conductorLog(i), 20))
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// registeredLine is what a conductor logs once it is registered and its
// JSON-RPC listener runs (ironic/common/rpc_service.py).
const registeredLine = "Created RPC server with json-rpc transport"

// conductors counts the recorded conductors: the all-in-one process and
// the extra ones.
func (st *State) conductors() int {
	n := 0
	for _, r := range st.Processes {
		if r.Component == ComponentIronic || strings.HasPrefix(r.Component, ComponentConductor) {
			n++
		}
	}
	return n
}

// conductorsAlive reports whether every recorded extra conductor runs.
func (st *State) conductorsAlive() bool {
	for _, r := range st.Processes {
		if strings.HasPrefix(r.Component, ComponentConductor) && !r.Alive() {
			return false
		}
	}
	return true
}

func (p paths) rpcHTPasswd() string { return filepath.Join(p.root, "rpc-htpasswd") }
func (p paths) conductorConfig(i int) string {
	return filepath.Join(p.root, fmt.Sprintf("conductor-%d.conf", i+1))
}
func (p paths) conductorLog(i int) string {
	return filepath.Join(p.root, "logs", fmt.Sprintf("conductor-%d.log", i+1))
}
