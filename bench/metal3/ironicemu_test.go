package metal3

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// emulatorChild is the name (harness.ChildEnv) under which the test binary
// runs the Ironic rows' emulator in a process of its own, so that its peak
// RSS is its own: the hosts' BMCs and, while a host runs the deploy ISO,
// its deploy agent (internal/ipaagent) and disk files.
const emulatorChild = "ironic-emulator"

// The emulator child's environment.
const (
	emuHostsEnv     = "IRONIC_BENCH_EMU_HOSTS"
	emuStateDirEnv  = "IRONIC_BENCH_EMU_STATE_DIR"
	emuManifestsEnv = "IRONIC_BENCH_EMU_MANIFESTS"
	emuHeartbeatEnv = "IRONIC_BENCH_EMU_HEARTBEAT"
)

// emuReady is the line the child prints once every BMC listens and the
// manifests are written.
const emuReady = "emulator ready"

// emuManifests is what the child hands the bench: the objects that adopt
// its hosts, each host's BMC address naming the host's own listener.
type emuManifests struct {
	Secrets []*corev1.Secret                `json:"secrets"`
	Hosts   []*metal3v1alpha1.BareMetalHost `json:"hosts"`
}

// runEmulatorChild is the emulator child: n generated hosts (disks as
// sparse files under the state directory), each host's BMC on a listener
// of its own (127.0.0.1), until SIGTERM.
func runEmulatorChild() error {
	n, err := strconv.Atoi(os.Getenv(emuHostsEnv))
	if err != nil || n <= 0 {
		return fmt.Errorf("%s=%q: want a positive number", emuHostsEnv, os.Getenv(emuHostsEnv))
	}
	hb, err := time.ParseDuration(os.Getenv(emuHeartbeatEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", emuHeartbeatEnv, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	emu, err := emulator.New(emulator.Config{
		Username: "admin", Password: "bench-Passw0rd", BootDelay: bootDelay,
		Hosts: emulator.Generate(n, max(1, n/hostsPerRack)),
	}, emulator.Options{
		StateDir: os.Getenv(emuStateDirEnv), HeartbeatInterval: hb, Log: os.Stderr,
	})
	if err != nil {
		return err
	}
	defer emu.Close()
	m, servers, err := serveEachHost(ctx, emu)
	defer func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}()
	if err != nil {
		return err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	// BMC passwords: 0600.
	if err := os.WriteFile(os.Getenv(emuManifestsEnv), data, 0o600); err != nil {
		return err
	}
	fmt.Println(emuReady)
	<-ctx.Done()
	return nil
}

// serveEachHost starts the emulator and a listener per host, and returns
// the manifests with each host's BMC address on its own listener.
func serveEachHost(ctx context.Context, emu *emulator.Server) (emuManifests, []*http.Server, error) {
	var m emuManifests
	base, err := emu.Start(ctx, "127.0.0.1:0")
	if err != nil {
		return m, nil, err
	}
	var buf strings.Builder
	if err := emulator.WriteManifests(&buf, emu, ns); err != nil {
		return m, nil, err
	}
	if m.Secrets, m.Hosts, err = decodeManifests([]byte(buf.String())); err != nil {
		return m, nil, err
	}
	var servers []*http.Server
	for _, h := range m.Hosts {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return m, servers, fmt.Errorf("a BMC endpoint for BareMetalHost %s: %w", h.Name, err)
		}
		srv := httplimit.NewServer(emu.Handler(), httplimit.ServerTimeouts{})
		servers = append(servers, srv)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintf(os.Stderr, "BMC endpoint of %s: %v\n", h.Name, err)
			}
		}()
		h.Spec.BMC.Address = strings.Replace(h.Spec.BMC.Address, base, "http://"+ln.Addr().String(), 1)
	}
	return m, servers, nil
}

// emuProc is the emulator child seen from the bench.
type emuProc struct {
	cmd *exec.Cmd
	emuManifests
	log string
}

// startEmulatorProc runs the emulator child of n hosts, its disks under
// dir, and waits until it is ready (a few seconds; 2 minutes at most).
func startEmulatorProc(b *testing.B, n int, dir string, heartbeat time.Duration) *emuProc {
	b.Helper()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p := &emuProc{log: filepath.Join(dir, "emulator.log")}
	manifests := filepath.Join(dir, "manifests.json")
	logFile, err := os.Create(p.log)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = logFile.Close() })
	p.cmd = exec.CommandContext(b.Context(), self, "-test.run", "^$")
	p.cmd.Env = append(os.Environ(), "BENCH_CHILD="+emulatorChild,
		emuHostsEnv+"="+strconv.Itoa(n), emuStateDirEnv+"="+filepath.Join(dir, "disks"),
		emuManifestsEnv+"="+manifests, emuHeartbeatEnv+"="+heartbeat.String())
	p.cmd.Stderr = logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.stop)
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && strings.TrimSpace(line) != emuReady {
			err = fmt.Errorf("unexpected line %q", line)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(2 * time.Minute):
		err = errors.New("not ready after 2 minutes")
	}
	if err != nil {
		b.Fatalf("the emulator child (log %s): %v", p.log, err)
	}
	data, err := os.ReadFile(manifests)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(data, &p.emuManifests); err != nil {
		b.Fatalf("%s: %v", manifests, err)
	}
	return p
}

// stop ends the child (SIGTERM, then SIGKILL after 30 s) once.
func (p *emuProc) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}
