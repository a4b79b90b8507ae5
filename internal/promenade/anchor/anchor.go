// Package anchor renders Promenade's anchor DaemonSets. An anchor runs on
// every node that should host a control-plane component and copies the
// component's static-pod manifest (and its certificates and configuration)
// into /etc/kubernetes on the host, writing a file only when its content
// changed. The kubelet then runs the component even while the API server is
// unreachable. The etcd anchor adds a new node's member to the running
// cluster as a learner before starting it, and promotes it once caught up.
package anchor

import (
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/promenade/builder"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

//go:embed anchor.sh
var anchorScript string

// Script is the anchor loop run in every anchor pod.
func Script() string { return anchorScript }

// Namespace of the anchors.
const Namespace = "kube-system"

// ChecksumAnnotation on an anchor's pod template is the digest of its files
// (ConfigMap and Secret data): changed material rolls the DaemonSet.
const ChecksumAnnotation = "promenade.airshipit.org/checksum"

// Components are the anchors, in the order Objects renders them.
var Components = []string{"apiserver", "controller-manager", "scheduler", "etcd", "calico-etcd", "haproxy"}

// DefaultImage runs the anchor loop when HostSystem names no monitoring_image.
const DefaultImage = "busybox:1.36"

// file is one entry of the anchor's file list.
type file struct {
	key, path string
	mode      string
	data      string
	secret    bool
}

type component struct {
	name         string // apiserver, controller-manager, ...
	nodeSelector map[string]string
	image        string
	files        []file
	env          []corev1.EnvVar
}

// Objects renders the ConfigMap, Secret and DaemonSet of each anchor.
func Objects(set *docset.Set) ([]client.Object, error) {
	r, err := newRenderer(set)
	if err != nil {
		return nil, err
	}
	// In the order of Components.
	var comps []component
	for _, build := range []func() (component, error){r.apiserver, r.controllerManager, r.scheduler, r.etcd, r.calicoEtcd, r.haproxy} {
		c, err := build()
		if err != nil {
			return nil, err
		}
		comps = append(comps, c)
	}
	// Every missing certificate or key in one error, so that one
	// generate-certs run fixes them all.
	if len(r.missing) > 0 {
		return nil, fmt.Errorf("anchors need material missing from the configuration (run promenade generate-certs): %s", strings.Join(dedupe(r.missing), ", "))
	}
	var objs []client.Object
	for _, c := range comps {
		objs = append(objs, c.objects()...)
	}
	return objs, nil
}

// renderer holds what every anchor is rendered from, read once from the
// configuration, and collects the material the anchors name but the
// configuration lacks.
type renderer struct {
	set    *docset.Set
	g      v1.Genesis
	net    v1.KubernetesNetwork
	host   v1.HostSystem
	enc    v1.EncryptionPolicy
	hasEnc bool
	nodes  []docset.Node
	params builder.PodParams
	// image runs the anchor loop of every component but the etcds.
	image string
	// Files more than one anchor carries.
	clusterCA, etcdCA, saKey file
	// missing are "schema name" of material not found.
	missing []string
}

// newRenderer reads the documents the anchors are rendered from.
func newRenderer(set *docset.Set) (*renderer, error) {
	r := &renderer{set: set}
	for _, one := range []struct {
		schema string
		v      any
	}{{v1.SchemaGenesis, &r.g}, {v1.SchemaKubernetesNetwork, &r.net}, {v1.SchemaHostSystem, &r.host}} {
		if err := set.One(one.schema, one.v); err != nil {
			return nil, err
		}
	}
	hasEnc, err := set.Optional(v1.SchemaEncryptionPolicy, &r.enc)
	if err != nil {
		return nil, err
	}
	r.hasEnc = hasEnc && len(r.enc.Etcd) > 0
	if r.nodes, err = set.Nodes(); err != nil {
		return nil, err
	}
	// The anchor substitutes the ${...} values on its node.
	r.params = builder.PodParams{
		NodeName: "${NODE_NAME}", NodeIP: "${NODE_IP}", Images: r.g.Images.Kubernetes, Network: r.net,
		APIServer: r.g.APIServer, Encryption: r.hasEnc,
		EtcdInitialCluster: "${ETCD_INITIAL_CLUSTER}", EtcdClusterState: "${ETCD_INITIAL_CLUSTER_STATE}",
	}
	r.image = r.host.Images.MonitoringImage
	if r.image == "" {
		r.image = DefaultImage
	}
	r.clusterCA = r.pemFile("cluster-ca.pem", builder.PKIDir, "cluster-ca.pem", v1.SchemaCertificateAuthority, "kubernetes")
	r.etcdCA = r.pemFile("etcd-ca.pem", builder.PKIDir, "etcd-ca.pem", v1.SchemaCertificateAuthority, "kubernetes-etcd")
	r.saKey = r.pemFile("service-account-key.pem", builder.PKIDir, "service-account-key.pem", v1.SchemaPrivateKey, "service-account")
	return r, nil
}

// mat returns the PEM of one document, noting it as missing when absent.
func (r *renderer) mat(schema, name string) string {
	s := r.set.PEM(schema, name)
	if s == "" {
		r.missing = append(r.missing, schema+" "+name)
	}
	return s
}

// pemFile is a secret file written to dir/base; keys are readable by root only.
func (r *renderer) pemFile(key, dir, base string, schema, name string) file {
	mode := "0644"
	if strings.HasSuffix(base, "-key.pem") {
		mode = "0600"
	}
	return file{key: key, path: dir + "/" + base, mode: mode, data: r.mat(schema, name), secret: true}
}

// certPair is a certificate and its key, in the PKI directory.
func (r *renderer) certPair(name string) []file {
	return []file{
		r.pemFile(name+".pem", builder.PKIDir, name+".pem", v1.SchemaCertificate, name),
		r.pemFile(name+"-key.pem", builder.PKIDir, name+"-key.pem", v1.SchemaCertificateKey, name),
	}
}

// podFile is a static-pod manifest; a template's ${...} values are
// substituted by the anchor on its node.
func podFile(p *corev1.Pod, template bool) (file, error) {
	b, err := yaml.Marshal(p)
	if err != nil {
		return file{}, err
	}
	key := p.Name + ".yaml"
	if template {
		key += ".tmpl"
	}
	return file{key: key, path: builder.ManifestDir + "/" + p.Name + ".yaml", mode: "0600", data: string(b)}, nil
}

// kubeconfig is the component's kubeconfig: the local API server, with the
// component's client certificate.
func (r *renderer) kubeconfig(comp string) file {
	b, _ := yaml.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Config",
		"clusters": []any{map[string]any{"name": "kubernetes", "cluster": map[string]any{
			"server": fmt.Sprintf("https://127.0.0.1:%d", r.net.Kubernetes.APIServerPort), "certificate-authority": builder.PKIDir + "/cluster-ca.pem"}}},
		"users": []any{map[string]any{"name": comp, "user": map[string]any{
			"client-certificate": builder.PKIDir + "/" + comp + ".pem", "client-key": builder.PKIDir + "/" + comp + "-key.pem"}}},
		"contexts":        []any{map[string]any{"name": comp, "context": map[string]any{"cluster": "kubernetes", "user": comp}}},
		"current-context": comp,
	})
	return file{key: "kubeconfig.yaml", path: "/etc/kubernetes/" + comp + "/kubeconfig.yaml", mode: "0600", data: string(b)}
}

func (r *renderer) apiserver() (component, error) {
	apiserverPod, err := podFile(builder.APIServerPod(r.params), true)
	if err != nil {
		return component{}, err
	}
	api := component{name: "apiserver", image: r.image, nodeSelector: map[string]string{"kubernetes-apiserver": "enabled"}}
	api.files = append(api.files, apiserverPod, r.clusterCA, r.etcdCA, r.saKey,
		r.pemFile("service-account.pub", builder.PKIDir, "service-account.pub", v1.SchemaPublicKey, "service-account"))
	api.files = append(api.files, r.certPair("apiserver")...)
	api.files = append(api.files, r.certPair("apiserver-etcd")...)
	api.files = append(api.files, r.certPair("apiserver-kubelet-client")...)
	if r.hasEnc {
		var res []any
		for _, e := range r.enc.Etcd {
			res = append(res, map[string]any{"resources": e.Resources, "providers": e.Providers})
		}
		b, err := yaml.Marshal(map[string]any{"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration", "resources": res})
		if err != nil {
			return component{}, err
		}
		api.files = append(api.files, file{key: "encryption-config.yaml", path: builder.EncryptionCfg, mode: "0600", data: string(b), secret: true})
	}
	return api, nil
}

func (r *renderer) controllerManager() (component, error) {
	cmPod, err := podFile(builder.ControllerManagerPod(r.params), false)
	if err != nil {
		return component{}, err
	}
	cm := component{name: "controller-manager", image: r.image, nodeSelector: map[string]string{"kubernetes-controller-manager": "enabled"}}
	cm.files = append(cm.files, cmPod, r.kubeconfig("controller-manager"), r.clusterCA, r.saKey)
	cm.files = append(cm.files, r.certPair("controller-manager")...)
	return cm, nil
}

func (r *renderer) scheduler() (component, error) {
	schedPod, err := podFile(builder.SchedulerPod(r.params), false)
	if err != nil {
		return component{}, err
	}
	sched := component{name: "scheduler", image: r.image, nodeSelector: map[string]string{"kubernetes-scheduler": "enabled"}}
	sched.files = append(sched.files, schedPod, r.kubeconfig("scheduler"), r.clusterCA)
	sched.files = append(sched.files, r.certPair("scheduler")...)
	return sched, nil
}

func (r *renderer) etcd() (component, error) {
	ports := etcdPorts(r.net)
	etcdPod, err := podFile(builder.EtcdPod(r.params, "kubernetes-etcd", "${NODE_NAME}", ports), true)
	if err != nil {
		return component{}, err
	}
	etcd := component{name: "etcd", image: r.g.Images.Kubernetes.Etcd, nodeSelector: map[string]string{"kubernetes-etcd": "enabled"}}
	etcd.files = append(etcd.files, etcdPod,
		r.pemFile("etcd-ca.pem", builder.EtcdPKIDir, "etcd-ca.pem", v1.SchemaCertificateAuthority, "kubernetes-etcd"),
		r.pemFile("peer-ca.pem", builder.EtcdPKIDir, "peer-ca.pem", v1.SchemaCertificateAuthority, "kubernetes-etcd-peer"))
	// Per-node server and peer certificates; the anchor picks its node's.
	hosts := []string{r.g.Hostname}
	for _, n := range r.nodes {
		hosts = append(hosts, n.Hostname)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		for _, suffix := range []string{"", "-peer"} {
			name := "kubernetes-etcd-" + h + suffix
			if r.set.PEM(v1.SchemaCertificate, name) == "" {
				continue
			}
			etcd.files = append(etcd.files,
				file{key: name + ".pem", data: r.mat(v1.SchemaCertificate, name), secret: true},
				file{key: name + "-key.pem", data: r.mat(v1.SchemaCertificateKey, name), secret: true})
		}
	}
	etcd.files = append(etcd.files,
		file{key: "kubernetes-etcd-${NODE_NAME}.pem", path: builder.EtcdPKIDir + "/server.pem", mode: "0644"},
		file{key: "kubernetes-etcd-${NODE_NAME}-key.pem", path: builder.EtcdPKIDir + "/server-key.pem", mode: "0600"},
		file{key: "kubernetes-etcd-${NODE_NAME}-peer.pem", path: builder.EtcdPKIDir + "/peer.pem", mode: "0644"},
		file{key: "kubernetes-etcd-${NODE_NAME}-peer-key.pem", path: builder.EtcdPKIDir + "/peer-key.pem", mode: "0600"},
		// The anchor's own etcd client credentials (not written to the host).
		file{key: "anchor.pem", data: r.mat(v1.SchemaCertificate, "kubernetes-etcd-anchor"), secret: true},
		file{key: "anchor-key.pem", data: r.mat(v1.SchemaCertificateKey, "kubernetes-etcd-anchor"), secret: true},
	)
	var endpoints []string
	for _, ip := range masters(r.g, r.nodes, "kubernetes-etcd=enabled") {
		endpoints = append(endpoints, fmt.Sprintf("https://%s:%d", ip, ports.Client))
	}
	etcd.env = []corev1.EnvVar{
		{Name: "ETCD_ENDPOINTS", Value: strings.Join(endpoints, ",")},
		{Name: "ETCD_PEER_PORT", Value: strconv.Itoa(ports.Peer)},
	}
	return etcd, nil
}

func (r *renderer) haproxy() (component, error) {
	haPod, err := podFile(builder.HAProxyPod(r.host.Images.HAProxy), false)
	if err != nil {
		return component{}, err
	}
	ha := component{name: "haproxy", image: r.image}
	ha.files = append(ha.files, haPod, file{key: "haproxy.cfg", path: "/etc/kubernetes/haproxy/haproxy.cfg", mode: "0644",
		data: builder.HAProxyConfig(r.net, masters(r.g, r.nodes, "kubernetes-apiserver=enabled"))})
	return ha, nil
}

func etcdPorts(net v1.KubernetesNetwork) builder.EtcdPorts {
	client := 2379
	if net.Etcd != nil && net.Etcd.ContainerPort != 0 {
		client = net.Etcd.ContainerPort
	}
	return builder.EtcdPorts{Client: client, Peer: client + 1, Metrics: client + 2}
}

func masters(g v1.Genesis, nodes []docset.Node, label string) []string {
	out := []string{g.IP}
	for _, n := range nodes {
		for _, l := range append(append([]string(nil), n.Labels.Static...), n.Labels.Dynamic...) {
			if l == label {
				out = append(out, n.IP)
				break
			}
		}
	}
	return out
}

func dedupe(s []string) []string {
	sort.Strings(s)
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// objects renders the component's anchor: a ConfigMap with the anchor
// script, the file list and the public files, a Secret with the private
// ones, and the DaemonSet that runs the script with both mounted.
func (c component) objects() []client.Object {
	name := c.name + "-anchor"
	labels := map[string]string{"application": "promenade", "component": name}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
		Data:       map[string]string{"anchor.sh": anchorScript},
	}
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{},
	}
	var list strings.Builder
	list.WriteString("# key path mode\n")
	for _, f := range c.files {
		if f.data != "" {
			if f.secret {
				secret.StringData[f.key] = f.data
			} else {
				cm.Data[f.key] = f.data
			}
		}
		if f.path != "" {
			fmt.Fprintf(&list, "%s %s %s\n", f.key, f.path, f.mode)
		}
	}
	cm.Data["files"] = list.String()
	// A change of any file (a renewed certificate, a new image) changes the
	// pod template, so the DaemonSet rolls its anchors.
	sum, _ := json.Marshal([]map[string]string{cm.Data, secret.StringData})
	checksum := fmt.Sprintf("sha256:%x", sha256.Sum256(sum))
	return []client.Object{cm, secret, c.daemonSet(name, labels, checksum)}
}

// daemonSet runs the anchor script on the component's nodes, with the
// host's /etc/kubernetes and the anchor's ConfigMap and Secret mounted.
func (c component) daemonSet(name string, labels map[string]string, checksum string) *appsv1.DaemonSet {
	env := append([]corev1.EnvVar{
		{Name: "ANCHOR_NAME", Value: c.name},
		{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "NODE_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
	}, c.env...)
	if c.name == "etcd" {
		env = append(env, corev1.EnvVar{Name: "PKI_DIR", Value: "/anchor-pki"})
	}
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{ChecksumAnnotation: checksum}},
				Spec: corev1.PodSpec{
					NodeSelector: c.nodeSelector,
					// Never on a Node marked as not Promenade's.
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
							{Key: v1.AnchorsLabel, Operator: corev1.NodeSelectorOpNotIn, Values: []string{v1.AnchorsDisabled}},
						}}},
					}}},
					Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					PriorityClassName:             "system-node-critical",
					HostNetwork:                   true,
					DNSPolicy:                     corev1.DNSClusterFirstWithHostNet,
					TerminationGracePeriodSeconds: ptr.To[int64](10),
					Containers: []corev1.Container{{
						Name:    "anchor",
						Image:   c.image,
						Command: []string{"/bin/sh", "/anchor/anchor.sh"},
						Env:     env,
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/anchor-ready"}}},
							PeriodSeconds: 5,
						},
						SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "host-etc-kubernetes", MountPath: "/host/etc/kubernetes"},
							{Name: "anchor", MountPath: "/anchor", ReadOnly: true},
							{Name: "pki", MountPath: "/anchor-pki", ReadOnly: true},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "host-etc-kubernetes", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/kubernetes", Type: &dirOrCreate}}},
						{Name: "anchor", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
						{Name: "pki", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name, DefaultMode: ptr.To[int32](0o400)}}},
					},
				},
			},
		},
	}
}

// YAML renders objects as a multi-document stream.
func YAML(objs []client.Object) ([]byte, error) {
	var b strings.Builder
	for _, o := range objs {
		y, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return []byte(b.String()), nil
}

// Calico etcd: a second etcd cluster on the nodes labelled
// calico-etcd=enabled, with its own CA, certificates, ports and directories
// (the seed: "we deploy two separate etcd clusters"). Its members are the
// labelled nodes known to the configuration, named by hostname.
const (
	calicoEtcdPKIDir     = "/etc/kubernetes/calico-etcd/pki"
	calicoEtcdClientPort = 6666
)

func (r *renderer) calicoEtcd() (component, error) {
	g, nodes, params := r.g, r.nodes, r.params
	ports := builder.EtcdPorts{Client: calicoEtcdClientPort, Peer: calicoEtcdClientPort + 1, Metrics: calicoEtcdClientPort + 2}
	type member struct{ name, ip string }
	members := []member{{g.Hostname, g.IP}}
	if !hasLabel(append(append([]string(nil), g.Labels.Static...), g.Labels.Dynamic...), "calico-etcd=enabled") {
		members = nil
	}
	for _, n := range nodes {
		if hasLabel(append(append([]string(nil), n.Labels.Static...), n.Labels.Dynamic...), "calico-etcd=enabled") {
			members = append(members, member{n.Hostname, n.IP})
		}
	}
	var initial []string
	for _, m := range members {
		initial = append(initial, fmt.Sprintf("%s=https://%s:%d", m.name, m.ip, ports.Peer))
	}
	params.EtcdInitialCluster = strings.Join(initial, ",")
	params.EtcdClusterState = "new"
	p := builder.EtcdPod(params, "calico-etcd", "${NODE_NAME}", ports)
	// The Kubernetes etcd pod, moved to Calico's directories and token.
	c := &p.Spec.Containers[0]
	for i, a := range c.Command {
		a = strings.ReplaceAll(a, builder.EtcdPKIDir, calicoEtcdPKIDir)
		c.Command[i] = strings.ReplaceAll(a, "--initial-cluster-token=kubernetes-etcd", "--initial-cluster-token=calico-etcd")
	}
	for i := range p.Spec.Volumes {
		if hp := p.Spec.Volumes[i].HostPath; hp != nil && hp.Path == builder.EtcdPKIDir {
			hp.Path = calicoEtcdPKIDir
		}
	}
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == builder.EtcdPKIDir {
			c.VolumeMounts[i].MountPath = calicoEtcdPKIDir
		}
	}
	b, err := yaml.Marshal(p)
	if err != nil {
		return component{}, fmt.Errorf("calico-etcd static pod: %w", err)
	}
	out := component{name: "calico-etcd", image: params.Images.Etcd, nodeSelector: map[string]string{"calico-etcd": "enabled"}}
	out.files = append(out.files,
		file{key: "calico-etcd.yaml.tmpl", path: builder.ManifestDir + "/calico-etcd.yaml", mode: "0600", data: string(b)},
		r.pemFile("etcd-ca.pem", calicoEtcdPKIDir, "etcd-ca.pem", v1.SchemaCertificateAuthority, "calico-etcd"),
		r.pemFile("peer-ca.pem", calicoEtcdPKIDir, "peer-ca.pem", v1.SchemaCertificateAuthority, "calico-etcd-peer"))
	for _, m := range members {
		for _, suffix := range []string{"", "-peer"} {
			name := "calico-etcd-" + m.name + suffix
			out.files = append(out.files,
				file{key: name + ".pem", data: r.mat(v1.SchemaCertificate, name), secret: true},
				file{key: name + "-key.pem", data: r.mat(v1.SchemaCertificateKey, name), secret: true})
		}
	}
	out.files = append(out.files,
		file{key: "calico-etcd-${NODE_NAME}.pem", path: calicoEtcdPKIDir + "/server.pem", mode: "0644"},
		file{key: "calico-etcd-${NODE_NAME}-key.pem", path: calicoEtcdPKIDir + "/server-key.pem", mode: "0600"},
		file{key: "calico-etcd-${NODE_NAME}-peer.pem", path: calicoEtcdPKIDir + "/peer.pem", mode: "0644"},
		file{key: "calico-etcd-${NODE_NAME}-peer-key.pem", path: calicoEtcdPKIDir + "/peer-key.pem", mode: "0600"})
	return out, nil
}

func hasLabel(labels []string, want string) bool {
	for _, l := range labels {
		if l == want {
			return true
		}
	}
	return false
}
