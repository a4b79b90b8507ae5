package charts

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/promenade/anchor"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

// Dir is where the charts live, relative to the repository root.
const Dir = "charts/promenade"

// Namespace every chart installs into (the anchors' namespace).
const Namespace = anchor.Namespace

// DefaultCoreDNSImage runs CoreDNS when HostSystem names no images.coredns.
const DefaultCoreDNSImage = "coredns/coredns:1.11.1"

// DefaultKubeProxyImage runs kube-proxy when Genesis's API server image is
// not "<repository>/kube-apiserver:<tag>" (kube-proxy then follows it).
const DefaultKubeProxyImage = "registry.k8s.io/kube-proxy:v1.33.4"

// CalicoEtcdClientPort is where the Calico etcd members serve clients: the
// port internal/promenade/anchor gives the calico-etcd static pod (a test
// checks they agree).
const CalicoEtcdClientPort = 6666

// Group is one step of the deployment: its charts are deployed together
// (or one after another when Sequenced), after every earlier group.
type Group struct {
	Name        string
	Description string
	Sequenced   bool
	Charts      []string
}

// Groups are the seed's order (its list of what breaks what): Kubernetes
// etcd before the API server, the other control-plane components and API
// discovery after it, then the Kubernetes proxy, Calico etcd, Calico node,
// the Promenade API, and DNS last.
var Groups = []Group{
	{Name: "kubernetes-etcd", Description: "Kubernetes etcd: everything else stores in it", Charts: []string{"etcd"}},
	{Name: "kubernetes-control-plane", Description: "API server, then controller manager and scheduler", Sequenced: true,
		Charts: []string{"apiserver", "controller-manager", "scheduler"}},
	{Name: "api-discovery", Description: "HAProxy on every node, in front of the API servers", Charts: []string{"haproxy"}},
	{Name: "kubernetes-proxy", Description: "kube-proxy on every node, through HAProxy", Charts: []string{"kube-proxy"}},
	{Name: "calico-etcd", Description: "Calico's etcd, before networking", Charts: []string{"calico-etcd"}},
	{Name: "container-networking", Description: "Calico on every node, on Calico's etcd", Charts: []string{"calico"}},
	{Name: "promenade", Description: "the Promenade API", Charts: []string{"promenade"}},
	{Name: "kubernetes-dns", Description: "CoreDNS, last", Charts: []string{"coredns"}},
}

// Names are every chart, in deployment order.
func Names() []string {
	var out []string
	for _, g := range Groups {
		out = append(out, g.Charts...)
	}
	return out
}

// IsAnchor reports whether the chart is an anchor chart (its values are an
// anchor's objects).
func IsAnchor(chart string) bool {
	for _, c := range anchor.Components {
		if c == chart {
			return true
		}
	}
	return false
}

// Values renders every chart's values from the site's documents, which must
// include the generated certificates (promenade generate-certs).
func Values(set *docset.Set) (map[string]map[string]any, error) {
	objs, err := anchor.Objects(set)
	if err != nil {
		return nil, fmt.Errorf("anchor charts: %w", err)
	}
	out := map[string]map[string]any{}
	for _, o := range objs {
		name := strings.TrimSuffix(o.GetName(), "-anchor")
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, fmt.Errorf("anchor %s: %w", o.GetName(), err)
		}
		// Through JSON, so the values are what a YAML values file holds.
		if m, err = plain(m); err != nil {
			return nil, fmt.Errorf("anchor %s: %w", o.GetName(), err)
		}
		if out[name] == nil {
			out[name] = map[string]any{"remove": false}
		}
		key := map[string]string{"ConfigMap": "configMap", "Secret": "secret", "DaemonSet": "daemonSet"}[m["kind"].(string)]
		out[name][key] = m
	}

	var net v1.KubernetesNetwork
	var host v1.HostSystem
	if err := set.One(v1.SchemaKubernetesNetwork, &net); err != nil {
		return nil, fmt.Errorf("coredns: %w", err)
	}
	if err := set.One(v1.SchemaHostSystem, &host); err != nil {
		return nil, fmt.Errorf("coredns: %w", err)
	}
	image := host.Images.CoreDNS
	if image == "" {
		image = DefaultCoreDNSImage
	}
	upstream := []any{}
	for _, s := range net.DNS.UpstreamServers {
		upstream = append(upstream, s)
	}
	out["coredns"] = map[string]any{
		"image": image, "clusterDomain": net.DNS.ClusterDomain, "serviceIP": net.DNS.ServiceIP, "upstreamServers": upstream,
	}

	if out["kube-proxy"], out["calico"], err = networkValues(set, net); err != nil {
		return nil, err
	}

	site, err := siteYAML(set)
	if err != nil {
		return nil, fmt.Errorf("promenade: %w", err)
	}
	out["promenade"] = map[string]any{"designs": map[string]any{"site.yaml": site}}

	for _, n := range Names() {
		if out[n] == nil {
			return nil, fmt.Errorf("no values for chart %s", n)
		}
	}
	return out, nil
}

// networkValues are kube-proxy's and Calico's values: the API through the
// node's HAProxy, the pod CIDR, kube-proxy's client certificate and
// Calico's etcd members and client certificate.
func networkValues(set *docset.Set, net v1.KubernetesNetwork) (kubeProxy, calico map[string]any, err error) {
	var g v1.Genesis
	if err := set.One(v1.SchemaGenesis, &g); err != nil {
		return nil, nil, fmt.Errorf("kube-proxy: %w", err)
	}
	nodes, err := set.Nodes()
	if err != nil {
		return nil, nil, fmt.Errorf("calico: %w", err)
	}
	if net.Kubernetes.HAProxyPort == 0 {
		return nil, nil, fmt.Errorf("kube-proxy and calico reach the API through HAProxy: KubernetesNetwork has no kubernetes.haproxy_port")
	}
	m := &material{set: set}
	kubeProxy = map[string]any{
		"image":       KubeProxyImage(g.Images.Kubernetes.APIServer),
		"server":      fmt.Sprintf("https://127.0.0.1:%d", net.Kubernetes.HAProxyPort),
		"clusterCIDR": net.Kubernetes.PodCIDR,
		"tls": map[string]any{
			"ca":   m.pem(v1.SchemaCertificateAuthority, "kubernetes"),
			"cert": m.pem(v1.SchemaCertificate, "proxy"),
			"key":  m.pem(v1.SchemaCertificateKey, "proxy"),
		},
	}
	endpoints := []any{}
	for _, ip := range calicoEtcdMembers(g, nodes) {
		endpoints = append(endpoints, fmt.Sprintf("https://%s:%d", ip, CalicoEtcdClientPort))
	}
	if len(endpoints) == 0 {
		return nil, nil, fmt.Errorf("calico: no node is labelled calico-etcd=enabled, so there is no Calico etcd to store in")
	}
	calico = map[string]any{
		"apiServer": map[string]any{"host": "127.0.0.1", "port": net.Kubernetes.HAProxyPort},
		"etcd": map[string]any{
			"endpoints": endpoints,
			"ca":        m.pem(v1.SchemaCertificateAuthority, "calico-etcd"),
			"cert":      m.pem(v1.SchemaCertificate, "calico-node"),
			"key":       m.pem(v1.SchemaCertificateKey, "calico-node"),
		},
		"ipv4Pool": map[string]any{"cidr": net.Kubernetes.PodCIDR},
	}
	if len(m.missing) > 0 {
		return nil, nil, fmt.Errorf("kube-proxy and calico need material missing from the configuration (add it to the PKICatalog and run promenade generate-certs): %s",
			strings.Join(m.missing, ", "))
	}
	return kubeProxy, calico, nil
}

// KubeProxyImage is kube-proxy at the control plane's version: the API
// server image's repository and tag with kube-proxy for kube-apiserver, or
// DefaultKubeProxyImage when the image is not named so (or is pinned by
// digest, which is the API server's own).
func KubeProxyImage(apiserver string) string {
	slash := strings.LastIndex(apiserver, "/")
	colon := strings.LastIndex(apiserver, ":")
	if strings.Contains(apiserver, "@") || colon < 0 || colon < slash {
		return DefaultKubeProxyImage
	}
	repo, tag := apiserver[:colon], apiserver[colon+1:]
	if tag == "" || repo[slash+1:] != "kube-apiserver" {
		return DefaultKubeProxyImage
	}
	return repo[:slash+1] + "kube-proxy:" + tag
}

// calicoEtcdMembers are the addresses of the Calico etcd members: Genesis
// and the KubernetesNodes labelled calico-etcd=enabled, as the calico-etcd
// anchor picks them.
func calicoEtcdMembers(g v1.Genesis, nodes []docset.Node) []string {
	var out []string
	if slices.Contains(g.Labels.Static, calicoEtcdLabel) || slices.Contains(g.Labels.Dynamic, calicoEtcdLabel) {
		out = append(out, g.IP)
	}
	for _, n := range nodes {
		if slices.Contains(n.Labels.Static, calicoEtcdLabel) || slices.Contains(n.Labels.Dynamic, calicoEtcdLabel) {
			out = append(out, n.IP)
		}
	}
	return out
}

const calicoEtcdLabel = "calico-etcd=enabled"

// material reads PEM documents and notes the missing ones, so that one
// error names them all.
type material struct {
	set     *docset.Set
	missing []string
}

func (m *material) pem(schema, name string) string {
	s := m.set.PEM(schema, name)
	if s == "" {
		m.missing = append(m.missing, schema+" "+name)
	}
	return s
}

// siteYAML is the site's documents as one stream, in a stable order, for
// the Promenade API's design root.
func siteYAML(set *docset.Set) (string, error) {
	docs := append([]docset.Document(nil), set.Documents...)
	sort.SliceStable(docs, func(i, j int) bool {
		if docs[i].Schema != docs[j].Schema {
			return docs[i].Schema < docs[j].Schema
		}
		return docs[i].Metadata.Name < docs[j].Metadata.Name
	})
	var b strings.Builder
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			return "", fmt.Errorf("document %s %s: %w", d.Schema, d.Metadata.Name, err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.String(), nil
}

func plain(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}
