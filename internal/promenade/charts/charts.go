package charts

import (
	"encoding/json"
	"fmt"
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

// Group is one step of the deployment: its charts are deployed together
// (or one after another when Sequenced), after every earlier group.
type Group struct {
	Name        string
	Description string
	Sequenced   bool
	Charts      []string
}

// Groups are the seed's order: Kubernetes etcd before the API server, the
// other control-plane components and API discovery after it, Calico etcd
// before networking, the Promenade API, and DNS last.
var Groups = []Group{
	{Name: "kubernetes-etcd", Description: "Kubernetes etcd: everything else stores in it", Charts: []string{"etcd"}},
	{Name: "kubernetes-control-plane", Description: "API server, then controller manager and scheduler", Sequenced: true,
		Charts: []string{"apiserver", "controller-manager", "scheduler"}},
	{Name: "api-discovery", Description: "HAProxy on every node, in front of the API servers", Charts: []string{"haproxy"}},
	{Name: "calico-etcd", Description: "Calico's etcd, before networking", Charts: []string{"calico-etcd"}},
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
