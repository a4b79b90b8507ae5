package local

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	promv1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/image"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// requireRealNodes fails (AIRSHIP_REQUIRE_TESTBIN) or skips when this
// machine cannot run a real node.
func requireRealNodes(t *testing.T) string {
	t.Helper()
	bin := DefaultBinDir()
	if missing := append(MissingBinaries(bin), MissingNodeBinaries(bin)...); len(missing) > 0 {
		testtool.Missing(t, "%s missing from %s; %s", strings.Join(missing, ", "), bin, BuildHint)
	}
	if os.Geteuid() != 0 {
		testtool.Missing(t, "real nodes need root")
	}
	for _, tool := range []string{"iptables", "ip6tables", "iptables-save", "ip6tables-save", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			testtool.Missing(t, "real nodes need %s (hack/setup.sh installs it)", tool)
		}
	}
	return bin
}

// buildTestImages writes the OCI archives of pause and podprobe into a
// new directory, as `make images` does for its images.
func buildTestImages(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	// The images carry a CA bundle; these need none, so one of no consequence.
	bundleCA, err := pki.NewCA("test-bundle", time.Hour, pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ name, pkg, path string }{
		{"pause", "../../../cmd/pause", "/pause"},
		{"podprobe", "./testdata/podprobe", ""},
	} {
		out := filepath.Join(t.TempDir(), b.name)
		cmd := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-o", out, b.pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", b.pkg, err, o)
		}
		idx, err := image.Build(image.Spec{Name: b.name, Path: b.path, Binaries: map[string]string{"linux/" + runtime.GOARCH: out}, CACertificates: bundleCA.CertPEM()})
		if err != nil {
			t.Fatal(err)
		}
		digest, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		if err := image.WriteArchive(filepath.Join(dir, b.name+ImageArchiveSuffix), idx,
			image.RefName(b.name), "localhost/airship/"+b.name+"@"+digest.String()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// hostState describes what real nodes may change on the host, one line
// per fact, sorted, for a before/after comparison. It is written apart
// from the package's own snapshot, so that a change the package forgets to
// record is still seen.
func hostState(t *testing.T) []string {
	t.Helper()
	var lines []string
	run := func(name string, args ...string) string {
		out, err := exec.CommandContext(t.Context(), name, args...).Output()
		if err != nil {
			t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
		}
		return string(out)
	}
	for _, l := range strings.Split(run("ip", "-o", "link"), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines = append(lines, "link "+f[1])
		}
	}
	for _, l := range strings.Split(run("ip", "-o", "addr"), "\n") {
		if f := strings.Fields(l); len(f) > 3 {
			lines = append(lines, "addr "+f[1]+" "+f[3])
		}
	}
	for _, cmd := range []string{"iptables-save", "ip6tables-save"} {
		for _, l := range strings.Split(run(cmd), "\n") {
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if i := strings.Index(l, " ["); strings.HasPrefix(l, ":") && i > 0 {
				l = l[:i] // packet counters
			}
			lines = append(lines, cmd+" "+l)
		}
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(mounts), "\n") {
		if f := strings.Fields(l); len(f) > 4 {
			lines = append(lines, "mount "+f[4])
		}
	}
	sysctls := append(slices.Clone(hostSysctls), "net.ipv4.conf.default.forwarding", "net.ipv4.conf.all.rp_filter")
	for _, s := range sysctls {
		if b, err := os.ReadFile(sysctlPath(s)); err == nil {
			lines = append(lines, "sysctl "+s+"="+strings.TrimSpace(string(b)))
		}
	}
	for _, d := range []string{nodeRoot, "/run/containerd", "/var/lib/containerd", "/etc/containerd", "/opt/containerd", "/var/lib/cni", "/etc/cni", "/opt/cni", "/run/netns", "/var/run/nri", "/var/lib/kubelet", "/etc/kubernetes"} {
		if _, err := os.Lstat(d); err == nil {
			lines = append(lines, "path "+d)
		}
	}
	hier, err := cgroupMounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hier {
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			if e.IsDir() {
				lines = append(lines, "cgroup "+filepath.Join(h, e.Name()))
			}
		}
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		if exe, err := os.Readlink(p); err == nil && slices.Contains(NodeBinaries, filepath.Base(exe)) {
			lines = append(lines, "process "+filepath.Base(exe))
		}
	}
	slices.Sort(lines)
	return lines
}

func diffLines(before, after []string) (gone, added []string) {
	for _, l := range before {
		if !slices.Contains(after, l) {
			gone = append(gone, l)
		}
	}
	for _, l := range after {
		if !slices.Contains(before, l) {
			added = append(added, l)
		}
	}
	return gone, added
}

// TestRealNode joins two real kubelets (each with its own containerd, runc
// and CNI range; the host's kube-proxy) to a local control plane and checks
// what a cluster's node must do: each Node is Ready with the pinned runtime; the
// kubelet serves TLS and answers no one without a client certificate the
// cluster CA signed; a pod pinned by digest gets its own network namespace
// and address on the bridge, reaches the API server through the
// kubernetes Service with its ServiceAccount token from either node, runs non-root on a
// read-only root file system, and its log comes back through the API
// server (which calls the kubelet with its own certificate); a pod asking
// for runAsNonRoot with uid 0 is refused. Down then leaves the host as it
// found it: links, addresses, iptables, mounts, sysctls, directories,
// cgroups, processes.
func TestRealNode(t *testing.T) {
	bin := requireRealNodes(t)
	images := buildTestImages(t)
	unlock, err := LockRealNodeHost(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	before := hostState(t)
	state := filepath.Join(t.TempDir(), "state")
	downDone := false
	t.Cleanup(func() {
		if !downDone {
			if _, err := Down(DownOptions{StateDir: state, Purge: true}); err != nil {
				t.Errorf("down: %v", err)
			}
		}
	})
	ctx := t.Context()
	var progress bytes.Buffer
	var res *Result
	res, err = Up(ctx, Options{StateDir: state, BinDir: bin, RealNodes: 2, ImagesDir: images, Timeout: 3 * time.Minute, Progress: &progress})
	if err != nil {
		t.Fatalf("up: %v\n%s", err, progress.String())
	}
	t.Logf("up in %.1fs", res.Elapsed.Seconds())
	if len(res.State.RealNodes) != 2 {
		t.Fatalf("state records %d real nodes, want 2", len(res.State.RealNodes))
	}
	rn := res.State.RealNodes[0]
	cs, err := clientset(res.State.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range res.State.RealNodes {
		node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !nodeReady(node) || node.Status.NodeInfo.ContainerRuntimeVersion != "containerd://2.4.2" || node.Status.NodeInfo.KubeletVersion != KubernetesVersion {
			t.Fatalf("node %s: ready %v, runtime %q, kubelet %q", n.Name, nodeReady(node), node.Status.NodeInfo.ContainerRuntimeVersion, node.Status.NodeInfo.KubeletVersion)
		}
		if node.Annotations[FakeNodeAnnotation] != "" || node.Labels[RealNodeLabel] != "true" {
			t.Errorf("node %s: annotations %v labels %v: want no kwok annotation and %s=true", n.Name, node.Annotations, node.Labels, RealNodeLabel)
		}
	}

	t.Run("kubelet requires a client certificate of the cluster CA", func(t *testing.T) {
		url := fmt.Sprintf("https://%s/pods", net.JoinHostPort(rn.IP, fmt.Sprint(kubeletPort)))
		p := paths{root: state}
		admin, err := tlsConfig(p.pki(), "ca", "admin")
		if err != nil {
			t.Fatal(err)
		}
		other, err := pki.NewCA("not-the-cluster-ca", time.Hour, pki.ECDSAP256)
		if err != nil {
			t.Fatal(err)
		}
		stranger, err := other.Issue(pki.Request{CommonName: "airship-admin", Organizations: []string{"system:masters"}, Client: true})
		if err != nil {
			t.Fatal(err)
		}
		strangerCert, err := tls.X509KeyPair(stranger.CertPEM(), mustKeyPEM(t, stranger))
		if err != nil {
			t.Fatal(err)
		}
		withCert := func(certs []tls.Certificate) *tls.Config {
			c := admin.Clone()
			c.Certificates = certs
			c.ServerName = rn.IP // the serving certificate names the node's address
			return c
		}
		for _, tc := range []struct {
			name  string
			certs []tls.Certificate
			want  int
		}{
			{"no certificate", nil, http.StatusUnauthorized},
			{"another CA's certificate", []tls.Certificate{strangerCert}, http.StatusUnauthorized},
			{"the cluster admin", admin.Certificates, http.StatusOK},
		} {
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: withCert(tc.certs)}}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := c.Do(req)
			if err != nil {
				// A client certificate the server cannot verify may end the handshake.
				if tc.want != http.StatusOK {
					continue
				}
				t.Fatalf("%s: %v", tc.name, err)
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s: kubelet answered %d, want %d", tc.name, resp.StatusCode, tc.want)
			}
		}
	})

	t.Run("the API server answers on loopback and the bridge only", func(t *testing.T) {
		apiPort := res.State.Ports[APIServer]
		// A host beside this one: a network namespace joined by a veth pair
		// that is not on the bridge.
		ns := exec.CommandContext(ctx, "unshare", "--net", "sleep", "300")
		if err := ns.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ns.Process.Kill(); _ = ns.Wait() })
		pid := fmt.Sprint(ns.Process.Pid)
		in := func(args ...string) error {
			out, err := exec.CommandContext(ctx, "nsenter", append([]string{"-t", pid, "-n"}, args...)...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
			}
			return nil
		}
		// The namespace exists once its sleep runs; ip retries until then.
		var err error
		for range 50 {
			if err = exec.CommandContext(ctx, "ip", "link", "add", "airtest0", "type", "veth", "peer", "name", "eth0", "netns", pid).Run(); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("veth into the test namespace: %v", err)
		}
		for _, c := range [][]string{{"addr", "add", "10.99.0.1/30", "dev", "airtest0"}, {"link", "set", "airtest0", "up"}} {
			if out, err := exec.CommandContext(ctx, "ip", c...).CombinedOutput(); err != nil {
				t.Fatalf("ip %v: %v: %s", c, err, out)
			}
		}
		for _, c := range [][]string{{"ip", "addr", "add", "10.99.0.2/30", "dev", "eth0"}, {"ip", "link", "set", "eth0", "up"}, {"ip", "link", "set", "lo", "up"}} {
			if err := in(c...); err != nil {
				t.Fatal(err)
			}
		}
		// A listener on every address of the host answers the neighbour ...
		l, err := new(net.ListenConfig).Listen(ctx, "tcp4", "0.0.0.0:0")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				_ = c.Close()
			}
		}()
		dial := func(port int) error {
			return in("timeout", "10", "bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/10.99.0.1/%d", port))
		}
		if err := dial(l.Addr().(*net.TCPAddr).Port); err != nil {
			t.Fatalf("the neighbour cannot reach a listener on every address: %v", err)
		}
		// ... the API server, bound to every address too, refuses it at once.
		err = dial(apiPort)
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Fatalf("the neighbour connecting to the API server's port %d: %v, want connection refused", apiPort, err)
		}
	})

	st, err := GetStatus(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Healthy || len(st.Components) != len(Components)+2*2+1 || st.NodesReady != 2 {
		t.Errorf("status with two real nodes: healthy %v, %d components, %d nodes ready: %+v", st.Healthy, len(st.Components), st.NodesReady, st)
	}

	t.Run("a second real-node cluster is refused and leaves the first alone", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other")
		// A host record left by an earlier failed start of the other
		// cluster: a refused start must not "restore" from it.
		snap, err := os.ReadFile(paths{root: state}.hostSnapshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(other, "nodes"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(paths{root: other}.hostSnapshot(), snap, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = Up(ctx, Options{StateDir: other, BinDir: bin, RealNodes: 1, ImagesDir: images, Timeout: time.Minute})
		if err == nil || !strings.Contains(err.Error(), "another local cluster with real nodes") {
			t.Fatalf("a second real-node cluster: %v, want refused", err)
		}
		if _, err := net.InterfaceByName(nodeBridge); err != nil {
			t.Fatalf("the first cluster's bridge is gone after the refused start: %v", err)
		}
		st, err := GetStatus(ctx, state)
		if err != nil || !st.Healthy {
			t.Fatalf("the first cluster after the refused start: %v %+v", err, st)
		}
	})

	// On each node, its own containerd and address range.
	for _, n := range res.State.RealNodes {
		t.Run("a pod on "+n.Name+" reaches the API server through the kubernetes Service", func(t *testing.T) {
			digest := archiveDigest(t, filepath.Join(images, "podprobe"+ImageArchiveSuffix))
			name := "probe-" + n.Name
			pod := probePod(name, "localhost/airship/podprobe@"+digest, 65532)
			pod.Spec.NodeName = n.Name
			if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			got := waitPod(t, cs, name, func(p *corev1.Pod) bool {
				return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
			})
			logs, err := cs.CoreV1().Pods("default").GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
			if err != nil {
				t.Fatalf("logs through the API server: %v", err)
			}
			if got.Status.Phase != corev1.PodSucceeded {
				t.Fatalf("probe pod %s: %s", got.Status.Phase, logs)
			}
			for _, want := range []string{"user: system:serviceaccount:default:default", "rootfs: read-only"} {
				if !strings.Contains(string(logs), want) {
					t.Errorf("probe log %q lacks %q", logs, want)
				}
			}
			_, podNet, _ := net.ParseCIDR(n.PodCIDR)
			if ip := net.ParseIP(got.Status.PodIP); ip == nil || !podNet.Contains(ip) {
				t.Errorf("pod IP %q not in %s's pod range %s", got.Status.PodIP, n.Name, n.PodCIDR)
			}
			if got.Spec.HostNetwork {
				t.Error("probe ran in the host's network")
			}
		})
	}

	t.Run("runAsNonRoot with uid 0 is refused", func(t *testing.T) {
		digest := archiveDigest(t, filepath.Join(images, "podprobe"+ImageArchiveSuffix))
		if _, err := cs.CoreV1().Pods("default").Create(ctx, probePod("root", "localhost/airship/podprobe@"+digest, 0), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := waitPod(t, cs, "root", func(p *corev1.Pod) bool {
			for _, c := range p.Status.ContainerStatuses {
				if c.State.Waiting != nil && c.State.Waiting.Reason == "CreateContainerConfigError" {
					return true
				}
			}
			return p.Status.Phase != corev1.PodPending
		})
		if got.Status.Phase != corev1.PodPending {
			t.Fatalf("pod with runAsUser 0 and runAsNonRoot: phase %s, want refused", got.Status.Phase)
		}
	})

	if _, err := Down(DownOptions{StateDir: state, Purge: true}); err != nil {
		t.Fatalf("down: %v", err)
	}
	downDone = true
	after := hostState(t)
	if gone, added := diffLines(before, after); len(gone)+len(added) > 0 {
		t.Errorf("the host differs after down:\ngone:\n  %s\nadded:\n  %s", strings.Join(gone, "\n  "), strings.Join(added, "\n  "))
	}
}

func mustKeyPEM(t *testing.T, kp *pki.KeyPair) []byte {
	t.Helper()
	b, err := kp.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func archiveDigest(t *testing.T, path string) string {
	t.Helper()
	_, digest, err := archiveImage(path)
	if err != nil {
		t.Fatal(err)
	}
	return digest
}

// probePod runs podprobe once as uid, with the restrictions the operators'
// Deployments ask for.
func probePod(name, img string, uid int64) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To(uid),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "probe", Image: img, ImagePullPolicy: corev1.PullNever,
				SecurityContext: &corev1.SecurityContext{
					ReadOnlyRootFilesystem:   ptr.To(true),
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

func waitPod(t *testing.T, cs kubernetes.Interface, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return done(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s: %v; last status %+v", name, err, last)
	}
	return last
}

// TestRealNodeConfiguration: what keeps a real node's listeners closed to
// strangers and its files under its own directory, as written for the
// kubelet, containerd and the API server.
func TestRealNodeConfiguration(t *testing.T) {
	p := paths{root: "/state"}
	n := realNode(p, 0)
	if !strings.HasPrefix(n.Dir, nodeRoot+"/") || len(n.Socket()+".ttrpc") > 100 {
		t.Errorf("node directory %s, socket %s: want a short path under %s", n.Dir, n.Socket(), nodeRoot)
	}
	if other := realNode(paths{root: "/other"}, 0); other.Dir == n.Dir {
		t.Errorf("two state directories share the node directory %s", n.Dir)
	}
	kubelet := kubeletConfig(n, 12345)
	for _, want := range []string{
		"readOnlyPort: 0", "anonymous:\n    enabled: false", "mode: Webhook", "address: \"" + n.IP + "\"",
		"healthzBindAddress: 127.0.0.1", "tlsCertFile: \"" + n.Dir + "/pki/kubelet-serving.crt\"", "cgroupRoot: \"/" + n.Name + "\"",
	} {
		if !strings.Contains(kubelet, want) {
			t.Errorf("kubelet configuration lacks %q:\n%s", want, kubelet)
		}
	}
	// The node is this machine: no Promenade anchor may write its /etc.
	if args := strings.Join(kubeletArgs(n, nil), " "); !strings.Contains(args, ","+promv1.AnchorsLabel+"="+promv1.AnchorsDisabled) {
		t.Errorf("kubelet arguments %s do not keep Promenade's anchors off the node", args)
	}
	ctrd := containerdConfig(n, "/bin")
	for _, want := range []string{"restrict_oom_score_adj = true", `"io.containerd.nri.v1.nri"`, "netns_mounts_under_state_dir = true", "disable_tcp_service = true", "stream_server_address = '127.0.0.1'", "Root = \"" + n.Dir + "/containerd/runc\""} {
		if !strings.Contains(ctrd, want) {
			t.Errorf("containerd configuration lacks %q:\n%s", want, ctrd)
		}
	}
	for _, tc := range []struct {
		realNodes                   int
		bind, advertise, reconciler string
	}{
		{0, "127.0.0.1", "127.0.0.1", "none"},
		{1, "0.0.0.0", NodeGateway, "lease"},
	} {
		args := strings.Join(apiServerArgs(p, map[string]int{APIServer: 6443}, tc.realNodes), " ")
		for _, want := range []string{"--bind-address=" + tc.bind + " ", "--advertise-address=" + tc.advertise + " ", "--endpoint-reconciler-type=" + tc.reconciler + " ",
			"--kubelet-client-certificate=", "--kubelet-certificate-authority=", "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction"} {
			if !strings.Contains(args+" ", want) {
				t.Errorf("%d real nodes: API server arguments lack %q: %s", tc.realNodes, want, args)
			}
		}
	}
	proxy := kubeProxyConfig("/kc", map[string]int{"kube-proxy-healthz": 1, "kube-proxy-metrics": 2})
	for _, want := range []string{"bindAddress: 127.0.0.1", "healthzBindAddress: 127.0.0.1:1", "metricsBindAddress: 127.0.0.1:2", `nodePortAddresses: ["` + nodeNetwork + `"]`, "localhostNodePorts: false", "maxPerCore: 0"} {
		if !strings.Contains(proxy, want) {
			t.Errorf("kube-proxy configuration lacks %q:\n%s", want, proxy)
		}
	}
}

// TestRealNodeFailedStartLeavesHostClean: an archive that is no OCI
// archive is refused before anything changes; a start that fails after the
// host was changed (the bridge, the guard chain, containerd running: here
// an archive whose index names a blob it lacks, which containerd refuses
// to import) stops what it started and puts the host back.
func TestRealNodeFailedStartLeavesHostClean(t *testing.T) {
	bin := requireRealNodes(t)
	images := buildTestImages(t)
	unlock, err := LockRealNodeHost(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	notTar := filepath.Join(images, "not-tar"+ImageArchiveSuffix)
	if err := os.WriteFile(notTar, []byte("not a tar archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Up(t.Context(), Options{StateDir: filepath.Join(t.TempDir(), "refused"), BinDir: bin, RealNodes: 1, ImagesDir: images, Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "not-tar"+ImageArchiveSuffix) {
		t.Fatalf("up with an archive that is not one: %v, want an error naming it", err)
	}
	if _, err := net.InterfaceByName(nodeBridge); err == nil {
		t.Fatalf("the bridge %s exists after a start refused before any change", nodeBridge)
	}
	if err := os.Remove(notTar); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	index := `{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.index.v1+json","digest":"sha256:` + strings.Repeat("0", 64) + `","size":100,"annotations":{"org.opencontainers.image.ref.name":"localhost/airship/broken:latest"}}]}`
	for name, body := range map[string]string{"oci-layout": `{"imageLayoutVersion":"1.0.0"}`, "index.json": index} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(images, "broken"+ImageArchiveSuffix), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	before := hostState(t)
	state := filepath.Join(t.TempDir(), "state")
	var progress bytes.Buffer
	_, err = Up(t.Context(), Options{StateDir: state, BinDir: bin, RealNodes: 1, ImagesDir: images, Timeout: 3 * time.Minute, Progress: &progress})
	if err == nil || !strings.Contains(err.Error(), "broken"+ImageArchiveSuffix) {
		t.Fatalf("up with a broken image archive: %v, want an error naming it", err)
	}
	if !strings.Contains(progress.String(), "restoring the host") {
		t.Fatalf("the start failed before it changed the host, which this test is about:\n%s", progress.String())
	}
	if _, err := os.Stat(filepath.Join(state, "state.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state.json after a failed start: %v", err)
	}
	after := hostState(t)
	if gone, added := diffLines(before, after); len(gone)+len(added) > 0 {
		t.Errorf("the host differs after a failed start:\ngone:\n  %s\nadded:\n  %s", strings.Join(gone, "\n  "), strings.Join(added, "\n  "))
	}
}

// TestRealNodeTaints: --real-node-taint as kubectl taint writes it reaches
// the kubelet's --register-with-taints; anything else is refused, naming
// the flag, before anything starts.
func TestRealNodeTaints(t *testing.T) {
	for _, tc := range []struct {
		taints []string
		want   string // the kubelet argument, or the error's text
		ok     bool
	}{
		{nil, "", true},
		{[]string{"airshipit.org/real-node=true:NoSchedule"}, "--register-with-taints=airshipit.org/real-node=true:NoSchedule", true},
		{[]string{"a:NoExecute", "b=c:PreferNoSchedule"}, "--register-with-taints=a:NoExecute,b=c:PreferNoSchedule", true},
		{[]string{"a=b"}, "want KEY[=VALUE]:EFFECT", false},
		{[]string{"a=b:Sometimes"}, `effect "Sometimes"`, false},
		{[]string{"=b:NoSchedule"}, "key:", false},
		{[]string{"bad key:NoSchedule"}, "key:", false},
		{[]string{"a=not valid:NoSchedule"}, "value:", false},
	} {
		_, err := parseTaints(tc.taints)
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: error %v, want ok %v (%q)", tc.taints, err, tc.ok, tc.want)
			continue
		}
		if !tc.ok {
			_, err := Up(t.Context(), Options{StateDir: t.TempDir(), RealNodes: 1, RealNodeTaints: tc.taints})
			if err == nil || !strings.Contains(err.Error(), "--real-node-taint") {
				t.Errorf("%q: Up: %v, want the flag named", tc.taints, err)
			}
			continue
		}
		args := strings.Join(kubeletArgs(realNode(paths{root: "/state"}, 0), tc.taints), " ")
		if got := strings.Contains(args, "--register-with-taints"); got != (tc.want != "") || !strings.Contains(args, tc.want) {
			t.Errorf("%q: kubelet arguments %s, want %q", tc.taints, args, tc.want)
		}
	}
	if _, err := Up(t.Context(), Options{StateDir: t.TempDir(), RealNodeTaints: []string{"a:NoSchedule"}}); err == nil || !strings.Contains(err.Error(), "needs --real-nodes") {
		t.Errorf("a taint without real nodes: %v", err)
	}
}
