package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"

	promv1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/process"
)

// A real node is a kubelet with its own containerd (and runc, and the CNI
// plugins) on this host, joined to the local control plane. The nodes share
// one Linux bridge, nodeBridge, whose address is the gateway of every pod
// and the address the API server binds and advertises, so that pods reach
// it through the kubernetes Service (kube-proxy's DNAT to nodeGateway).
const (
	nodeBridge  = NodeBridge
	nodeNetwork = "10.88.0.0/16"
	nodeGateway = NodeGateway
	// nodePrefix is the bridge's prefix length (nodeNetwork's).
	nodePrefix = 16
	// kubeletPort is where each kubelet serves, on its own node address.
	kubeletPort = 10250
	// KubeProxy is the component name of the one kube-proxy of the host.
	KubeProxy = "kube-proxy"
	// MaxRealNodes bounds --real-nodes: each node has its own address and
	// pod range in nodeNetwork.
	MaxRealNodes = 8
)

// NodeBinaries are the binaries a real node needs besides the control plane's.
var NodeBinaries = []string{"kubelet", KubeProxy, "containerd", "containerd-shim-runc-v2", "ctr", "runc", "bridge", "host-local", "loopback", "portmap"}

// RealNodeLabel marks the real Nodes (value "true"); the kwok ones carry type=kwok.
const RealNodeLabel = "airshipit.org/real-node"

// RealNodeName is the name of the i-th real Node (0-based).
func RealNodeName(i int) string { return fmt.Sprintf("airship-node-%d", i+1) }

// RealNode is what state.json records about one real node.
type RealNode struct {
	Name string `json:"name"`
	// IP is the node's address on nodeBridge: its kubelet serves there.
	IP string `json:"ip"`
	// PodCIDR is the range the node's pods take their addresses from.
	PodCIDR string `json:"podCIDR"`
	// Dir holds the node's containerd, kubelet, CNI configuration and
	// certificates: a short path under nodeRoot named by a hash of the
	// state directory, since a unix socket's path (containerd's, the
	// kubelet's) is limited to about 100 bytes and a state directory may
	// be deeper than that allows. Down removes it.
	Dir string `json:"dir"`
	// CgroupRoot is the cgroup (in every hierarchy) the node's pods live under.
	CgroupRoot string `json:"cgroupRoot"`
}

// nodeRoot holds the nodes' directories.
const nodeRoot = "/var/lib/airship-nodes"

// Socket is the node's containerd (CRI) socket.
func (n RealNode) Socket() string { return filepath.Join(n.Dir, "containerd", "containerd.sock") }

func realNode(p paths, i int) RealNode {
	name := RealNodeName(i)
	sum := sha256.Sum256([]byte(filepath.Join(p.root, "nodes", name)))
	dir := filepath.Join(nodeRoot, hex.EncodeToString(sum[:6]))
	return RealNode{
		Name:       name,
		IP:         fmt.Sprintf("10.88.0.%d", 11+i),
		PodCIDR:    fmt.Sprintf("10.88.%d.0/24", i+1),
		Dir:        dir,
		CgroupRoot: "/" + name,
	}
}

// NodeBridge is the Linux bridge the real nodes share.
const NodeBridge = "airship0"

// NodeGateway is this host's address on the nodes' bridge: a listener
// there is reachable from every pod of a real node (and from this host).
const NodeGateway = "10.88.0.1"

// MissingNodeBinaries lists the real-node binaries absent from dir.
func MissingNodeBinaries(dir string) []string {
	var missing []string
	for _, b := range NodeBinaries {
		st, err := os.Stat(filepath.Join(dir, b))
		if err != nil || st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			missing = append(missing, b)
		}
	}
	return missing
}

// startRealNodes brings up opts.RealNodes kubelets, each with its own
// containerd, then kube-proxy, imports the images into every node and
// waits until every node is Ready. Each process is recorded in st as it
// starts; the host's state before any change is already in the snapshot.
func startRealNodes(ctx context.Context, p paths, opts Options, st *State) error {
	ca, err := pki.Load(p.pki(), "ca")
	if err != nil {
		return fmt.Errorf("loading the cluster CA: %w", err)
	}
	if err := grantNodeAccess(ctx, p.adminKubeconfig()); err != nil {
		return err
	}
	h, err := newHealth(p)
	if err != nil {
		return err
	}
	if err := writeProxyFiles(p, st, ca); err != nil {
		return err
	}
	for i := range opts.RealNodes {
		n := realNode(p, i)
		st.RealNodes = append(st.RealNodes, n)
		if err := writeState(p.state(), st); err != nil {
			return err
		}
		t0 := time.Now()
		if err := addNodeAddress(n.IP); err != nil {
			return err
		}
		if err := createCgroup(n.CgroupRoot); err != nil {
			return err
		}
		if err := writeNodeFiles(p, opts, st, n, ca); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		if err := startNodeProcess(ctx, p, st, h, "containerd/"+n.Name, opts.BinDir, "containerd",
			[]string{"--config", filepath.Join(n.Dir, "containerd.toml")}, "unix://"+n.Socket()); err != nil {
			return err
		}
		if err := importImages(ctx, opts.BinDir, n, opts.ImagesDir, opts.Progress); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		if err := startNodeProcess(ctx, p, st, h, "kubelet/"+n.Name, opts.BinDir, "kubelet", kubeletArgs(n, opts.RealNodeTaints),
			fmt.Sprintf("http://127.0.0.1:%d/healthz", st.Ports["kubelet-healthz-"+n.Name])); err != nil {
			return err
		}
		progressf(opts.Progress, "real node %s: kubelet and containerd running (%.1fs)", n.Name, time.Since(t0).Seconds())
	}
	if err := startNodeProcess(ctx, p, st, h, KubeProxy, opts.BinDir, KubeProxy,
		[]string{"--config=" + filepath.Join(p.root, "nodes", "kube-proxy.yaml"), "--hostname-override=" + st.RealNodes[0].Name},
		fmt.Sprintf("http://127.0.0.1:%d/healthz", st.Ports["kube-proxy-healthz"])); err != nil {
		return err
	}
	t0 := time.Now()
	if err := waitRealNodesReady(ctx, p.adminKubeconfig(), st.RealNodes); err != nil {
		return err
	}
	progressf(opts.Progress, "%d real nodes Ready (%.1fs)", len(st.RealNodes), time.Since(t0).Seconds())
	return nil
}

// startNodeProcess starts one node process, records it and waits until its
// health endpoint answers (when it has one).
func startNodeProcess(ctx context.Context, p paths, st *State, h *health, component, binDir, binary string, args []string, healthURL string) error {
	logName := strings.ReplaceAll(component, "/", "-")
	s, err := process.Start(process.Spec{
		Component: component, Binary: filepath.Join(binDir, binary), Args: args, Log: p.log(logName),
		// containerd finds its shim on PATH, and the shim finds runc there.
		Env: []string{"PATH=" + binDir + ":/usr/sbin:/usr/bin:/sbin:/bin"},
	})
	if err != nil {
		return err
	}
	s.Record.HealthURL = healthURL
	st.Processes = append(st.Processes, s.Record)
	if err := writeState(p.state(), st); err != nil {
		return err
	}
	if err := h.waitHealthy(ctx, s); err != nil {
		return fmt.Errorf("%s did not become healthy: %w\n--- last lines of %s ---\n%s", component, err, s.Record.Log, process.LogTail(s.Record.Log, 15))
	}
	return nil
}

// writeNodeFiles writes a node's certificates, kubeconfig, containerd,
// CNI and kubelet configuration.
func writeNodeFiles(p paths, opts Options, st *State, n RealNode, ca *pki.KeyPair) error {
	pkiDir := filepath.Join(n.Dir, "pki")
	for _, d := range []string{pkiDir, filepath.Join(n.Dir, "cni", "net.d"), filepath.Join(n.Dir, "kubelet")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	certs := []struct {
		base string
		req  pki.Request
	}{
		// The kubelet's client identity: the Node authorizer and
		// NodeRestriction let it change only its own Node and pods.
		{"kubelet-client", pki.Request{CommonName: "system:node:" + n.Name, Organizations: []string{"system:nodes"}, Client: true}},
		// Its serving certificate, which the API server verifies
		// (--kubelet-certificate-authority).
		{"kubelet-serving", pki.Request{CommonName: n.Name, Server: true, Hosts: []string{n.IP, n.Name}}},
	}
	for _, c := range certs {
		kp, err := ca.Issue(c.req)
		if err != nil {
			return err
		}
		if err := kp.WriteFiles(pkiDir, c.base); err != nil {
			return err
		}
	}
	caPEM, err := os.ReadFile(p.pkiFile("ca.crt"))
	if err != nil {
		return fmt.Errorf("reading the cluster CA: %w", err)
	}
	if err := fileutil.WriteAtomic(filepath.Join(pkiDir, "ca.crt"), caPEM, 0o644); err != nil {
		return err
	}
	if err := writeKubeconfig(filepath.Join(n.Dir, "kubelet.kubeconfig"), st.APIServerURL, pkiDir, "kubelet-client", n.Name); err != nil {
		return err
	}
	files := map[string]string{
		filepath.Join(n.Dir, "containerd.toml"):                            containerdConfig(n, opts.BinDir),
		filepath.Join(n.Dir, "cni", "net.d", "10-airship-bridge.conflist"): cniConfig(n),
		filepath.Join(n.Dir, "kubelet.yaml"):                               kubeletConfig(n, st.Ports["kubelet-healthz-"+n.Name]),
	}
	for path, data := range files {
		if err := fileutil.WriteAtomic(path, []byte(data), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// writeProxyFiles writes kube-proxy's certificate, kubeconfig and
// configuration: one kube-proxy for the host, since it programs the host's
// packet filter, which all the nodes share.
func writeProxyFiles(p paths, st *State, ca *pki.KeyPair) error {
	proxyDir := p.nodes()
	if err := os.MkdirAll(proxyDir, 0o700); err != nil {
		return err
	}
	caPEM, err := os.ReadFile(p.pkiFile("ca.crt"))
	if err != nil {
		return fmt.Errorf("reading the cluster CA: %w", err)
	}
	kp, err := ca.Issue(pki.Request{CommonName: kubeProxyUser, Client: true})
	if err != nil {
		return err
	}
	if err := kp.WriteFiles(proxyDir, "kube-proxy"); err != nil {
		return err
	}
	if err := fileutil.WriteAtomic(filepath.Join(proxyDir, "ca.crt"), caPEM, 0o644); err != nil {
		return err
	}
	if err := writeKubeconfig(filepath.Join(proxyDir, "kube-proxy.kubeconfig"), st.APIServerURL, proxyDir, "kube-proxy", "kube-proxy"); err != nil {
		return err
	}
	return fileutil.WriteAtomic(filepath.Join(proxyDir, "kube-proxy.yaml"),
		[]byte(kubeProxyConfig(filepath.Join(proxyDir, "kube-proxy.kubeconfig"), st.Ports)), 0o600)
}

// kubeProxyUser is the user Kubernetes' bootstrap RBAC binds system:node-proxier to.
const kubeProxyUser = "system:kube-proxy"

// containerdConfig keeps every path of containerd under the node's
// directory and turns off what would write elsewhere on the host (NRI's
// socket, /opt/containerd). restrict_oom_score_adj: a host without
// CAP_SYS_RESOURCE (a VM's container, this CI) cannot lower a process's
// OOM score, and every sandbox would fail.
func containerdConfig(n RealNode, binDir string) string {
	d := filepath.Join(n.Dir, "containerd")
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.image-verifier.v1.bindir", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
imports = []

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = %[5]q

  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    netns_mounts_under_state_dir = true
    cdi_spec_dirs = []
    enable_criu = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = %[6]q
          Root = %[9]q
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = [%[7]q]
      conf_dir = %[8]q
      max_conf_num = 1

  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
`, filepath.Join(d, "root"), filepath.Join(d, "state"), n.Socket(), n.Socket()+".ttrpc",
		PauseImage, filepath.Join(binDir, "runc"), binDir, filepath.Join(n.Dir, "cni", "net.d"), filepath.Join(d, "runc"))
}

// PauseImage is the sandbox image every node runs (cmd/pause, built by `make images`).
const PauseImage = "localhost/airship/pause:latest"

// cniConfig puts the node's pods on nodeBridge with addresses from its own
// range; the bridge is the gateway. No masquerading: pods talk to the
// control plane and each other, all inside nodeNetwork.
func cniConfig(n RealNode) string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "airship",
  "plugins": [
    {
      "type": "bridge",
      "bridge": %[1]q,
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %[2]q,
        "ranges": [[{"subnet": %[3]q, "rangeStart": %[4]q, "rangeEnd": %[5]q, "gateway": %[6]q}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, nodeBridge, filepath.Join(n.Dir, "cni", "ipam"), nodeNetwork,
		strings.TrimSuffix(n.PodCIDR, "0/24")+"2", strings.TrimSuffix(n.PodCIDR, "0/24")+"254", nodeGateway)
}

// kubeletConfig: TLS with client certificates only (no anonymous access,
// authorization by the API server), cgroupfs under the node's own cgroup,
// everything on disk under the node's directory.
func kubeletConfig(n RealNode, healthzPort int) string {
	pkiDir := filepath.Join(n.Dir, "pki")
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]q
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[3]d
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[4]q
authorization:
  mode: Webhook
tlsCertFile: %[5]q
tlsPrivateKeyFile: %[6]q
containerRuntimeEndpoint: %[7]q
cgroupDriver: cgroupfs
cgroupRoot: %[8]q
failCgroupV1: false
failSwapOn: false
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
registerNode: true
serializeImagePulls: false
# A laptop's disk is often fuller than a server's: evict only when nearly out.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
makeIPTablesUtilChains: false
localStorageCapacityIsolation: true
podPidsLimit: 4096
shutdownGracePeriod: 0s
`, n.IP, kubeletPort, healthzPort, filepath.Join(pkiDir, "ca.crt"),
		filepath.Join(pkiDir, "kubelet-serving.crt"), filepath.Join(pkiDir, "kubelet-serving.key"),
		"unix://"+n.Socket(), n.CgroupRoot)
}

func kubeletArgs(n RealNode, taints []string) []string {
	args := []string{
		"--config=" + filepath.Join(n.Dir, "kubelet.yaml"),
		"--kubeconfig=" + filepath.Join(n.Dir, "kubelet.kubeconfig"),
		"--root-dir=" + filepath.Join(n.Dir, "kubelet"),
		"--cert-dir=" + filepath.Join(n.Dir, "pki"),
		"--hostname-override=" + n.Name,
		"--node-ip=" + n.IP,
		// This machine: no Promenade anchor writes its /etc/kubernetes.
		"--node-labels=" + RealNodeLabel + "=true," + promv1.AnchorsLabel + "=" + promv1.AnchorsDisabled,
		"--v=1",
	}
	if len(taints) > 0 {
		args = append(args, "--register-with-taints="+strings.Join(taints, ","))
	}
	return args
}

// parseTaints checks taints written KEY[=VALUE]:EFFECT, as kubectl taint
// and the kubelet's --register-with-taints take them.
func parseTaints(taints []string) ([]corev1.Taint, error) {
	out := make([]corev1.Taint, 0, len(taints))
	for _, s := range taints {
		kv, effect, ok := strings.Cut(s, ":")
		key, value, _ := strings.Cut(kv, "=")
		switch corev1.TaintEffect(effect) {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			if !ok {
				return nil, fmt.Errorf("--real-node-taint %q: want KEY[=VALUE]:EFFECT", s)
			}
			return nil, fmt.Errorf("--real-node-taint %q: effect %q: want NoSchedule, PreferNoSchedule or NoExecute", s, effect)
		}
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, fmt.Errorf("--real-node-taint %q: key: %s", s, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return nil, fmt.Errorf("--real-node-taint %q: value: %s", s, strings.Join(errs, "; "))
		}
		out = append(out, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
	}
	return out, nil
}

// kubeProxyConfig: iptables mode, NodePorts only on the nodes' addresses,
// and no change to the host's conntrack sysctls.
func kubeProxyConfig(kubeconfig string, ports map[string]int) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]q
mode: iptables
clusterCIDR: %[2]q
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:%[3]d
metricsBindAddress: 127.0.0.1:%[4]d
nodePortAddresses: [%[2]q]
iptables:
  localhostNodePorts: false
  masqueradeAll: false
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  udpTimeout: 0s
  udpStreamTimeout: 0s
`, kubeconfig, nodeNetwork, ports["kube-proxy-healthz"], ports["kube-proxy-metrics"])
}

// waitRealNodesReady waits until every real Node reports Ready.
func waitRealNodesReady(ctx context.Context, kubeconfig string, nodes []RealNode) error {
	cs, err := clientset(kubeconfig)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var waiting []string
		for _, n := range nodes {
			node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				waiting = append(waiting, n.Name+": "+err.Error())
				continue
			}
			if !nodeReady(node) {
				waiting = append(waiting, n.Name+": "+readyMessage(node))
			}
		}
		last = strings.Join(waiting, "; ")
		return len(waiting) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the real nodes to be Ready (%s): %w", last, err)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func readyMessage(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Reason + " " + c.Message
		}
	}
	return "no Ready condition yet"
}

// nodePortNames are the extra listeners real nodes need.
func nodePortNames(realNodes int) []string {
	names := []string{"kube-proxy-healthz", "kube-proxy-metrics"}
	for i := range realNodes {
		names = append(names, "kubelet-healthz-"+RealNodeName(i))
	}
	return names
}
