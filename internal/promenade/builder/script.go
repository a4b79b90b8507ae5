package builder

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
	"text/template"

	"github.com/airshipit/airship-go/internal/promenade/docset"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{"q": shellQuote}).ParseFS(templateFS, "templates/*.tmpl"))

// shellQuote quotes s for bash when it needs quoting.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@+", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

type unitAction struct {
	Name                         string
	Enable, Disable, Start, Stop bool
}

type nodeScriptData struct {
	Kind, Name, Hostname, IP string
	Genesis, LeaveKubectl    bool
	Proxy, NoProxy           string
	Marker, Payload          string
	Kubeconfig               string
	Packages                 []string
	Remotes                  []Remote
	Units                    []unitAction
	Runtime                  string
	RuntimeFiles             []string
	KubeletFiles             []string
	Labels                   []string
	KubectlPaths             []string
	// Genesis only: the bootstrap Armada (nil without a target manifest)
	// and the final validation script.
	Armada               *armadaPlan
	ArmadaDir, Validator string
}

func (b *Builder) nodeScript(n docset.Node, genesis bool, p *Payload) ([]byte, error) {
	tgz, err := Tarball(p.Files)
	if err != nil {
		return nil, err
	}
	runtime, _ := b.runtimeEndpoint()
	d := nodeScriptData{
		Kind: "join", Name: "join-" + n.Hostname + ".sh", Hostname: n.Hostname, IP: n.IP,
		Genesis: genesis, LeaveKubectl: b.opts.LeaveKubectl,
		Marker: PayloadMarker, Payload: base64Lines(tgz),
		Kubeconfig: "/etc/kubernetes/admin/kubeconfig.yaml",
		Packages:   b.packageList(genesis),
		Remotes:    p.Remotes,
		Runtime:    runtime,
		Labels:     labelsOf(n.Labels),
	}
	if genesis {
		d.Kind, d.Name = "genesis", "genesis.sh"
		d.ArmadaDir, d.Validator = ArmadaDir, GenesisValidatorPath
		if d.Armada, err = b.armadaPlan(); err != nil {
			return nil, err
		}
	}
	if b.network.Proxy != nil {
		d.Proxy, d.NoProxy = b.network.Proxy.URL, b.noProxy()
	}
	names := make([]string, 0, len(b.host.SystemdUnits))
	for name := range b.host.SystemdUnits {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		u := b.host.SystemdUnits[name]
		d.Units = append(d.Units, unitAction{name, u.Enable, u.Disable, u.Start, u.Stop})
	}
	for _, f := range p.Files {
		switch {
		case strings.HasPrefix(f.Path, "/etc/containerd/"), strings.HasPrefix(f.Path, "/etc/docker/"),
			strings.HasPrefix(f.Path, "/etc/systemd/system/"+runtime+".service.d/"):
			d.RuntimeFiles = append(d.RuntimeFiles, f.Path)
		case strings.HasPrefix(f.Path, "/etc/kubernetes/kubelet/"), f.Path == "/etc/systemd/system/kubelet.service":
			d.KubeletFiles = append(d.KubeletFiles, f.Path)
		}
	}
	for _, r := range p.Remotes {
		if path.Base(r.Path) == "kubectl" {
			d.KubectlPaths = append(d.KubectlPaths, r.Path)
		}
		if path.Base(r.Path) == "kubelet" {
			d.KubeletFiles = append(d.KubeletFiles, r.Path)
		}
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "node.sh.tmpl", d); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", d.Name, err)
	}
	return buf.Bytes(), nil
}

// GenesisScript renders genesis.sh.
func (b *Builder) GenesisScript() ([]byte, error) {
	p, err := b.GenesisPayload()
	if err != nil {
		return nil, err
	}
	return b.nodeScript(b.genesisNode(), true, p)
}

// JoinScript renders join-<hostname>.sh.
func (b *Builder) JoinScript(n docset.Node) ([]byte, error) {
	p, err := b.JoinPayload(n)
	if err != nil {
		return nil, err
	}
	return b.nodeScript(n, false, p)
}

type validateData struct {
	Name, Hostname, Kubeconfig, Runtime, Sums string
	Cluster                                   bool
	Labels, Nodes, Pods                       []string
}

// ValidateNodeScript renders validate-genesis.sh or validate-<node>.sh:
// embedded files unchanged, runtime and kubelet up, node Ready and labelled.
func (b *Builder) ValidateNodeScript(n docset.Node, genesis bool) ([]byte, error) {
	var p *Payload
	var err error
	name := "validate-" + n.Hostname + ".sh"
	kc := "/etc/kubernetes/kubelet/kubeconfig.yaml"
	if genesis {
		p, err = b.GenesisPayload()
		name, kc = "validate-genesis.sh", "/etc/kubernetes/admin/kubeconfig.yaml"
	} else {
		p, err = b.JoinPayload(n)
	}
	if err != nil {
		return nil, err
	}
	var files []File
	for _, f := range p.Files {
		// The join script removes the admin credentials afterwards.
		if !genesis && strings.HasPrefix(f.Path, "/etc/kubernetes/admin/") {
			continue
		}
		files = append(files, f)
	}
	runtime, _ := b.runtimeEndpoint()
	d := validateData{Name: name, Hostname: n.Hostname, Kubeconfig: kc, Runtime: runtime,
		Sums: sha256Lines(files), Labels: labelsOf(n.Labels)}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "validate.sh.tmpl", d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ValidateClusterScript renders validate-cluster.sh, run on the genesis
// node: API server ready, every node Ready, control-plane pods Running.
func (b *Builder) ValidateClusterScript() ([]byte, error) {
	nodes := []string{b.genesis.Hostname}
	for _, n := range b.nodes {
		nodes = append(nodes, n.Hostname)
	}
	return b.validateClusterScript("validate-cluster.sh", nodes)
}

// validateClusterScript checks the API server, the nodes Ready and the
// genesis control-plane pods Running; genesis.sh runs it for the genesis
// node alone as its final validation.
func (b *Builder) validateClusterScript(name string, nodes []string) ([]byte, error) {
	d := validateData{Name: name, Cluster: true, Kubeconfig: "/etc/kubernetes/admin/kubeconfig.yaml", Nodes: nodes}
	for _, pod := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubernetes-etcd"} {
		d.Pods = append(d.Pods, pod+"-"+b.genesis.Hostname)
	}
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "validate.sh.tmpl", d); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
