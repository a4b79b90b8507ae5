package builder

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
)

// Host paths of the control-plane material.
const (
	ManifestDir   = "/etc/kubernetes/manifests"
	PKIDir        = "/etc/kubernetes/pki"
	EtcdPKIDir    = "/etc/kubernetes/etcd/pki"
	EncryptionCfg = "/etc/kubernetes/apiserver/encryption-config.yaml"
)

// PodParams are the per-node values of the control-plane static pods. The
// anchor DaemonSets pass "${NODE_IP}" and "${NODE_NAME}", substituted on
// the node.
type PodParams struct {
	NodeName string
	NodeIP   string
	Images   v1.KubernetesImages
	Network  v1.KubernetesNetwork
	// APIServer holds extra apiserver arguments and a command prefix.
	APIServer *v1.APIServerExtra
	// Encryption is set when an EncryptionPolicy exists.
	Encryption bool
	// EtcdInitialCluster is "name=peerURL,..." (default: just this member).
	EtcdInitialCluster string
	// EtcdClusterState is "new" or "existing".
	EtcdClusterState string
}

// EtcdPorts of a member: client, peer and metrics.
type EtcdPorts struct{ Client, Peer, Metrics int }

// Ports of the Kubernetes etcd and of the genesis auxiliary member.
func (p PodParams) etcdPorts() EtcdPorts {
	client := 2379
	if p.Network.Etcd != nil && p.Network.Etcd.ContainerPort != 0 {
		client = p.Network.Etcd.ContainerPort
	}
	return EtcdPorts{Client: client, Peer: client + 1, Metrics: client + 2}
}

// AuxiliaryEtcdPorts are the auxiliary member's ports on the genesis node.
func AuxiliaryEtcdPorts(p PodParams) EtcdPorts {
	base := p.etcdPorts()
	return EtcdPorts{Client: base.Client + 20000, Peer: base.Peer + 20000, Metrics: base.Metrics + 20000}
}

func hostPathVolume(name, path string, t corev1.HostPathType) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: &t}}}
}

func staticPod(name, tier string, c corev1.Container, vols []corev1.Volume) *corev1.Pod {
	c.Name = name
	c.ImagePullPolicy = corev1.PullIfNotPresent
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: "kube-system",
			Labels:    map[string]string{"component": name, "tier": tier, "application": "promenade"},
		},
		Spec: corev1.PodSpec{
			HostNetwork:       true,
			PriorityClassName: "system-node-critical",
			Containers:        []corev1.Container{c},
			Volumes:           vols,
		},
	}
}

func probe(path string, port int, scheme corev1.URIScheme) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Host: "127.0.0.1", Path: path, Port: intstr.FromInt(port), Scheme: scheme,
		}},
		InitialDelaySeconds: 15, PeriodSeconds: 10, TimeoutSeconds: 15, FailureThreshold: 8,
	}
}

func mount(name, path string) corev1.VolumeMount {
	return corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: true}
}

// APIServerPod is the kube-apiserver static pod.
func APIServerPod(p PodParams) *corev1.Pod {
	port := p.Network.Kubernetes.APIServerPort
	etcd := p.etcdPorts()
	args := []string{
		"kube-apiserver",
		"--advertise-address=" + p.NodeIP,
		"--allow-privileged=true",
		"--authorization-mode=Node,RBAC",
		"--bind-address=0.0.0.0",
		"--client-ca-file=" + PKIDir + "/cluster-ca.pem",
		"--enable-admission-plugins=NodeRestriction",
		"--etcd-cafile=" + PKIDir + "/etcd-ca.pem",
		"--etcd-certfile=" + PKIDir + "/apiserver-etcd.pem",
		"--etcd-keyfile=" + PKIDir + "/apiserver-etcd-key.pem",
		fmt.Sprintf("--etcd-servers=https://127.0.0.1:%d", etcd.Client),
		"--kubelet-client-certificate=" + PKIDir + "/apiserver-kubelet-client.pem",
		"--kubelet-client-key=" + PKIDir + "/apiserver-kubelet-client-key.pem",
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--secure-port=" + strconv.Itoa(port),
		"--service-account-issuer=https://kubernetes.default.svc." + p.Network.DNS.ClusterDomain,
		"--service-account-key-file=" + PKIDir + "/service-account.pub",
		"--service-account-signing-key-file=" + PKIDir + "/service-account-key.pem",
		"--service-cluster-ip-range=" + p.Network.Kubernetes.ServiceCIDR,
		"--tls-cert-file=" + PKIDir + "/apiserver.pem",
		"--tls-private-key-file=" + PKIDir + "/apiserver-key.pem",
	}
	if p.Encryption {
		args = append(args, "--encryption-provider-config="+EncryptionCfg)
	}
	var prefix []string
	if p.APIServer != nil {
		args = append(args, p.APIServer.Arguments...)
		prefix = p.APIServer.CommandPrefix
	}
	c := corev1.Container{
		Image:         p.Images.APIServer,
		Command:       append(append([]string(nil), prefix...), args...),
		LivenessProbe: probe("/livez", port, corev1.URISchemeHTTPS),
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Host: "127.0.0.1", Path: "/readyz", Port: intstr.FromInt(port), Scheme: corev1.URISchemeHTTPS,
		}}, PeriodSeconds: 5},
		VolumeMounts: []corev1.VolumeMount{mount("pki", PKIDir), mount("apiserver-config", "/etc/kubernetes/apiserver")},
	}
	return staticPod("kube-apiserver", "control-plane", c, []corev1.Volume{
		hostPathVolume("pki", PKIDir, corev1.HostPathDirectory),
		hostPathVolume("apiserver-config", "/etc/kubernetes/apiserver", corev1.HostPathDirectoryOrCreate),
	})
}

// ControllerManagerPod is the kube-controller-manager static pod.
func ControllerManagerPod(p PodParams) *corev1.Pod {
	kc := "/etc/kubernetes/controller-manager/kubeconfig.yaml"
	c := corev1.Container{
		Image: p.Images.ControllerManager,
		Command: []string{
			"kube-controller-manager",
			"--allocate-node-cidrs=true",
			"--authentication-kubeconfig=" + kc,
			"--authorization-kubeconfig=" + kc,
			"--bind-address=127.0.0.1",
			"--cluster-cidr=" + p.Network.Kubernetes.PodCIDR,
			"--kubeconfig=" + kc,
			"--leader-elect=true",
			"--root-ca-file=" + PKIDir + "/cluster-ca.pem",
			"--service-account-private-key-file=" + PKIDir + "/service-account-key.pem",
			"--service-cluster-ip-range=" + p.Network.Kubernetes.ServiceCIDR,
			"--use-service-account-credentials=true",
		},
		LivenessProbe: probe("/healthz", 10257, corev1.URISchemeHTTPS),
		VolumeMounts:  []corev1.VolumeMount{mount("pki", PKIDir), mount("config", "/etc/kubernetes/controller-manager")},
	}
	return staticPod("kube-controller-manager", "control-plane", c, []corev1.Volume{
		hostPathVolume("pki", PKIDir, corev1.HostPathDirectory),
		hostPathVolume("config", "/etc/kubernetes/controller-manager", corev1.HostPathDirectory),
	})
}

// SchedulerPod is the kube-scheduler static pod.
func SchedulerPod(p PodParams) *corev1.Pod {
	kc := "/etc/kubernetes/scheduler/kubeconfig.yaml"
	c := corev1.Container{
		Image: p.Images.Scheduler,
		Command: []string{
			"kube-scheduler",
			"--authentication-kubeconfig=" + kc,
			"--authorization-kubeconfig=" + kc,
			"--bind-address=127.0.0.1",
			"--kubeconfig=" + kc,
			"--leader-elect=true",
		},
		LivenessProbe: probe("/healthz", 10259, corev1.URISchemeHTTPS),
		VolumeMounts:  []corev1.VolumeMount{mount("pki", PKIDir), mount("config", "/etc/kubernetes/scheduler")},
	}
	return staticPod("kube-scheduler", "control-plane", c, []corev1.Volume{
		hostPathVolume("pki", PKIDir, corev1.HostPathDirectory),
		hostPathVolume("config", "/etc/kubernetes/scheduler", corev1.HostPathDirectory),
	})
}

// EtcdPod is a Kubernetes etcd member. name is the member name, ports its
// ports, podName the static pod name.
func EtcdPod(p PodParams, podName, member string, ports EtcdPorts) *corev1.Pod {
	peerURL := fmt.Sprintf("https://%s:%d", p.NodeIP, ports.Peer)
	initial := p.EtcdInitialCluster
	if initial == "" {
		initial = member + "=" + peerURL
	}
	state := p.EtcdClusterState
	if state == "" {
		state = "new"
	}
	dataDir := "/var/lib/etcd/" + podName
	c := corev1.Container{
		Image: p.Images.Etcd,
		Command: []string{
			"etcd",
			"--name=" + member,
			"--data-dir=" + dataDir,
			fmt.Sprintf("--listen-client-urls=https://0.0.0.0:%d", ports.Client),
			fmt.Sprintf("--advertise-client-urls=https://%s:%d", p.NodeIP, ports.Client),
			fmt.Sprintf("--listen-peer-urls=https://0.0.0.0:%d", ports.Peer),
			"--initial-advertise-peer-urls=" + peerURL,
			fmt.Sprintf("--listen-metrics-urls=http://127.0.0.1:%d", ports.Metrics),
			"--initial-cluster=" + initial,
			"--initial-cluster-state=" + state,
			"--initial-cluster-token=kubernetes-etcd",
			"--client-cert-auth=true",
			"--trusted-ca-file=" + EtcdPKIDir + "/etcd-ca.pem",
			"--cert-file=" + EtcdPKIDir + "/server.pem",
			"--key-file=" + EtcdPKIDir + "/server-key.pem",
			"--peer-client-cert-auth=true",
			"--peer-trusted-ca-file=" + EtcdPKIDir + "/peer-ca.pem",
			"--peer-cert-file=" + EtcdPKIDir + "/peer.pem",
			"--peer-key-file=" + EtcdPKIDir + "/peer-key.pem",
		},
		LivenessProbe: probe("/health", ports.Metrics, corev1.URISchemeHTTP),
		VolumeMounts: []corev1.VolumeMount{
			mount("pki", EtcdPKIDir),
			{Name: "data", MountPath: dataDir},
		},
	}
	return staticPod(podName, "control-plane", c, []corev1.Volume{
		hostPathVolume("pki", EtcdPKIDir, corev1.HostPathDirectory),
		hostPathVolume("data", dataDir, corev1.HostPathDirectoryOrCreate),
	})
}

// HAProxyPod balances 127.0.0.1:<haproxy_port> over the API servers.
func HAProxyPod(image string) *corev1.Pod {
	c := corev1.Container{
		Image:        image,
		Command:      []string{"haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"},
		VolumeMounts: []corev1.VolumeMount{mount("config", "/usr/local/etc/haproxy")},
	}
	return staticPod("haproxy", "node", c, []corev1.Volume{hostPathVolume("config", "/etc/kubernetes/haproxy", corev1.HostPathDirectory)})
}

// HAProxyConfig renders haproxy.cfg for the API servers (and etcd when the
// network sets an etcd haproxy port).
func HAProxyConfig(net v1.KubernetesNetwork, masters []string) string {
	var b strings.Builder
	b.WriteString("# Generated by promenade.\nglobal\n  maxconn 10000\n\ndefaults\n  mode tcp\n  timeout connect 5s\n  timeout client 1h\n  timeout server 1h\n")
	section := func(name string, listen, port int) {
		fmt.Fprintf(&b, "\nfrontend %s\n  bind 127.0.0.1:%d\n  default_backend %s\n\nbackend %s\n  option tcp-check\n", name, listen, name, name)
		for i, m := range masters {
			fmt.Fprintf(&b, "  server s%d %s:%d check\n", i, m, port)
		}
	}
	section("kubernetes-apiserver", net.Kubernetes.HAProxyPort, net.Kubernetes.APIServerPort)
	if net.Etcd != nil && net.Etcd.HAProxyPort != 0 {
		section("kubernetes-etcd", net.Etcd.HAProxyPort, net.Etcd.ContainerPort)
	}
	return b.String()
}

// PodYAML renders a pod as YAML.
func PodYAML(p *corev1.Pod) ([]byte, error) {
	return yaml.Marshal(p)
}
