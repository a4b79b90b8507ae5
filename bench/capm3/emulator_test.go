package capm3

import (
	"bufio"
	"bytes"
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
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// The child mode of this test binary that serves the emulator, and what
// it is handed.
const (
	emulatorChild = "capm3-emulator"
	// emuHostsEnv is how many hosts to serve.
	emuHostsEnv = "CAPM3_EMU_HOSTS"
	// emuTargetEnv is the kubeconfig of the cluster booted hosts join.
	emuTargetEnv = "CAPM3_EMU_TARGET_KUBECONFIG"
	// emuDirEnv receives manifests.yaml, endpoints.json and emulator.log.
	emuDirEnv = "CAPM3_EMU_DIR"
	// emuReady is the line the child prints once it serves.
	emuReady = "capm3-emulator: ready"
)

// Every emulated BMC's credentials.
const bmcUser, bmcPassword = "admin", "bench-Passw0rd"

// bootDelay is how long an emulated host takes to boot once powered on,
// before its Node registers; as in bench/metal3.
const bootDelay = 100 * time.Millisecond

// hostsPerRack spreads the generated hosts over racks (a label only).
const hostsPerRack = 40

// endpoints is what the child tells the parent besides the manifests:
// the emulator's own base URL (the one the manifests name) and each host's
// BMC endpoint.
type endpoints struct {
	Base  string            `json:"base"`
	Hosts map[string]string `json:"hosts"`
}

// serveEmulator is the child: an emulator of $CAPM3_EMU_HOSTS hosts whose
// booted hosts become Nodes of the $CAPM3_EMU_TARGET_KUBECONFIG cluster,
// each host's BMC on an endpoint of its own, until SIGTERM.
//
// Its client of that cluster has a high rate: it stands for one kubelet
// per host, each registering its own Node, where one client at
// client-go's default 5 requests/s would take minutes to register 1,000
// Nodes on both sides alike.
func serveEmulator() error {
	n, err := strconv.Atoi(os.Getenv(emuHostsEnv))
	if err != nil || n < 1 {
		return fmt.Errorf("%s=%q: want a positive number", emuHostsEnv, os.Getenv(emuHostsEnv))
	}
	dir := os.Getenv(emuDirEnv)
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv(emuTargetEnv))
	if err != nil {
		return fmt.Errorf("%s: %w", emuTargetEnv, err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	logFile, err := os.Create(filepath.Join(dir, "emulator.log"))
	if err != nil {
		return err
	}
	defer logFile.Close() //nolint:errcheck
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()

	hosts := emulator.Generate(n, max(1, n/hostsPerRack))
	emu, err := emulator.New(emulator.Config{Username: bmcUser, Password: bmcPassword, BootDelay: bootDelay, Hosts: hosts},
		emulator.Options{TargetConfig: cfg, Log: logFile})
	if err != nil {
		return err
	}
	defer emu.Close()
	base, err := emu.Start(ctx, "127.0.0.1:0")
	if err != nil {
		return err
	}
	var manifests bytes.Buffer
	if err := emulator.WriteManifests(&manifests, emu, ns); err != nil {
		return err
	}
	ep := endpoints{Base: base, Hosts: map[string]string{}}
	var servers []*http.Server
	defer func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}()
	for _, h := range hosts {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("a BMC endpoint for %s: %w", h.Name, err)
		}
		srv := &http.Server{Handler: emu.Handler(), ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintf(logFile, "BMC endpoint of %s: %v\n", h.Name, err)
			}
		}()
		ep.Hosts[h.Name] = "http://" + ln.Addr().String()
	}
	data, err := json.Marshal(ep)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "endpoints.json"), data, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests.yaml"), manifests.Bytes(), 0o600); err != nil {
		return err
	}
	fmt.Println(emuReady)
	<-ctx.Done()
	return nil
}

// emulatorProc is the emulator child of one side and the objects that
// register its hosts.
type emulatorProc struct {
	cmd *exec.Cmd
	dir string
	// secrets are each host's BMC and networkData Secrets.
	secrets []*corev1.Secret
	// hosts are the BareMetalHosts, each pointed at its own endpoint.
	hosts []*metal3v1alpha1.BareMetalHost
	done  chan struct{}
}

// startEmulator re-executes this test binary as an emulator of n hosts
// joining the cluster of targetKubeconfig, waits until it serves, and
// reads its manifests, pointing each host at its own endpoint.
func startEmulator(n int, targetKubeconfig, dir string) (*emulatorProc, error) {
	cmd := exec.Command(os.Args[0]) //nolint:noctx // the emulator outlives this call; stop ends it, Pdeathsig if the benchmark dies
	cmd.Env = append(os.Environ(), harness.ChildEnv+"="+emulatorChild, emuHostsEnv+"="+strconv.Itoa(n),
		emuTargetEnv+"="+targetKubeconfig, emuDirEnv+"="+dir)
	stderr, err := os.Create(filepath.Join(dir, "emulator.stderr"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close() //nolint:errcheck
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// Killed with the benchmark if it dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the emulator: %w", err)
	}
	e := &emulatorProc{cmd: cmd, dir: dir, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if s.Text() == emuReady {
				close(ready)
			}
		}
		_ = cmd.Wait()
		close(e.done)
	}()
	select {
	case <-ready:
	case <-e.done:
		data, _ := os.ReadFile(stderr.Name())
		return nil, fmt.Errorf("the emulator exited before it served (%v): %s", cmd.ProcessState, strings.TrimSpace(string(data)))
	case <-time.After(2 * time.Minute):
		_ = e.stop()
		return nil, errors.New("the emulator did not serve within 2 minutes")
	}
	if err := e.readManifests(); err != nil {
		_ = e.stop()
		return nil, err
	}
	return e, nil
}

// readManifests decodes the child's manifests and points each host's BMC
// address at the host's own endpoint.
func (e *emulatorProc) readManifests() error {
	data, err := os.ReadFile(filepath.Join(e.dir, "endpoints.json"))
	if err != nil {
		return err
	}
	var ep endpoints
	if err := json.Unmarshal(data, &ep); err != nil {
		return fmt.Errorf("the emulator's endpoints.json: %w", err)
	}
	if data, err = os.ReadFile(filepath.Join(e.dir, "manifests.yaml")); err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := metal3v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	decode := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer().Decode
	for i, doc := range strings.Split(string(data), "\n---\n") {
		o, _, err := decode([]byte(doc), nil, nil)
		if err != nil {
			return fmt.Errorf("the emulator's manifest %d: %w", i, err)
		}
		switch o := o.(type) {
		case *corev1.Secret:
			e.secrets = append(e.secrets, o)
		case *metal3v1alpha1.BareMetalHost:
			own, ok := ep.Hosts[o.Name]
			if !ok {
				return fmt.Errorf("the emulator's manifest %d: no endpoint for host %s", i, o.Name)
			}
			o.Spec.BMC.Address = strings.Replace(o.Spec.BMC.Address, ep.Base, own, 1)
			e.hosts = append(e.hosts, o)
		default:
			return fmt.Errorf("the emulator's manifest %d: unexpected %T", i, o)
		}
	}
	return nil
}

// peakRSSMiB is the child's VmHWM; read it before stop.
func (e *emulatorProc) peakRSSMiB() (float64, error) {
	return harness.VmHWMMiB(e.cmd.Process.Pid)
}

// stop ends the child: SIGTERM, then SIGKILL after 10 seconds.
func (e *emulatorProc) stop() error {
	select {
	case <-e.done:
		return nil
	default:
	}
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.done:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = e.cmd.Process.Kill()
	<-e.done
	return fmt.Errorf("the emulator (pid %d) did not stop on SIGTERM within 10 s", e.cmd.Process.Pid)
}
