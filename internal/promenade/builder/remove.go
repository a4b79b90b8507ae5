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
	Name, JoinScript, Hostname string
	Marker, Payload            string
	Runtime, Endpoint          string
	KubectlPaths               []string
	KubectlRemotes             []Remote
	LabelKeys                  []string
	Files                      []string
	EtcdMember                 bool
}

// RemovalScriptName is the file name of a node's removal script.
func RemovalScriptName(hostname string) string { return "remove-" + hostname + ".sh" }

// RemovalScript renders remove-<hostname>.sh: run on the node, it drains
// it, removes the labels Promenade gave it, deletes the Node, then stops
// the kubelet and the container runtime and removes the files its join
// script laid down. It carries the admin credentials, as the join script
// does, since the join script removes its own.
func (b *Builder) RemovalScript(n docset.Node) ([]byte, error) {
	p, err := b.JoinPayload(n)
	if err != nil {
		return nil, err
	}
	creds, err := b.removalCredentials()
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Hostname, err)
	}
	tgz, err := Tarball(creds.Files)
	if err != nil {
		return nil, err
	}
	runtime, endpoint := b.runtimeEndpoint()
	d := removeScriptData{
		Name: RemovalScriptName(n.Hostname), JoinScript: "join-" + n.Hostname + ".sh", Hostname: n.Hostname,
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
		if l == "kubernetes-etcd=enabled" {
			d.EtcdMember = true
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
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "remove.sh.tmpl", d); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", d.Name, err)
	}
	return buf.Bytes(), nil
}

// removalCredentials are the admin kubeconfig and its certificates, with
// paths relative to the kubeconfig (kubectl resolves them against its
// directory), so the script can unpack them into a temporary directory.
func (b *Builder) removalCredentials() (*Payload, error) {
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
	server := fmt.Sprintf("https://127.0.0.1:%d", b.network.Kubernetes.HAProxyPort)
	if err := p.addYAML("kubeconfig.yaml", 0o600, kubeconfig(server, "pki/cluster-ca.pem", "pki/admin.pem", "pki/admin-key.pem", "admin")); err != nil {
		return nil, err
	}
	return p, nil
}
