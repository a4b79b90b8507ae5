package dashboard

import (
	"strings"
	"time"
	"unique"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/redact"
)

// What the dashboard keeps of each watched object: the fields its pages
// show, nothing else, so 10,000 hosts cost a few megabytes.

type hostObj struct {
	Host
	// labels are the host's labels, interned: a site's hosts share a few
	// keys and values (racks, roles), kept once however many hosts.
	labels []labelPair
}

type labelPair struct{ k, v unique.Handle[string] }

// label is the value of a label, "" when the host has none.
func (h *hostObj) label(key string) string {
	for _, p := range h.labels {
		if p.k.Value() == key {
			return p.v.Value()
		}
	}
	return ""
}

func internLabels(l map[string]string) []labelPair {
	if len(l) == 0 {
		return nil
	}
	out := make([]labelPair, 0, len(l))
	for k, v := range l {
		out = append(out, labelPair{unique.Make(k), unique.Make(v)})
	}
	return out
}

func compactHost(u *unstructured.Unstructured) any {
	h := hostObj{Host: Host{
		Namespace:         u.GetNamespace(),
		Name:              u.GetName(),
		State:             nested(u, "status", "provisioning", "state"),
		OperationalStatus: nested(u, "status", "operationalStatus"),
		Online:            nestedBool(u, "spec", "online"),
		ErrorType:         nested(u, "status", "errorType"),
		ErrorMessage:      redact.Text(nested(u, "status", "errorMessage")),
		BMC:               redact.URL(nested(u, "spec", "bmc", "address")),
	}}
	if p, found, _ := unstructured.NestedBool(u.Object, "status", "poweredOn"); found {
		h.Power = "off"
		if p {
			h.Power = "on"
		}
	}
	if kind := nested(u, "spec", "consumerRef", "kind"); kind != "" {
		ns := nested(u, "spec", "consumerRef", "namespace")
		if ns == "" {
			ns = u.GetNamespace()
		}
		h.Consumer = kind + "/" + ns + "/" + nested(u, "spec", "consumerRef", "name")
	}
	l := u.GetLabels()
	if name := l[sipv1.ClusterNameLabel]; name != "" {
		h.SIPCluster = l[sipv1.ClusterNamespaceLabel] + "/" + name
	}
	h.Role = l[sipv1.NodeTypeLabel]
	h.Standby = l[sipv1.StandbyLabel] == "true"
	h.labels = internLabels(l)
	return &h
}

type machineObj struct {
	// infra is "Kind/namespace/name" of the infrastructure machine.
	infra string
	node  string
	phase string
}

func compactMachine(u *unstructured.Unstructured) any {
	m := &machineObj{node: nested(u, "status", "nodeRef", "name"), phase: nested(u, "status", "phase")}
	if kind := nested(u, "spec", "infrastructureRef", "kind"); kind != "" {
		ns := nested(u, "spec", "infrastructureRef", "namespace")
		if ns == "" {
			ns = u.GetNamespace()
		}
		m.infra = kind + "/" + ns + "/" + nested(u, "spec", "infrastructureRef", "name")
	}
	return m
}

type nodeObj struct {
	Node
}

func compactNode(u *unstructured.Unstructured) any {
	n := &nodeObj{Node: Node{Name: u.GetName(), Kubelet: nested(u, "status", "nodeInfo", "kubeletVersion"), Provider: nested(u, "spec", "providerID")}}
	var roles []string
	for k := range u.GetLabels() {
		if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
			roles = append(roles, r)
		}
	}
	n.Roles = strings.Join(sortedCopy(roles), ",")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			n.Ready = m["status"] == "True"
		}
	}
	return n
}

type manifestObj struct {
	groups    []string
	satisfied bool
	summary   string
}

func compactManifest(u *unstructured.Unstructured) any {
	g, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "chart_groups")
	return &manifestObj{groups: g, satisfied: nestedBool(u, "status", "satisfied"), summary: nested(u, "status", "summary")}
}

type groupObj struct {
	charts    []string
	satisfied bool
}

func compactGroup(u *unstructured.Unstructured) any {
	c, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "chart_group")
	return &groupObj{charts: c, satisfied: nestedBool(u, "status", "satisfied")}
}

func compactChart(u *unstructured.Unstructured) any {
	c := &Chart{
		Name:       u.GetName(),
		Release:    nested(u, "status", "releaseName"),
		Namespace:  nested(u, "spec", "namespace"),
		State:      nested(u, "status", "state"),
		Target:     nested(u, "status", "targetState"),
		Satisfied:  nestedBool(u, "status", "satisfied"),
		HelmStatus: nested(u, "status", "helmStatus"),
	}
	if c.Release == "" {
		c.Release = nested(u, "spec", "release")
	}
	if rev, found, _ := unstructured.NestedInt64(u.Object, "status", "helmRevision"); found {
		c.Revision = int32(rev)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, x := range conds {
		m, _ := x.(map[string]any)
		if m["type"] == "Ready" && m["status"] == "False" {
			msg, _ := m["message"].(string)
			c.LastError = redact.Text(msg)
		}
	}
	return c
}

type sipClusterObj struct {
	topologyKeys []string
}

func compactSIPCluster(u *unstructured.Unstructured) any {
	nodes, _, _ := unstructured.NestedMap(u.Object, "spec", "nodes")
	s := &sipClusterObj{}
	for _, n := range nodes {
		m, _ := n.(map[string]any)
		if k, _ := m["topologyKey"].(string); k != "" {
			s.topologyKeys = append(s.topologyKeys, k)
		}
	}
	return s
}

type eventObj struct {
	Activity
}

func compactEvent(u *unstructured.Unstructured) any {
	e := &eventObj{Activity: Activity{
		Type:    nested(u, "type"),
		Reason:  nested(u, "reason"),
		Message: redact.Text(nested(u, "message")),
		Object:  nested(u, "involvedObject", "kind") + "/" + nested(u, "involvedObject", "name"),
	}}
	if ns := nested(u, "involvedObject", "namespace"); ns != "" {
		e.Object = nested(u, "involvedObject", "kind") + "/" + ns + "/" + nested(u, "involvedObject", "name")
	}
	for _, f := range [][]string{{"lastTimestamp"}, {"eventTime"}, {"metadata", "creationTimestamp"}} {
		if t, err := time.Parse(time.RFC3339, nested(u, f...)); err == nil {
			e.Time = t
			break
		}
	}
	return e
}
