package capm3

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/cluster/capilocal"
	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/metal3/metal3test"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// Names of the objects every side creates.
const (
	// ns holds the hosts, the cluster and its machines.
	ns = "capm3"
	// clusterName is the one Cluster.
	clusterName = "bench"
	// controlPlaneName is the control-plane Machine made before the clock.
	controlPlaneName = "control-plane-0"
	// bootstrapSecret is the bootstrap data every Machine names.
	bootstrapSecret = clusterName + "-bootstrap"
)

func workerName(i int) string { return fmt.Sprintf("worker-%04d", i) }

func isWorker(name string) bool { return strings.HasPrefix(name, "worker-") }

// workers is how many objects the bench creates at once, on both sides:
// its own writes must not be what is measured.
const workers = 16

// image is what every machine is provisioned with. The emulator records
// it; nothing downloads it.
var image = infrav1.Image{URL: "http://images.bench.invalid/node.qcow2", Checksum: strings.Repeat("ab", 32), ChecksumType: ptrTo("sha256"), DiskFormat: ptrTo("qcow2")}

func ptrTo[T any](v T) *T { return &v }

// timeout bounds each wait of a side: CAPM3_BENCH_TIMEOUT (a duration),
// default 30m.
func timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("CAPM3_BENCH_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 30 * time.Minute
}

// site is one side's environment: a management cluster with Cluster API
// and this provider installed by clusterctl init and the Cluster API
// managers running, a workload cluster, the emulator and metal3-operator,
// each a process of its own.
type site struct {
	b        *testing.B
	name     string
	ctx      context.Context
	began    time.Time
	logDir   string
	mgmt     *testenv.Env
	workload *testenv.Env
	capi     *capilocal.Env
	emu      *emulatorProc
	// c is a client of the management cluster at a rate that keeps the
	// bench's own writes from being what is measured.
	c     client.WithWatch
	fast  *rest.Config
	op    *exec.Cmd
	opLog string
	// metrics is the operator's metrics endpoint (http://127.0.0.1:port).
	metrics string
	opEnd   chan struct{}
	stops   []func() error
}

// newSite starts a side's environment, with an emulator of hosts hosts.
// Close stops it.
func newSite(b *testing.B, name string, hosts int) *site {
	b.Helper()
	s := &site{b: b, name: name, ctx: context.Background(), began: time.Now(), logDir: b.TempDir()}
	if d := os.Getenv("CAPM3_BENCH_LOG_DIR"); d != "" {
		s.logDir = filepath.Join(d, fmt.Sprintf("%s-%d-%s", name, hosts-1, time.Now().Format("150405")))
		if err := os.MkdirAll(s.logDir, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	ok := false
	defer func() {
		if !ok {
			s.close()
		}
	}()
	adds := []func(*k8sruntime.Scheme) error{metal3v1alpha1.AddToScheme, infrav1.AddToScheme, clusterv1.AddToScheme}
	var err error
	if s.mgmt, err = testenv.NewFull(s.ctx, testenv.Options{Nodes: 1, AddToScheme: adds}); err != nil {
		s.missing(err)
	}
	s.stops = append(s.stops, s.mgmt.Stop)
	if s.workload, err = testenv.NewFull(s.ctx, testenv.Options{Nodes: 1}); err != nil {
		s.missing(err)
	}
	s.stops = append(s.stops, s.workload.Stop)
	s.step("management and workload control planes up")
	capienv.Init(b, s.mgmt, capienv.InitOptions{Infrastructure: map[string]string{"metal3": "config/metal3/default"}})
	s.step("clusterctl init: Cluster API %s core, kubeadm bootstrap and control plane, metal3 from config/metal3/default", capienv.Version)
	if s.capi, err = capilocal.New(s.ctx, s.mgmt.Config, s.mgmt.Kubeconfig, capilocal.Options{Name: name + "-", LogDir: s.logDir}); err != nil {
		s.missing(err)
	}
	s.stops = append(s.stops, s.capi.Stop)
	s.step("Cluster API managers running")
	if s.emu, err = startEmulator(hosts, s.workload.Kubeconfig, s.logDir); err != nil {
		b.Fatal(err)
	}
	s.stops = append(s.stops, s.emu.stop)
	s.step("emulator of %d hosts serving, each on its own endpoint", hosts)

	// client-go's default 5 requests/s would make creating 1,000 hosts
	// take minutes.
	s.fast = rest.CopyConfig(s.mgmt.Config)
	s.fast.QPS, s.fast.Burst = 1000, 2000
	if s.c, err = client.NewWithWatch(s.fast, client.Options{Scheme: s.mgmt.Scheme}); err != nil {
		b.Fatal(err)
	}
	ok = true
	return s
}

// missing skips the benchmark for binaries not built (fails it under
// AIRSHIP_REQUIRE_TESTBIN), and fails it on any other error.
func (s *site) missing(err error) {
	s.b.Helper()
	if errors.Is(err, testenv.ErrNoBinaries) {
		testtool.Missing(s.b, "%v", err)
		return
	}
	s.b.Fatal(err)
}

func (s *site) step(format string, args ...any) {
	s.b.Helper()
	s.b.Logf("%s [%6.1fs] %s", s.name, time.Since(s.began).Seconds(), fmt.Sprintf(format, args...))
}

// close stops every process of the side, the operator first.
func (s *site) close() {
	if err := s.stopOperator(); err != nil {
		s.b.Error(err)
	}
	for _, stop := range slices.Backward(s.stops) {
		if err := stop(); err != nil {
			s.b.Errorf("%s: %v", s.name, err)
		}
	}
	s.stops = nil
}

// startOperator starts metal3-operator with args against the management
// cluster, as its own process.
func (s *site) startOperator(bin string, args []string) {
	s.b.Helper()
	s.opLog = filepath.Join(s.logDir, s.name+"-metal3-operator.log")
	f, err := os.Create(s.opLog)
	if err != nil {
		s.b.Fatal(err)
	}
	defer f.Close() //nolint:errcheck
	addr := testenv.FreeAddr(s.b)
	s.metrics = "http://" + addr
	// The infrastructure kinds store v1beta2: the operator serves their
	// conversion webhook, and nothing of v1beta1 is read or written until
	// the CRDs point at it.
	webhook := "https://" + testenv.FreeAddr(s.b)
	//nolint:noctx // the operator outlives this call; stopOperator ends it, Pdeathsig if the benchmark dies
	s.op = exec.Command(bin, append(slices.Clone(args), "--metrics-bind-address="+addr, "--kubeconfig", s.mgmt.Kubeconfig,
		"--conversion-webhook-bind-address="+strings.TrimPrefix(webhook, "https://"), "--conversion-webhook-url="+webhook)...)
	s.op.Stdout, s.op.Stderr = f, f
	s.op.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.op.Start(); err != nil {
		s.b.Fatalf("starting metal3-operator: %v", err)
	}
	s.opEnd = make(chan struct{})
	go func() {
		_ = s.op.Wait()
		close(s.opEnd)
	}()
	metal3test.WaitConversion(s.b, s.c, webhook)
	s.step("metal3-operator started, the CRDs converting through its webhook: %s", strings.Join(args, " "))
}

// stopOperator ends metal3-operator (SIGTERM, then SIGKILL after 10 s).
func (s *site) stopOperator() error {
	if s.op == nil {
		return nil
	}
	select {
	case <-s.opEnd:
		return nil
	default:
	}
	_ = s.op.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.opEnd:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = s.op.Process.Kill()
	<-s.opEnd
	return fmt.Errorf("%s: metal3-operator did not stop on SIGTERM within 10 s", s.name)
}

// operatorAlive fails the wait when the operator exited.
func (s *site) operatorAlive() error {
	select {
	case <-s.opEnd:
		return fmt.Errorf("metal3-operator exited (%v); log %s:\n%s", s.op.ProcessState, s.opLog, tail(s.opLog, 20))
	default:
		return nil
	}
}

// poll calls cond every interval until it is done, the operator exits or
// timeout() passes; the error carries cond's last message.
func (s *site) poll(what string, interval time.Duration, cond func() (bool, string, error)) error {
	last := ""
	err := wait.PollUntilContextTimeout(s.ctx, interval, timeout(), true, func(context.Context) (bool, error) {
		if err := s.operatorAlive(); err != nil {
			return false, err
		}
		done, msg, err := cond()
		last = msg
		return done, err
	})
	if err != nil {
		return fmt.Errorf("%s: %s: %w; last: %s", s.name, what, err, last)
	}
	return nil
}

// registerHosts creates the hosts and their Secrets, 16 at once, and
// waits until every host is available. It is not timed.
func (s *site) registerHosts() {
	s.b.Helper()
	if err := s.c.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		s.b.Fatal(err)
	}
	if err := forEach(len(s.emu.secrets), func(i int) error { return s.c.Create(s.ctx, s.emu.secrets[i]) }); err != nil {
		s.b.Fatalf("creating the hosts' Secrets: %v", err)
	}
	if err := forEach(len(s.emu.hosts), func(i int) error { return s.c.Create(s.ctx, s.emu.hosts[i]) }); err != nil {
		s.b.Fatalf("creating the BareMetalHosts: %v", err)
	}
	err := s.poll("hosts available", 2*time.Second, func() (bool, string, error) {
		var list metal3v1alpha1.BareMetalHostList
		if err := s.c.List(s.ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err.Error(), nil
		}
		n, failed := 0, ""
		for _, h := range list.Items {
			if h.Status.Provisioning.State == metal3v1alpha1.StateAvailable {
				n++
			}
			if h.Status.ErrorType != "" && failed == "" {
				failed = fmt.Sprintf("; %s: %s: %s", h.Name, h.Status.ErrorType, h.Status.ErrorMessage)
			}
		}
		return n == len(s.emu.hosts), fmt.Sprintf("%d of %d available%s", n, len(s.emu.hosts), failed), nil
	})
	if err != nil {
		s.b.Fatal(err)
	}
	s.step("%d BareMetalHosts available", len(s.emu.hosts))
}

// workloadEndpoint is the workload API server's host and port.
func (s *site) workloadEndpoint() (string, int) {
	hostPort := strings.TrimPrefix(s.workload.Config.Host, "https://")
	i := strings.LastIndex(hostPort, ":")
	port, _ := strconv.Atoi(hostPort[i+1:])
	return hostPort[:i], port
}

// bootstrapData is a worker's cloud-init, as a kubeadm bootstrap provider
// would write it: kubeadm joins the workload cluster with a bootstrap
// token (the emulator, which does not emulate the kubelet's TLS bootstrap,
// registers the Node in its target cluster: the workload cluster), under
// the meta-data's name and with the host's uuid as a label, by which the
// provider finds the Node and sets its providerID.
func bootstrapData(host string, port int) string {
	return fmt.Sprintf(`#cloud-config
write_files:
- path: /run/kubeadm/kubeadm.yaml
  owner: root:root
  permissions: '0640'
  content: |
    apiVersion: kubeadm.k8s.io/v1beta3
    kind: JoinConfiguration
    discovery:
      bootstrapToken:
        apiServerEndpoint: %s:%d
        token: abcdef.0123456789abcdef
        unsafeSkipCAVerification: true
    nodeRegistration:
      name: '{{ ds.meta_data.name }}'
      kubeletExtraArgs:
        node-labels: 'metal3.io/uuid={{ ds.meta_data.uuid }}'
runcmd:
- kubeadm join --config /run/kubeadm/kubeadm.yaml
`, host, port)
}

// initCluster creates the Cluster, its Metal3Cluster (noCloudProvider),
// the workload cluster's CA (from which Cluster API writes the
// kubeconfig), the shared bootstrap data Secret and one control-plane
// Machine, and waits until that Machine is Running and the Cluster
// initialized. It is not timed.
func (s *site) initCluster() {
	s.b.Helper()
	crt, err := os.ReadFile(filepath.Join(s.workload.StateDir, "pki", "ca.crt"))
	if err != nil {
		s.b.Fatal(err)
	}
	key, err := os.ReadFile(filepath.Join(s.workload.StateDir, "pki", "ca.key"))
	if err != nil {
		s.b.Fatal(err)
	}
	host, port := s.workloadEndpoint()
	labels := map[string]string{clusterv1.ClusterNameLabel: clusterName}
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName + "-ca", Labels: labels},
			Type: "cluster.x-k8s.io/secret", Data: map[string][]byte{"tls.crt": crt, "tls.key": key}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: bootstrapSecret, Labels: labels},
			Type: "cluster.x-k8s.io/secret", Data: map[string][]byte{"value": []byte(bootstrapData(host, port)), "format": []byte("cloud-config")}},
		&infrav1.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName},
			Spec: infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: host, Port: port}, NoCloudProvider: ptrTo(true)}},
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: clusterName}}},
	}
	for _, o := range objs {
		if err := s.c.Create(s.ctx, o); err != nil {
			s.b.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	if err := s.createMachine(controlPlaneName, true); err != nil {
		s.b.Fatal(err)
	}
	err = s.poll("the control-plane Machine Running and the Cluster initialized", time.Second, func() (bool, string, error) {
		m := &clusterv1.Machine{}
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: controlPlaneName}, m); err != nil {
			return false, err.Error(), nil
		}
		c := &clusterv1.Cluster{}
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: clusterName}, c); err != nil {
			return false, err.Error(), nil
		}
		initialized := apimeta.IsStatusConditionTrue(c.Status.Conditions, clusterv1.ClusterControlPlaneInitializedCondition)
		return m.Status.Phase == string(clusterv1.MachinePhaseRunning) && m.Status.NodeRef.IsDefined() && initialized,
			fmt.Sprintf("Machine phase %q nodeRef %q; Cluster ControlPlaneInitialized %v", m.Status.Phase, m.Status.NodeRef.Name, initialized), nil
	})
	if err != nil {
		s.b.Fatal(err)
	}
	s.step("Cluster %s initialized: Machine %s Running", clusterName, controlPlaneName)
}

// createMachine creates a Metal3Machine, then its Machine (infrastructure
// first: Cluster API looks again at a Machine whose infrastructure is
// missing only after a requeue).
func (s *site) createMachine(name string, controlPlane bool) error {
	m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: infrav1.Metal3MachineSpec{Image: image}}
	if err := s.c.Create(s.ctx, m3m); err != nil {
		return fmt.Errorf("creating Metal3Machine %s/%s: %w", ns, name, err)
	}
	if err := s.c.Create(s.ctx, newMachine(name, controlPlane)); err != nil {
		return fmt.Errorf("creating Machine %s/%s: %w", ns, name, err)
	}
	return nil
}

func newMachine(name string, controlPlane bool) *clusterv1.Machine {
	labels := map[string]string{clusterv1.ClusterNameLabel: clusterName}
	if controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName:       clusterName,
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptrTo(bootstrapSecret)},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name},
		},
	}
}

// warmUp creates a worker's objects as a dry run, so that the client's
// discovery of the kinds and the first webhook calls are not timed.
func (s *site) warmUp() {
	s.b.Helper()
	m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: workerName(0)}, Spec: infrav1.Metal3MachineSpec{Image: image}}
	if err := s.c.Create(s.ctx, m3m, client.DryRunAll); err != nil {
		s.b.Fatalf("creating a Metal3Machine (dry run): %v", err)
	}
	if err := s.c.Create(s.ctx, newMachine(workerName(0), false), client.DryRunAll); err != nil {
		s.b.Fatalf("creating a Machine (dry run): %v", err)
	}
}

// check verifies the end state after n workers: each host claimed by one
// machine and each machine holding one, the Metal3Machine naming the host
// that names it; every Machine Running with a nodeRef and its host's
// providerID; one workload Node per host with that providerID.
func (s *site) check(n int) error {
	var hosts metal3v1alpha1.BareMetalHostList
	var m3ms infrav1.Metal3MachineList
	var machines clusterv1.MachineList
	var nodes corev1.NodeList
	for _, l := range []client.ObjectList{&hosts, &m3ms, &machines} {
		if err := s.c.List(s.ctx, l, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("listing %T: %w", l, err)
		}
	}
	if err := s.workload.Client.List(s.ctx, &nodes, client.HasLabels{infrav1.UUIDLabel}); err != nil {
		return fmt.Errorf("listing the workload cluster's Nodes: %w", err)
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	want := n + 1
	if len(hosts.Items) != want || len(m3ms.Items) != want || len(machines.Items) != want || len(nodes.Items) != want {
		bad("%d hosts, %d Metal3Machines, %d Machines, %d workload Nodes with %s; want %d of each", len(hosts.Items), len(m3ms.Items), len(machines.Items), len(nodes.Items), infrav1.UUIDLabel, want)
	}
	hostOf := map[string]*metal3v1alpha1.BareMetalHost{} // machine -> host
	for i := range hosts.Items {
		h := &hosts.Items[i]
		ref := h.Spec.ConsumerRef
		switch {
		case ref == nil || ref.Kind != "Metal3Machine":
			bad("host %s is claimed by no Metal3Machine", h.Name)
			continue
		case hostOf[ref.Name] != nil:
			bad("Metal3Machine %s is the consumer of hosts %s and %s", ref.Name, hostOf[ref.Name].Name, h.Name)
		}
		hostOf[ref.Name] = h
		if h.Status.Provisioning.State != metal3v1alpha1.StateProvisioned {
			bad("host %s is %s, not provisioned", h.Name, h.Status.Provisioning.State)
		}
	}
	for _, m := range m3ms.Items {
		h := hostOf[m.Name]
		switch {
		case h == nil:
			bad("Metal3Machine %s consumes no host", m.Name)
		case m.Annotations[infrav1.HostAnnotation] != ns+"/"+h.Name:
			bad("Metal3Machine %s consumes host %s but its annotation says %q", m.Name, h.Name, m.Annotations[infrav1.HostAnnotation])
		}
	}
	nodeIDs := map[string]string{} // Node name -> providerID
	for _, node := range nodes.Items {
		nodeIDs[node.Name] = node.Spec.ProviderID
	}
	for _, m := range machines.Items {
		h := hostOf[m.Spec.InfrastructureRef.Name]
		if h == nil {
			continue // reported above
		}
		id := infrav1.ProviderIDPrefix + string(h.UID)
		switch {
		case m.Status.Phase != string(clusterv1.MachinePhaseRunning) || !m.Status.NodeRef.IsDefined():
			bad("Machine %s is %q with nodeRef %q", m.Name, m.Status.Phase, m.Status.NodeRef.Name)
		case m.Spec.ProviderID != id:
			bad("Machine %s has providerID %q, want %q (host %s)", m.Name, m.Spec.ProviderID, id, h.Name)
		case nodeIDs[m.Status.NodeRef.Name] != id:
			bad("Machine %s's Node %s has providerID %q, want %q", m.Name, m.Status.NodeRef.Name, nodeIDs[m.Status.NodeRef.Name], id)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	more := ""
	if len(problems) > 10 {
		more = fmt.Sprintf(" (and %d more)", len(problems)-10)
		problems = problems[:10]
	}
	return fmt.Errorf("%s: %d machines checked: %s%s", s.name, n, strings.Join(problems, "; "), more)
}

// peaks are the peak RSS of each process of a side, MiB.
type peaks struct {
	operator, emulator float64
	// managers by binary name.
	managers map[string]float64
}

// readPeaks reads every process's VmHWM; call it before stopping them.
func (s *site) readPeaks() (peaks, error) {
	var p peaks
	var err error
	if p.operator, err = harness.VmHWMMiB(s.op.Process.Pid); err != nil {
		return p, fmt.Errorf("metal3-operator: %w", err)
	}
	if p.emulator, err = s.emu.peakRSSMiB(); err != nil {
		return p, fmt.Errorf("emulator: %w", err)
	}
	p.managers = map[string]float64{}
	for _, m := range s.capi.Managers {
		if p.managers[filepath.Base(m.Binary)], err = harness.VmHWMMiB(m.PID()); err != nil {
			return p, fmt.Errorf("%s: %w", filepath.Base(m.Binary), err)
		}
	}
	return p, nil
}

// proc is one process of a side, for its CPU time.
type proc struct {
	label string
	pid   int
}

// processes lists every process that works during a side's run: the
// operator, the Cluster API managers, the emulator, both control planes'
// components and the bench itself.
func (s *site) processes() []proc {
	ps := []proc{{"metal3-operator", s.op.Process.Pid}, {"emulator", s.emu.cmd.Process.Pid}, {"bench", os.Getpid()}}
	for _, m := range s.capi.Managers {
		ps = append(ps, proc{filepath.Base(m.Binary), m.PID()})
	}
	for _, cp := range []struct {
		label string
		env   *testenv.Env
	}{{"management", s.mgmt}, {"workload", s.workload}} {
		st, err := local.GetStatus(s.ctx, cp.env.StateDir)
		if err != nil {
			s.b.Logf("%s: the %s control plane's processes: %v", s.name, cp.label, err)
			continue
		}
		for _, c := range st.Components {
			ps = append(ps, proc{cp.label + " " + c.Name, c.PID})
		}
	}
	return ps
}

// cpuTimes reads each process's CPU seconds so far; a process that cannot
// be read is left out.
func cpuTimes(ps []proc) map[string]float64 {
	out := map[string]float64{}
	for _, p := range ps {
		if v, err := harness.CPUSeconds(p.pid); err == nil {
			out[p.label] = v
		}
	}
	return out
}

// cpuSpent says, from two readings of cpuTimes over wall, the CPU each
// process spent, largest first, and the share of the machine's cores the
// processes used.
func cpuSpent(before, after map[string]float64, wall time.Duration) string {
	type kv struct {
		label string
		s     float64
	}
	var v []kv
	total := 0.0
	for label, a := range after {
		if b, ok := before[label]; ok && a > b {
			v = append(v, kv{label, a - b})
			total += a - b
		}
	}
	slices.SortFunc(v, func(x, y kv) int {
		switch {
		case x.s > y.s:
			return -1
		case x.s < y.s:
			return 1
		}
		return strings.Compare(x.label, y.label)
	})
	parts := make([]string, 0, len(v))
	for _, e := range v {
		parts = append(parts, fmt.Sprintf("%s %.1f", e.label, e.s))
	}
	return fmt.Sprintf("%.0f CPU-s in %.0f s on %d cores (%.0f%% of them): %s", total, wall.Seconds(), runtime.NumCPU(),
		100*total/wall.Seconds()/float64(runtime.NumCPU()), strings.Join(parts, ", "))
}

// loadAverage is the 1-minute load average.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(data))[0]
}

// forEach runs f for 0..n-1, workers at once, and returns the first error.
func forEach(n int, f func(i int) error) error {
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
