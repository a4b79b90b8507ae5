package builder

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

// File is a file laid down by a script, from the embedded tarball.
type File struct {
	Path    string
	Mode    int64
	Content []byte
	Symlink string
}

// Remote is a file the script fetches: one member of a tarball at a URL.
type Remote struct {
	Path, URL, Member string
	Mode              int64
}

// Payload is everything a node script lays down.
type Payload struct {
	Files   []File
	Remotes []Remote
}

func (p *Payload) add(path string, mode int64, content string) {
	p.Files = append(p.Files, File{Path: path, Mode: mode, Content: []byte(content)})
}

func (p *Payload) addYAML(path string, mode int64, v any) error {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	p.Files = append(p.Files, File{Path: path, Mode: mode, Content: b})
	return nil
}

func (p *Payload) addPod(pod *corev1.Pod) error {
	return p.addYAML(ManifestDir+"/"+pod.Name+".yaml", 0o600, pod)
}

func (p *Payload) addPair(dir, base string, pr pair) {
	p.add(dir+"/"+base+".pem", 0o644, pr.cert)
	p.add(dir+"/"+base+"-key.pem", 0o600, pr.key)
}

func (p *Payload) addHostFiles(files []v1.File) {
	for _, f := range files {
		switch {
		case f.Symlink != "":
			p.Files = append(p.Files, File{Path: f.Path, Mode: int64(f.Mode), Symlink: f.Symlink})
		case f.TarURL != "":
			p.Remotes = append(p.Remotes, Remote{Path: f.Path, URL: f.TarURL, Member: f.TarPath, Mode: int64(f.Mode)})
		default:
			p.add(f.Path, int64(f.Mode), f.Content)
		}
	}
}

// sorted orders files by path and drops earlier duplicates (later wins:
// Genesis files override HostSystem files).
func (p *Payload) sorted() {
	idx := map[string]int{}
	var out []File
	for _, f := range p.Files {
		if i, ok := idx[f.Path]; ok {
			out[i] = f
			continue
		}
		idx[f.Path] = len(out)
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	p.Files = out
}

func kubeconfig(server, ca, cert, key, user string) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Config",
		"clusters": []any{map[string]any{"name": "kubernetes", "cluster": map[string]any{
			"server": server, "certificate-authority": ca,
		}}},
		"users": []any{map[string]any{"name": user, "user": map[string]any{
			"client-certificate": cert, "client-key": key,
		}}},
		"contexts": []any{map[string]any{"name": user + "@kubernetes", "context": map[string]any{
			"cluster": "kubernetes", "user": user,
		}}},
		"current-context": user + "@kubernetes",
	}
}

func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				deepMerge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// runtimeEndpoint is the CRI socket of the configured runtime.
func (b *Builder) runtimeEndpoint() (unit, endpoint string) {
	if b.docker != nil {
		return "docker", "unix:///run/cri-dockerd.sock"
	}
	return "containerd", "unix:///run/containerd/containerd.sock"
}

func (b *Builder) noProxy(extra ...string) string {
	items := []string{"localhost", "127.0.0.1", b.network.Kubernetes.ServiceCIDR, b.network.Kubernetes.PodCIDR,
		"." + b.network.DNS.ClusterDomain, b.genesis.IP}
	for _, n := range b.nodes {
		items = append(items, n.IP)
	}
	items = append(items, extra...)
	if b.network.Proxy != nil {
		items = append(items, b.network.Proxy.AdditionalNoProxy...)
	}
	seen := map[string]bool{}
	var out []string
	for _, i := range items {
		if i != "" && !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return strings.Join(out, ",")
}

// commonPayload: what every node gets — host files, apt configuration,
// container runtime and kubelet configuration.
func (b *Builder) commonPayload(n docset.Node, genesis bool, apiServer string) (*Payload, error) {
	p := &Payload{}
	p.addHostFiles(b.host.Files)
	b.addAptAndNames(p, genesis)
	unit, endpoint := b.runtimeEndpoint()
	if err := b.addRuntime(p, unit); err != nil {
		return nil, err
	}
	if err := b.addKubelet(p, n, genesis, apiServer, unit, endpoint); err != nil {
		return nil, err
	}
	return p, nil
}

// addAptAndNames adds the apt configuration (proxy, repositories, keys),
// the hosts entries and the NTP servers.
func (b *Builder) addAptAndNames(p *Payload, genesis bool) {
	pk := b.packages(genesis)
	if b.network.Proxy != nil {
		u := b.network.Proxy.URL
		p.add("/etc/apt/apt.conf.d/49promenade-proxy", 0o644,
			fmt.Sprintf("Acquire::http::Proxy \"%s\";\nAcquire::https::Proxy \"%s\";\n", u, u))
	}
	if len(pk.Repositories) > 0 {
		p.add("/etc/apt/sources.list.d/promenade.list", 0o644, "# Managed by promenade.\n"+strings.Join(pk.Repositories, "\n")+"\n")
	}
	for i, k := range pk.Keys {
		p.add(fmt.Sprintf("/etc/apt/trusted.gpg.d/promenade-%d.asc", i), 0o644, strings.TrimSpace(k)+"\n")
	}

	// name resolution and time
	var hosts strings.Builder
	for _, h := range b.network.HostsEntries {
		fmt.Fprintf(&hosts, "%s %s\n", h.IP, strings.Join(h.Names, " "))
	}
	p.add("/etc/promenade/hosts", 0o644, hosts.String())
	if b.network.NTP != nil && len(b.network.NTP.Servers) > 0 {
		var s strings.Builder
		s.WriteString("# Managed by promenade.\n")
		for _, srv := range b.network.NTP.Servers {
			fmt.Fprintf(&s, "server %s iburst\n", srv)
		}
		p.add("/etc/chrony/sources.d/promenade.sources", 0o644, s.String())
	}
}

// addRuntime adds the container runtime's configuration (Docker's, the
// given containerd one, or a default containerd one) and its proxy, to the
// systemd unit named unit.
func (b *Builder) addRuntime(p *Payload, unit string) error {
	switch {
	case b.docker != nil:
		j, err := json.MarshalIndent(b.docker.Config, "", "  ")
		if err != nil {
			return err
		}
		p.add("/etc/docker/daemon.json", 0o644, string(j)+"\n")
	case b.containerd != nil:
		p.add("/etc/containerd/config.toml", 0o644, b.containerd.Config)
	default:
		p.add("/etc/containerd/config.toml", 0o644, fmt.Sprintf(
			"version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = %q\n"+
				"[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  SystemdCgroup = true\n",
			b.kubelet.Images.Pause))
	}
	if b.network.Proxy != nil {
		u := b.network.Proxy.URL
		p.add("/etc/systemd/system/"+unit+".service.d/http-proxy.conf", 0o644, fmt.Sprintf(
			"[Service]\nEnvironment=\"HTTP_PROXY=%s\"\nEnvironment=\"HTTPS_PROXY=%s\"\nEnvironment=\"NO_PROXY=%s\"\n", u, u, b.noProxy()))
	}
	return nil
}

// addKubelet adds the kubelet's certificates, kubeconfig (to apiServer),
// configuration and systemd unit, started after the runtime's unit.
func (b *Builder) addKubelet(p *Payload, n docset.Node, genesis bool, apiServer, unit, endpoint string) error {
	kp, err := b.kubeletPair(n, genesis)
	if err != nil {
		return err
	}
	clusterCA, err := b.material(v1.SchemaCertificateAuthority, "kubernetes")
	if err != nil {
		return err
	}
	kubeletCA, err := b.material(v1.SchemaCertificateAuthority, "kubelet", "kubernetes")
	if err != nil {
		return err
	}
	const kdir = "/etc/kubernetes/kubelet"
	p.addPair(kdir+"/pki", "kubelet", kp)
	p.add(kdir+"/pki/cluster-ca.pem", 0o644, clusterCA)
	p.add(kdir+"/pki/kubelet-client-ca.pem", 0o644, kubeletCA)
	if err := p.addYAML(kdir+"/kubeconfig.yaml", 0o600, kubeconfig(apiServer, kdir+"/pki/cluster-ca.pem",
		kdir+"/pki/kubelet.pem", kdir+"/pki/kubelet-key.pem", "kubelet")); err != nil {
		return err
	}
	cfg := map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			"x509":      map[string]any{"clientCAFile": kdir + "/pki/kubelet-client-ca.pem"},
		},
		"authorization":            map[string]any{"mode": "Webhook"},
		"cgroupDriver":             "systemd",
		"clusterDNS":               []any{b.network.DNS.ServiceIP},
		"clusterDomain":            b.network.DNS.ClusterDomain,
		"containerRuntimeEndpoint": endpoint,
		"staticPodPath":            ManifestDir,
		"tlsCertFile":              kdir + "/pki/kubelet.pem",
		"tlsPrivateKeyFile":        kdir + "/pki/kubelet-key.pem",
	}
	deepMerge(cfg, b.kubelet.ConfigFileOverrides)
	if err := p.addYAML(kdir+"/config.yaml", 0o644, cfg); err != nil {
		return err
	}
	args := []string{
		"--config=" + kdir + "/config.yaml",
		"--kubeconfig=" + kdir + "/kubeconfig.yaml",
		"--hostname-override=" + n.Hostname,
		"--node-ip=" + n.IP,
	}
	args = append(args, b.kubelet.Arguments...)
	p.add("/etc/systemd/system/kubelet.service", 0o644, fmt.Sprintf(`[Unit]
Description=Kubernetes kubelet (managed by promenade)
After=%[1]s.service
Wants=%[1]s.service

[Service]
ExecStart=/opt/kubernetes/bin/kubelet \
  %[2]s
Restart=always
RestartSec=5
StartLimitInterval=0

[Install]
WantedBy=multi-user.target
`, unit, strings.Join(args, " \\\n  ")))
	return nil
}

func (b *Builder) packages(genesis bool) v1.ReposAndPackages {
	var out v1.ReposAndPackages
	merge := func(r *v1.ReposAndPackages) {
		if r == nil {
			return
		}
		out.Repositories = append(out.Repositories, r.Repositories...)
		out.Keys = append(out.Keys, r.Keys...)
		out.Additional = append(out.Additional, r.Additional...)
		if r.Required != nil {
			out.Required = r.Required
		}
	}
	merge(b.host.Packages.Common)
	if genesis {
		merge(b.host.Packages.Genesis)
	} else {
		merge(b.host.Packages.Join)
	}
	return out
}

func (b *Builder) packageList(genesis bool) []string {
	pk := b.packages(genesis)
	var out []string
	if pk.Required != nil {
		for _, s := range []string{pk.Required.Docker, pk.Required.Runtime, pk.Required.Socat} {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	return append(out, pk.Additional...)
}

// adminPayload: the admin kubeconfig and credentials used to label nodes.
func (b *Builder) adminPayload(p *Payload, server string) error {
	admin, err := b.certPair("admin")
	if err != nil {
		return err
	}
	ca, err := b.material(v1.SchemaCertificateAuthority, "kubernetes")
	if err != nil {
		return err
	}
	const dir = "/etc/kubernetes/admin"
	p.addPair(dir+"/pki", "admin", admin)
	p.add(dir+"/pki/cluster-ca.pem", 0o644, ca)
	return p.addYAML(dir+"/kubeconfig.yaml", 0o600, kubeconfig(server, dir+"/pki/cluster-ca.pem", dir+"/pki/admin.pem", dir+"/pki/admin-key.pem", "admin"))
}

func (b *Builder) podParams(n docset.Node) PodParams {
	p := PodParams{
		NodeName: n.Hostname, NodeIP: n.IP,
		Images: b.genesis.Images.Kubernetes, Network: b.network,
		APIServer: b.genesis.APIServer, Encryption: b.encryption != nil && len(b.encryption.Etcd) > 0,
	}
	return p
}

// GenesisPayload is everything genesis.sh lays down.
func (b *Builder) GenesisPayload() (*Payload, error) {
	n := b.genesisNode()
	local := fmt.Sprintf("https://127.0.0.1:%d", b.network.Kubernetes.APIServerPort)
	p, err := b.commonPayload(n, true, local)
	if err != nil {
		return nil, err
	}
	if err := b.adminPayload(p, local); err != nil {
		return nil, err
	}
	if err := b.addGenesisPKI(p, n, local); err != nil {
		return nil, err
	}
	if err := b.addGenesisPods(p, n); err != nil {
		return nil, err
	}
	plan, err := b.armadaPlan()
	if err != nil {
		return nil, err
	}
	if plan != nil {
		p.addArmada(plan)
	}
	validator, err := b.validateClusterScript("validate-bootstrap.sh", []string{n.Hostname})
	if err != nil {
		return nil, err
	}
	p.add(GenesisValidatorPath, 0o700, string(validator))
	p.addHostFiles(b.genesis.Files)
	p.sorted()
	return p, nil
}

// addGenesisPKI adds the control plane's certificates and keys, the
// kubeconfigs of the controller manager and scheduler (to local) and the
// encryption configuration, when there is one.
func (b *Builder) addGenesisPKI(p *Payload, n docset.Node, local string) error {
	// The first error stops the reading; it is returned once, below.
	var err error
	get := func(schema string, names ...string) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = b.material(schema, names...)
		return s
	}
	pairOf := func(names ...string) pair {
		if err != nil {
			return pair{}
		}
		var pr pair
		pr, err = b.certPair(names...)
		return pr
	}
	h := n.Hostname
	clusterCA := get(v1.SchemaCertificateAuthority, "kubernetes")
	clusterCAKey := get(v1.SchemaCertificateAuthorityKey, "kubernetes")
	etcdCA := get(v1.SchemaCertificateAuthority, "kubernetes-etcd")
	peerCA := get(v1.SchemaCertificateAuthority, "kubernetes-etcd-peer")
	saPub := get(v1.SchemaPublicKey, "service-account")
	saKey := get(v1.SchemaPrivateKey, "service-account")
	apiserver := pairOf("apiserver")
	apiserverEtcd := pairOf("apiserver-etcd")
	kubeletClient := pairOf("apiserver-kubelet-client")
	cm := pairOf("controller-manager")
	sched := pairOf("scheduler")
	etcdServer := pairOf("kubernetes-etcd-"+h, "kubernetes-etcd-genesis")
	etcdPeer := pairOf("kubernetes-etcd-"+h+"-peer", "kubernetes-etcd-genesis-peer")
	if err != nil {
		return err
	}
	p.add(PKIDir+"/cluster-ca.pem", 0o644, clusterCA)
	p.add(PKIDir+"/cluster-ca-key.pem", 0o600, clusterCAKey)
	p.add(PKIDir+"/etcd-ca.pem", 0o644, etcdCA)
	p.add(PKIDir+"/service-account.pub", 0o644, saPub)
	p.add(PKIDir+"/service-account-key.pem", 0o600, saKey)
	p.addPair(PKIDir, "apiserver", apiserver)
	p.addPair(PKIDir, "apiserver-etcd", apiserverEtcd)
	p.addPair(PKIDir, "apiserver-kubelet-client", kubeletClient)
	p.addPair(PKIDir, "controller-manager", cm)
	p.addPair(PKIDir, "scheduler", sched)
	p.add(EtcdPKIDir+"/etcd-ca.pem", 0o644, etcdCA)
	p.add(EtcdPKIDir+"/peer-ca.pem", 0o644, peerCA)
	p.addPair(EtcdPKIDir, "server", etcdServer)
	p.addPair(EtcdPKIDir, "peer", etcdPeer)
	for _, comp := range []struct{ name, pair string }{{"controller-manager", "controller-manager"}, {"scheduler", "scheduler"}} {
		if err := p.addYAML("/etc/kubernetes/"+comp.name+"/kubeconfig.yaml", 0o600, kubeconfig(local, PKIDir+"/cluster-ca.pem",
			PKIDir+"/"+comp.pair+".pem", PKIDir+"/"+comp.pair+"-key.pem", comp.name)); err != nil {
			return err
		}
	}
	if b.encryption != nil && len(b.encryption.Etcd) > 0 {
		var res []any
		for _, e := range b.encryption.Etcd {
			res = append(res, map[string]any{"resources": e.Resources, "providers": e.Providers})
		}
		if err := p.addYAML(EncryptionCfg, 0o600, map[string]any{
			"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration", "resources": res,
		}); err != nil {
			return err
		}
	}
	return nil
}

// addGenesisPods adds the control plane's static pods: the API server,
// controller manager, scheduler, and the Kubernetes etcd with an auxiliary
// member on the same node (the initial cluster names both).
func (b *Builder) addGenesisPods(p *Payload, n docset.Node) error {
	h := n.Hostname
	params := b.podParams(n)
	main := params.etcdPorts()
	aux := AuxiliaryEtcdPorts(params)
	params.EtcdInitialCluster = fmt.Sprintf("%s=https://%s:%d,auxiliary-0=https://%s:%d", h, n.IP, main.Peer, n.IP, aux.Peer)
	for _, pod := range []*corev1.Pod{
		APIServerPod(params),
		ControllerManagerPod(params),
		SchedulerPod(params),
		EtcdPod(params, "kubernetes-etcd", h, main),
		EtcdPod(params, "auxiliary-etcd", "auxiliary-0", aux),
	} {
		if err := p.addPod(pod); err != nil {
			return err
		}
	}
	return nil
}

// JoinPayload is everything join-<node>.sh lays down: the common files, an
// HAProxy static pod in front of the API servers and the admin credentials
// used to label the node.
func (b *Builder) JoinPayload(n docset.Node) (*Payload, error) {
	server := fmt.Sprintf("https://127.0.0.1:%d", b.network.Kubernetes.HAProxyPort)
	p, err := b.commonPayload(n, false, server)
	if err != nil {
		return nil, err
	}
	if err := b.adminPayload(p, server); err != nil {
		return nil, err
	}
	p.add("/etc/kubernetes/haproxy/haproxy.cfg", 0o644, HAProxyConfig(b.network, b.masters(&n)))
	if err := p.addPod(HAProxyPod(b.host.Images.HAProxy)); err != nil {
		return nil, err
	}
	p.sorted()
	return p, nil
}
