package local

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/process"
)

//go:embed stages.yaml
var kwokStages []byte

// Result is what Up reports.
type Result struct {
	State *State
	// AlreadyRunning is true when a healthy cluster was found and left as it was.
	AlreadyRunning bool
	// PKIReused is true when the certificates of an earlier run were kept.
	PKIReused bool
	// Elapsed is how long Up took.
	Elapsed time.Duration
}

// Up starts a local control plane in opts.StateDir, or reports the one
// already running there. On any failure it stops what it started and leaves
// no process behind.
func Up(ctx context.Context, opts Options) (*Result, error) {
	opts.setDefaults()
	begin := time.Now()
	if opts.Nodes < 0 {
		return nil, fmt.Errorf("--nodes must be zero or more, got %d", opts.Nodes)
	}
	if opts.RealNodes < 0 || opts.RealNodes > MaxRealNodes {
		return nil, fmt.Errorf("--real-nodes must be between 0 and %d, got %d", MaxRealNodes, opts.RealNodes)
	}
	if _, err := parseTaints(opts.RealNodeTaints); err != nil {
		return nil, err
	}
	if len(opts.RealNodeTaints) > 0 && opts.RealNodes == 0 {
		return nil, fmt.Errorf("--real-node-taint needs --real-nodes")
	}
	if opts.APIServerPort < 0 || opts.APIServerPort > 65535 {
		return nil, fmt.Errorf("--port must be between 1 and 65535, got %d", opts.APIServerPort)
	}
	p := paths{root: opts.StateDir}
	if err := os.MkdirAll(p.root, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory %s: %w", p.root, err)
	}
	unlock, err := lockState(p)
	if err != nil {
		return nil, err
	}
	defer unlock()

	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	prev, err := readState(p.state())
	if err != nil {
		return nil, err
	}
	if prev != nil {
		running, err := keepOrClear(ctx, p, prev, opts)
		if err != nil {
			return nil, err
		}
		if running {
			return &Result{State: prev, AlreadyRunning: true, Elapsed: time.Since(begin)}, nil
		}
	}

	if missing := MissingBinaries(opts.BinDir); len(missing) > 0 {
		return nil, fmt.Errorf("control-plane binaries missing from %s: %s; %s",
			opts.BinDir, strings.Join(missing, ", "), BuildHint)
	}
	if err := checkRealNodes(opts); err != nil {
		return nil, err
	}
	ports, reused, err := prepare(p, opts, prev)
	if err != nil {
		return nil, err
	}

	st := &State{APIServerURL: apiServerURL(ports), Kubeconfig: p.adminKubeconfig(), Nodes: opts.Nodes, RealNodeCount: opts.RealNodes, Ports: ports}
	ok := false
	defer func() {
		if !ok {
			// A fresh context: ctx may be what ran out.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
			defer cancel()
			if err := stopCluster(cctx, p, st, opts.Progress); err != nil {
				progressf(opts.Progress, "cleaning up after the failed start: %v", err)
			}
			_ = os.Remove(p.state())
		}
	}()
	if opts.RealNodes > 0 {
		if err := writeState(p.state(), st); err != nil {
			return nil, err
		}
		if err := takeHostSnapshot(ctx, p); err != nil {
			return nil, err
		}
		st.HostChanged = true
		if err := writeState(p.state(), st); err != nil {
			return nil, err
		}
		if err := createBridge(ctx); err != nil {
			return nil, err
		}
		if err := guardAPIServer(ctx, ports[APIServer]); err != nil {
			return nil, err
		}
	}
	if err := startComponents(ctx, p, opts, st); err != nil {
		return nil, err
	}
	if opts.Nodes > 0 {
		t0 := time.Now()
		progressf(opts.Progress, "creating %d kwok nodes and waiting for them to be Ready", opts.Nodes)
		if err := createNodes(ctx, p.adminKubeconfig(), opts.Nodes); err != nil {
			return nil, err
		}
		progressf(opts.Progress, "%d nodes Ready (%.1fs)", opts.Nodes, time.Since(t0).Seconds())
	}
	if opts.RealNodes > 0 {
		if err := startRealNodes(ctx, p, opts, st); err != nil {
			return nil, err
		}
	}
	ok = true
	return &Result{State: st, PKIReused: reused, Elapsed: time.Since(begin)}, nil
}

// keepOrClear looks at the cluster an earlier run recorded: it reports
// true when that one is healthy (and signed by opts.CA, when given), and
// otherwise stops what is left of it and forgets it.
func keepOrClear(ctx context.Context, p paths, prev *State, opts Options) (bool, error) {
	running, problems := inspect(ctx, p, prev)
	if running {
		if opts.CA != nil && !pkiUsable(p.pki(), opts.CA) {
			return false, fmt.Errorf("the local cluster running in %s has another CA than the one given; stop it first (cluster local down)", p.root)
		}
		return true, nil
	}
	progressf(opts.Progress, "found an earlier cluster that is not healthy (%s); stopping what is left of it", strings.Join(problems, "; "))
	if err := stopCluster(ctx, p, prev, opts.Progress); err != nil {
		return false, err
	}
	if err := os.Remove(p.state()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("removing stale %s: %w", p.state(), err)
	}
	return false, nil
}

// prepare chooses the ports (an earlier run's where they are free), makes
// or reuses the certificates, and writes the kubeconfigs and kwok's
// configuration. reused says the certificates were kept.
func prepare(p paths, opts Options, prev *State) (ports map[string]int, reused bool, err error) {
	ports, err = choosePorts(opts.APIServerPort, prev, opts.RealNodes)
	if err != nil {
		return nil, false, err
	}
	reused, err = ensurePKI(p.pki(), opts.CA)
	if err != nil {
		return nil, false, fmt.Errorf("creating PKI in %s: %w", p.pki(), err)
	}
	if reused {
		progressf(opts.Progress, "reusing certificates in %s", p.pki())
	} else if opts.CA != nil {
		progressf(opts.Progress, "issued certificates in %s with the given CA (%s)", p.pki(), opts.CA.Cert.Subject.CommonName)
	} else {
		progressf(opts.Progress, "generated a CA and certificates in %s", p.pki())
	}
	if err := writeKubeconfigs(p, apiServerURL(ports)); err != nil {
		return nil, false, err
	}
	if err := fileutil.WriteAtomic(p.kwokConfig(), kwokStages, 0o644); err != nil {
		return nil, false, err
	}
	return ports, reused, nil
}

func apiServerURL(ports map[string]int) string {
	return loopback(ports[APIServer])
}

// startComponents starts the components in order, each once the one
// before is healthy, recording each process in st (and the state file) as
// soon as it runs so that a failure can stop it.
func startComponents(ctx context.Context, p paths, opts Options, st *State) error {
	h, err := newHealth(p)
	if err != nil {
		return err
	}
	for _, c := range Components {
		if c == Kwok {
			if err := bootstrapCluster(ctx, p.adminKubeconfig()); err != nil {
				return err
			}
		}
		t0 := time.Now()
		progressf(opts.Progress, "starting %s", c)
		s, err := process.Start(process.Spec{Component: c, Binary: filepath.Join(opts.BinDir, c), Args: componentArgs(c, p, st.Ports, opts), Log: p.log(c)})
		if err != nil {
			return err
		}
		s.Record.HealthURL = healthURL(c, st.Ports)
		st.Processes = append(st.Processes, s.Record)
		if err := writeState(p.state(), st); err != nil {
			return err
		}
		if err := h.waitHealthy(ctx, s); err != nil {
			return fmt.Errorf("%s did not become healthy: %w\n--- last lines of %s ---\n%s",
				c, err, s.Record.Log, process.LogTail(s.Record.Log, 15))
		}
		progressf(opts.Progress, "%s is healthy (%.1fs)", c, time.Since(t0).Seconds())
	}
	return nil
}

func writeKubeconfigs(p paths, server string) error {
	if err := writeKubeconfig(p.adminKubeconfig(), server, p.pki(), "admin", "airship-local"); err != nil {
		return err
	}
	for user, cert := range map[string]string{
		ControllerManager: "controller-manager",
		Scheduler:         "scheduler",
		Kwok:              "kwok",
	} {
		if err := writeKubeconfig(p.kubeconfig(user), server, p.pki(), cert, user); err != nil {
			return err
		}
	}
	return nil
}

// componentArgs builds each component's flags. Every listener is on 127.0.0.1
// and every one that carries credentials uses TLS.
func componentArgs(c string, p paths, ports map[string]int, opts Options) []string {
	switch c {
	case Etcd:
		return etcdArgs(p, ports)
	case APIServer:
		return apiServerArgs(p, ports, opts.RealNodes)
	case ControllerManager:
		return append(controllerManagerArgs(p, ports), opts.ExtraControllerManagerArgs...)
	case Scheduler:
		return schedulerArgs(p, ports)
	case Kwok:
		return kwokArgs(p, ports)
	}
	return nil
}

// pkiFile is the path of one file of the PKI directory.
func (p paths) pkiFile(name string) string { return filepath.Join(p.pki(), name) }

// loopback is the https URL of a port on 127.0.0.1.
func loopback(port int) string { return "https://127.0.0.1:" + strconv.Itoa(port) }

func etcdArgs(p paths, ports map[string]int) []string {
	f, loop := p.pkiFile, loopback
	return []string{
		"--name=airship-local",
		"--data-dir=" + p.etcdData(),
		"--listen-client-urls=" + loop(ports["etcd-client"]),
		"--advertise-client-urls=" + loop(ports["etcd-client"]),
		"--listen-peer-urls=" + loop(ports["etcd-peer"]),
		"--initial-advertise-peer-urls=" + loop(ports["etcd-peer"]),
		"--initial-cluster=airship-local=" + loop(ports["etcd-peer"]),
		"--cert-file=" + f("etcd-server.crt"), "--key-file=" + f("etcd-server.key"),
		"--trusted-ca-file=" + f("etcd-ca.crt"), "--client-cert-auth=true",
		"--peer-cert-file=" + f("etcd-server.crt"), "--peer-key-file=" + f("etcd-server.key"),
		"--peer-trusted-ca-file=" + f("etcd-ca.crt"), "--peer-client-cert-auth=true",
		"--listen-metrics-urls=http://127.0.0.1:" + strconv.Itoa(ports["etcd-metrics"]),
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

// apiServerArgs: the API server binds loopback. With real nodes it binds
// every address, so that pods reach it on the nodes' bridge address, which
// it advertises: the kubernetes Service's endpoint, behind kube-proxy. A
// packet filter chain (guardAPIServer), in place before it starts, refuses
// its port on every interface but loopback and the bridge. Kubelets are
// authorized by the Node authorizer and NodeRestriction; the API server
// calls them with its own client certificate and verifies theirs.
func apiServerArgs(p paths, ports map[string]int, realNodes int) []string {
	f, loop := p.pkiFile, loopback
	bind, advertise, reconciler := "127.0.0.1", "127.0.0.1", "none" // a loopback address cannot be an endpoint
	if realNodes > 0 {
		bind, advertise, reconciler = "0.0.0.0", nodeGateway, "lease"
	}
	return []string{
		"--bind-address=" + bind,
		"--secure-port=" + strconv.Itoa(ports[APIServer]),
		"--advertise-address=" + advertise,
		"--endpoint-reconciler-type=" + reconciler,
		"--kubelet-client-certificate=" + f("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + f("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority=" + f("ca.crt"),
		"--kubelet-preferred-address-types=InternalIP",
		"--enable-admission-plugins=NodeRestriction",
		"--etcd-servers=" + loop(ports["etcd-client"]),
		"--etcd-cafile=" + f("etcd-ca.crt"),
		"--etcd-certfile=" + f("apiserver-etcd-client.crt"), "--etcd-keyfile=" + f("apiserver-etcd-client.key"),
		"--tls-cert-file=" + f("apiserver.crt"), "--tls-private-key-file=" + f("apiserver.key"),
		"--client-ca-file=" + f("ca.crt"),
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f("sa.pub"),
		"--service-account-signing-key-file=" + f("sa.key"),
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		"--allow-privileged=true",
		"--profiling=false",
		"--requestheader-client-ca-file=" + f("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + f("front-proxy-client.crt"),
		"--proxy-client-key-file=" + f("front-proxy-client.key"),
		// Webhooks and aggregated APIs behind a Service are called at
		// its endpoints (the pods' addresses, on the nodes' bridge):
		// this host runs no kube-proxy that would route a ClusterIP.
		"--enable-aggregator-routing=true",
	}
}

func controllerManagerArgs(p paths, ports map[string]int) []string {
	f := p.pkiFile
	return append(servingArgs(p, ports, ControllerManager), []string{
		"--service-account-private-key-file=" + f("sa.key"),
		"--root-ca-file=" + f("ca.crt"),
		"--cluster-signing-cert-file=" + f("ca.crt"), "--cluster-signing-key-file=" + f("ca.key"),
		"--use-service-account-credentials=true",
		// The default 20 requests/s makes controllers the bottleneck when
		// hundreds of workloads are applied at once; this is a test cluster.
		"--kube-api-qps=100",
		"--kube-api-burst=200",
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		"--leader-elect=false",
		"--profiling=false",
	}...)
}

func schedulerArgs(p paths, ports map[string]int) []string {
	return append(servingArgs(p, ports, Scheduler), []string{
		"--leader-elect=false",
		"--profiling=false",
	}...)
}

// servingArgs are the flags the controller manager and the scheduler share:
// their HTTPS endpoint, their kubeconfig and whom they trust.
func servingArgs(p paths, ports map[string]int, c string) []string {
	f, kc := p.pkiFile, p.kubeconfig(c)
	return []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[c]),
		"--tls-cert-file=" + f("components-serving.crt"), "--tls-private-key-file=" + f("components-serving.key"),
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--client-ca-file=" + f("ca.crt"),
		"--requestheader-client-ca-file=" + f("front-proxy-ca.crt"),
	}
}

func kwokArgs(p paths, ports map[string]int) []string {
	return []string{
		"--kubeconfig=" + p.kubeconfig(Kwok),
		"--config=" + p.kwokConfig(),
		"--manage-nodes-with-annotation-selector=" + FakeNodeAnnotation + "=fake",
		"--server-address=127.0.0.1:" + strconv.Itoa(ports[Kwok]),
		"--cidr=" + podCIDR,
		"--node-ip=127.0.0.1",
		"--node-lease-duration-seconds=40",
	}
}

func healthURL(c string, ports map[string]int) string {
	switch c {
	case Etcd:
		return fmt.Sprintf("https://127.0.0.1:%d/health", ports["etcd-client"])
	case APIServer:
		return loopback(ports[APIServer]) + "/readyz"
	case ControllerManager, Scheduler:
		return fmt.Sprintf("https://127.0.0.1:%d/healthz", ports[c])
	case Kwok:
		return fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[Kwok])
	}
	return ""
}

// portNames are the listeners a cluster needs.
var portNames = []string{"etcd-client", "etcd-peer", "etcd-metrics", APIServer, ControllerManager, Scheduler, Kwok}

// choosePorts takes the requested apiserver port (which must be free), else
// the previous run's ports when they are free (so existing kubeconfigs keep
// working), else free ones picked by the kernel.
func choosePorts(apiPort int, prev *State, realNodes int) (map[string]int, error) {
	ports := map[string]int{}
	taken := map[int]bool{}
	if apiPort != 0 {
		if err := portFree(apiPort); err != nil {
			return nil, fmt.Errorf("port %d on 127.0.0.1 is in use (%w): choose another with --port, or stop what listens there", apiPort, err)
		}
		ports[APIServer] = apiPort
		taken[apiPort] = true
	}
	for _, name := range append(slices.Clone(portNames), nodePortNames(realNodes)...) {
		if _, ok := ports[name]; ok {
			continue
		}
		if prev != nil {
			if old := prev.Ports[name]; old != 0 && !taken[old] && portFree(old) == nil {
				ports[name] = old
				taken[old] = true
				continue
			}
		}
		for {
			port, err := freePort()
			if err != nil {
				return nil, err
			}
			if !taken[port] {
				ports[name] = port
				taken[port] = true
				break
			}
		}
	}
	return ports, nil
}

func portFree(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))) //nolint:noctx // a loopback literal: nothing to resolve or cancel
	if err != nil {
		return err
	}
	return l.Close()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0") //nolint:noctx // a loopback literal: nothing to resolve or cancel
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = l.Close() }() // only probed for its port
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockState takes an exclusive lock on the state directory so two commands
// never start or stop the same cluster at once.
func lockState(p paths) (func(), error) {
	f, err := os.OpenFile(p.lock(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", p.root, err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			_ = f.Close() // a lock file: no data in it
			return nil, fmt.Errorf("another airshipctl command holds %s: %w", p.lock(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close() // a lock file: no data in it
	}, nil
}

func progressf(w interface{ Write([]byte) (int, error) }, format string, args ...any) {
	fmt.Fprintf(w, "[local] "+format+"\n", args...)
}
