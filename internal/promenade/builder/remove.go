package builder

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

type removeScriptData struct {
	Name, SetupScript, Hostname string
	Genesis                     bool
	Marker, Payload             string
	Runtime, Endpoint           string
	KubectlPaths                []string
	KubectlRemotes              []Remote
	LabelKeys                   []string
	Files                       []string
	// Etcd is set for a node that runs Kubernetes etcd members.
	Etcd *etcdRemoval
}

// etcdRemoval is what the removal script needs to take the node's members
// out of the Kubernetes etcd cluster.
type etcdRemoval struct {
	// Endpoints are the client URLs asked for the member list (the
	// members of the documents; PROMENADE_ETCD_ENDPOINTS overrides them).
	Endpoints []string
	// PKIDir holds the node's etcd CA and its member certificate
	// (server.pem, issued for client use too), as the genesis script or
	// the etcd anchor laid them down.
	PKIDir string
	// Members of this node, each "name peerURL".
	Members []string
	// DataDirs are the members' data directories, removed with the
	// members.
	DataDirs []string
}

// RemovalScriptName is the file name of a node's removal script.
func RemovalScriptName(hostname string) string { return "remove-" + hostname + ".sh" }

// RemovalScript renders remove-<hostname>.sh for a join node: run on the
// node, it checks that the etcd cluster keeps its quorum without the
// node's member, drains the node, removes the labels Promenade gave it,
// deletes the Node, removes its etcd member, then stops the kubelet and
// the container runtime and removes the files its join script laid down.
// It carries the admin credentials, as the join script does, since the
// join script removes its own.
func (b *Builder) RemovalScript(n docset.Node) ([]byte, error) {
	p, err := b.JoinPayload(n)
	if err != nil {
		return nil, err
	}
	server := fmt.Sprintf("https://127.0.0.1:%d", b.network.Kubernetes.HAProxyPort)
	d, err := b.removeData(n, p, server)
	if err != nil {
		return nil, err
	}
	d.SetupScript = "join-" + n.Hostname + ".sh"
	return renderRemoval(d)
}

// GenesisRemovalScript renders remove-<genesis>.sh: the removal of the
// genesis node once the cluster no longer needs it. It refuses unless
// another node runs an API server and the etcd cluster keeps its quorum
// without the genesis node's two members (its own and the auxiliary one),
// then removes the node as RemovalScript does, both members, and the
// bootstrap files genesis.sh laid down. It talks to the genesis API server
// itself, which answers until its etcd member is removed.
func (b *Builder) GenesisRemovalScript() ([]byte, error) {
	p, err := b.GenesisPayload()
	if err != nil {
		return nil, err
	}
	n := b.genesisNode()
	server := fmt.Sprintf("https://127.0.0.1:%d", b.network.Kubernetes.APIServerPort)
	d, err := b.removeData(n, p, server)
	if err != nil {
		return nil, err
	}
	d.SetupScript, d.Genesis = "genesis.sh", true
	params := b.podParams(n)
	aux := AuxiliaryEtcdPorts(params)
	// The genesis node always runs the bootstrap etcd members.
	if d.Etcd == nil {
		d.Etcd = b.etcdRemoval(n)
	}
	d.Etcd.Members = append(d.Etcd.Members, fmt.Sprintf("auxiliary-0 https://%s:%d", n.IP, aux.Peer))
	d.Etcd.DataDirs = append(d.Etcd.DataDirs, "/var/lib/etcd/auxiliary-etcd")
	return renderRemoval(d)
}

func renderRemoval(d removeScriptData) ([]byte, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "remove.sh.tmpl", d); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", d.Name, err)
	}
	return buf.Bytes(), nil
}

// removeData is what every removal script has: the admin credentials for
// server, the node's labels, its etcd members and the files p laid down.
func (b *Builder) removeData(n docset.Node, p *Payload, server string) (removeScriptData, error) {
	creds, err := b.removalCredentials(server)
	if err != nil {
		return removeScriptData{}, fmt.Errorf("node %s: %w", n.Hostname, err)
	}
	tgz, err := Tarball(creds.Files)
	if err != nil {
		return removeScriptData{}, err
	}
	runtime, endpoint := b.runtimeEndpoint()
	d := removeScriptData{
		Name: RemovalScriptName(n.Hostname), Hostname: n.Hostname,
		Marker: PayloadMarker, Payload: base64Lines(tgz),
		Runtime: runtime, Endpoint: endpoint,
	}
	seen := map[string]bool{}
	for _, l := range labelsOf(n.Labels) {
		k, _, _ := strings.Cut(l, "=")
		if !seen[k] {
			seen[k] = true
			d.LabelKeys = append(d.LabelKeys, k)
		}
		if l == "kubernetes-etcd=enabled" && d.Etcd == nil {
			d.Etcd = b.etcdRemoval(n)
		}
	}
	sort.Strings(d.LabelKeys)
	for _, f := range p.Files {
		// /etc/kubernetes goes as a whole; /etc/promenade/hosts is removed
		// together with its block in /etc/hosts.
		if strings.HasPrefix(f.Path, "/etc/kubernetes/") || f.Path == "/etc/promenade/hosts" {
			continue
		}
		d.Files = append(d.Files, f.Path)
	}
	for _, r := range p.Remotes {
		d.Files = append(d.Files, r.Path)
		if path.Base(r.Path) == "kubectl" {
			d.KubectlPaths = append(d.KubectlPaths, r.Path)
			d.KubectlRemotes = append(d.KubectlRemotes, r)
		}
	}
	sort.Strings(d.Files)
	d.Files = slices.Compact(d.Files)
	return d, nil
}

// etcdRemoval describes node n's Kubernetes etcd member: named after the
// node, as the etcd anchor and genesis.sh name it, at the node's peer URL.
// The member list is asked of the members the documents know of: the
// genesis node and the nodes labelled kubernetes-etcd=enabled.
func (b *Builder) etcdRemoval(n docset.Node) *etcdRemoval {
	ports := b.podParams(n).etcdPorts()
	e := &etcdRemoval{
		PKIDir:   EtcdPKIDir,
		Members:  []string{fmt.Sprintf("%s https://%s:%d", n.Hostname, n.IP, ports.Peer)},
		DataDirs: []string{"/var/lib/etcd/kubernetes-etcd"},
	}
	ips := []string{b.genesis.IP}
	for _, o := range b.nodes {
		if slices.Contains(labelsOf(o.Labels), "kubernetes-etcd=enabled") {
			ips = append(ips, o.IP)
		}
	}
	for _, ip := range ips {
		u := fmt.Sprintf("https://%s:%d", ip, ports.Client)
		if !slices.Contains(e.Endpoints, u) {
			e.Endpoints = append(e.Endpoints, u)
		}
	}
	return e
}

// removalCredentials are the admin kubeconfig (for server) and its
// certificates, with paths relative to the kubeconfig (kubectl resolves
// them against its directory), so the script can unpack them into a
// temporary directory.
func (b *Builder) removalCredentials(server string) (*Payload, error) {
	admin, err := b.certPair("admin")
	if err != nil {
		return nil, err
	}
	ca, err := b.material(v1.SchemaCertificateAuthority, "kubernetes")
	if err != nil {
		return nil, err
	}
	p := &Payload{}
	p.addPair("pki", "admin", admin)
	p.add("pki/cluster-ca.pem", 0o644, ca)
	if err := p.addYAML("kubeconfig.yaml", 0o600, kubeconfig(server, "pki/cluster-ca.pem", "pki/admin.pem", "pki/admin-key.pem", "admin")); err != nil {
		return nil, err
	}
	return p, nil
}
