package charts

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/action"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/installchart"
	"github.com/airshipit/airship-go/internal/promenade/anchor"
	"github.com/airshipit/airship-go/internal/promenade/docset"
	"github.com/airshipit/airship-go/internal/promenade/promenadetest"
)

const root = "../../.."

func chartDir(name string) string { return filepath.Join(root, Dir, name) }

// exampleSet is the example site with freshly generated certificates.
func exampleSet(t *testing.T) *docset.Set { return promenadetest.ExampleSet(t) }

func render(t *testing.T, chart string, vals map[string]any) *installchart.Rendered {
	t.Helper()
	r, err := installchart.Render(chartDir(chart), "promenade-"+chart, Namespace, vals)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func byKind(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		out[o.GetKind()+"/"+o.GetName()] = o
	}
	return out
}

// TestChartsRenderAndLint: every chart renders through the Helm SDK with
// the example site's values and passes helm lint --strict, with those
// values and with its defaults.
func TestChartsRenderAndLint(t *testing.T) {
	vals, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, Dir))
	var onDisk []string
	for _, e := range entries {
		onDisk = append(onDisk, e.Name())
	}
	if d := cmp.Diff(sortedCopy(Names()), onDisk); d != "" {
		t.Errorf("charts in %s (+) and in Groups (-) differ:\n%s", Dir, d)
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			r := render(t, name, vals[name])
			if len(r.Objects) == 0 {
				t.Fatal("rendered nothing")
			}
			for _, v := range []map[string]any{vals[name], nil} {
				lint := action.NewLint()
				lint.Strict = true
				lint.Namespace = Namespace
				res := lint.Run([]string{chartDir(name)}, v)
				for _, err := range res.Errors {
					t.Errorf("lint: %v", err)
				}
				for _, m := range res.Messages {
					if m.Severity > 1 { // INFO (no icon) is advice
						t.Errorf("lint: %s", m)
					}
				}
				if res.TotalChartsLinted != 1 {
					t.Errorf("linted %d charts", res.TotalChartsLinted)
				}
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// TestAnchorChartsEqualAnchorObjects: an anchor chart installs exactly
// the objects internal/promenade/anchor renders (build-all's anchors.yaml),
// field for field: one source, no drift.
func TestAnchorChartsEqualAnchorObjects(t *testing.T) {
	set := exampleSet(t)
	vals, err := Values(set)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := anchor.Objects(set)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]any{}
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		if m, err = plain(m); err != nil {
			t.Fatal(err)
		}
		want[o.GetObjectKind().GroupVersionKind().Kind+"/"+o.GetName()] = m
	}
	got := map[string]map[string]any{}
	for _, c := range anchor.Components {
		for k, o := range byKind(render(t, c, vals[c]).Objects) {
			got[k] = o.Object
		}
	}
	if len(got) != 3*len(anchor.Components) {
		t.Errorf("%d objects from the anchor charts, want %d", len(got), 3*len(anchor.Components))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("anchor objects (-) and anchor charts (+) differ:\n%s", d)
	}
}

// TestAnchorTemplatesIdentical: the anchor charts differ only in name and
// description; their templates are one text.
func TestAnchorTemplatesIdentical(t *testing.T) {
	for _, c := range anchor.Components {
		for _, f := range []string{"templates/anchor.yaml", "templates/NOTES.txt", "values.yaml"} {
			b, err := os.ReadFile(filepath.Join(chartDir(c), f))
			if err != nil {
				t.Fatal(err)
			}
			ref, _ := os.ReadFile(filepath.Join(chartDir(anchor.Components[0]), f))
			if !bytes.Equal(b, ref) {
				t.Errorf("%s/%s differs from %s's", c, f, anchor.Components[0])
			}
		}
	}
}

func checksums(t *testing.T, vals map[string]map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range anchor.Components {
		for _, o := range render(t, c, vals[c]).Objects {
			if o.GetKind() == "DaemonSet" {
				ann, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "annotations")
				out[c] = ann[anchor.ChecksumAnnotation]
			}
		}
	}
	return out
}

// TestChangedPKIRollsAnchors: new certificates change every anchor that
// carries them (its pod template's checksum), so the DaemonSets roll; the
// same material renders the same checksum.
func TestChangedPKIRollsAnchors(t *testing.T) {
	set := exampleSet(t)
	a, err := Values(set)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Values(set)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	ca, cAgain, cb := checksums(t, a), checksums(t, again), checksums(t, b)
	if d := cmp.Diff(ca, cAgain); d != "" {
		t.Errorf("same PKI, different checksums:\n%s", d)
	}
	for _, c := range anchor.Components {
		if ca[c] == "" || !strings.HasPrefix(ca[c], "sha256:") {
			t.Errorf("%s: no checksum annotation (%q)", c, ca[c])
		}
		// HAProxy carries no certificates: it rolls only when its config does.
		if c == "haproxy" {
			if ca[c] != cb[c] {
				t.Errorf("haproxy rolled though its files did not change")
			}
			continue
		}
		if ca[c] == cb[c] {
			t.Errorf("%s: new PKI, same checksum %s", c, ca[c])
		}
	}
}

// TestRemoveTellsAnchors: remove=true sets ANCHOR_REMOVE in the anchor
// container (and so rolls it); the default does not.
func TestRemoveTellsAnchors(t *testing.T) {
	vals, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	env := func(v map[string]any) string {
		for _, o := range render(t, "apiserver", v).Objects {
			if o.GetKind() == "DaemonSet" {
				cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				var names []string
				for _, e := range cs[0].(map[string]any)["env"].([]any) {
					names = append(names, e.(map[string]any)["name"].(string))
				}
				return strings.Join(names, ",")
			}
		}
		t.Fatal("no DaemonSet")
		return ""
	}
	if e := env(vals["apiserver"]); strings.Contains(e, "ANCHOR_REMOVE") {
		t.Errorf("default values tell the anchor to remove: %s", e)
	}
	removed := map[string]any{}
	for k, v := range vals["apiserver"] {
		removed[k] = v
	}
	removed["remove"] = true
	if e := env(removed); !strings.HasSuffix(e, ",ANCHOR_REMOVE") {
		t.Errorf("remove=true: env %s lacks ANCHOR_REMOVE", e)
	}
	if e := env(vals["apiserver"]); strings.Contains(e, "ANCHOR_REMOVE") {
		t.Errorf("rendering with remove=true changed the values: %s", e)
	}
}

// TestCoreDNSValues: the DNS Service takes the kubelets' clusterDNS address
// and the Corefile the cluster domain.
func TestCoreDNSValues(t *testing.T) {
	vals, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	objs := byKind(render(t, "coredns", vals["coredns"]).Objects)
	ip, _, _ := unstructured.NestedString(objs["Service/kube-dns"].Object, "spec", "clusterIP")
	if ip == "" || ip != vals["coredns"]["serviceIP"] {
		t.Errorf("kube-dns clusterIP %q, want the site's dns.service_ip %v", ip, vals["coredns"]["serviceIP"])
	}
	corefile, _, _ := unstructured.NestedString(objs["ConfigMap/coredns"].Object, "data", "Corefile")
	if !strings.Contains(corefile, "kubernetes "+vals["coredns"]["clusterDomain"].(string)+" ") {
		t.Errorf("Corefile does not serve the cluster domain:\n%s", corefile)
	}
	site, _, _ := unstructured.NestedString(byKind(render(t, "promenade", vals["promenade"]).Objects)["Secret/promenade-designs"].Object, "stringData", "site.yaml")
	if !strings.Contains(site, "schema: promenade/Genesis/v1") || !strings.Contains(site, "deckhand/CertificateKey/v1") {
		t.Errorf("the Promenade API's design lacks the site's documents or certificates")
	}
}

// TestManifestOrder: the ArmadaManifest deploys the seed's order, each
// chart with its values and a wait that selects what the chart renders.
func TestManifestOrder(t *testing.T) {
	vals, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Manifest(vals, ManifestOptions{ChartsDir: "/charts"})
	if err != nil {
		t.Fatal(err)
	}
	amf := objs[0].(*armadav1.ArmadaManifest)
	pos := map[string]int{}
	groupOf := map[string]string{}
	for _, o := range objs[1:] {
		if g, ok := o.(*armadav1.ArmadaChartGroup); ok {
			for _, c := range g.Spec.ChartGroup {
				groupOf[c] = g.Name
			}
		}
	}
	for i, g := range amf.Spec.ChartGroups {
		pos[g] = i
	}
	at := func(chart string) int { return pos[groupOf[chart]] }
	// The seed's list of what breaks what: etcd, the API server, the other
	// components, the proxy, Calico etcd, Calico node, DNS. kube-proxy and
	// Calico reach the API through the nodes' HAProxy.
	if d := cmp.Diff([]string{"etcd", "apiserver", "controller-manager", "scheduler", "haproxy", "kube-proxy", "calico-etcd", "calico", "promenade", "coredns"}, Names()); d != "" {
		t.Errorf("deployment order (-want +got):\n%s", d)
	}
	for _, before := range [][2]string{{"etcd", "apiserver"}, {"apiserver", "haproxy"}, {"haproxy", "kube-proxy"}, {"kube-proxy", "calico-etcd"},
		{"calico-etcd", "calico"}, {"calico", "coredns"}, {"calico-etcd", "coredns"}, {"promenade", "coredns"}} {
		if at(before[0]) >= at(before[1]) {
			t.Errorf("%s is not deployed before %s: groups %v", before[0], before[1], amf.Spec.ChartGroups)
		}
	}
	if last := amf.Spec.ChartGroups[len(amf.Spec.ChartGroups)-1]; last != groupOf["coredns"] {
		t.Errorf("DNS is not last: %v", amf.Spec.ChartGroups)
	}
	charts := 0
	for _, o := range objs {
		act, ok := o.(*armadav1.ArmadaChart)
		if !ok {
			continue
		}
		charts++
		if act.Spec.TargetState != armadav1.TargetStateUninitialized {
			t.Errorf("%s: target_state %q; the manifest enables its charts in order", act.Name, act.Spec.TargetState)
		}
		if act.Spec.Source.Location != "/charts" || act.Spec.Source.Subpath != act.Name {
			t.Errorf("%s: source %+v", act.Name, act.Spec.Source)
		}
		// The wait's labels select a workload the chart renders.
		var v map[string]any
		if err := json.Unmarshal(act.Spec.Values.Raw, &v); err != nil {
			t.Fatal(err)
		}
		rendered := render(t, act.Name, v).Objects
		for _, res := range act.Spec.Wait.Resources {
			found := false
			for _, r := range rendered {
				if !strings.EqualFold(r.GetKind(), string(res.Type)) {
					continue
				}
				match := true
				for k, want := range res.Labels {
					if r.GetLabels()[k] != want {
						match = false
					}
				}
				found = found || match
			}
			if !found {
				t.Errorf("%s: wait %+v selects nothing the chart renders", act.Name, res)
			}
		}
		// Every workload the chart renders is waited for.
		var workloads int
		for _, r := range rendered {
			if r.GetKind() == "DaemonSet" || r.GetKind() == "Deployment" {
				workloads++
			}
		}
		if workloads != len(act.Spec.Wait.Resources) {
			t.Errorf("%s: %d workloads, %d waits", act.Name, workloads, len(act.Spec.Wait.Resources))
		}
	}
	if charts != len(Names()) {
		t.Errorf("%d ArmadaCharts, want %d", charts, len(Names()))
	}
}

// TestManifestValuesSecrets: with ValuesSecrets every chart reads its
// values from a Secret of its own, listed before the charts, whose content
// is exactly the values the chart would otherwise embed; no private key is
// left in an ArmadaChart.
func TestManifestValuesSecrets(t *testing.T) {
	vals, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := Manifest(vals, ManifestOptions{Namespace: "kube-system"})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Manifest(vals, ManifestOptions{Namespace: "kube-system", ValuesSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{}
	for _, o := range embedded {
		if act, ok := o.(*armadav1.ArmadaChart); ok {
			var v any
			if err := json.Unmarshal(act.Spec.Values.Raw, &v); err != nil {
				t.Fatal(err)
			}
			want[act.Name] = v
		}
	}
	secrets := map[string]*corev1.Secret{}
	firstChart := -1
	for i, o := range objs {
		switch t2 := o.(type) {
		case *corev1.Secret:
			if firstChart >= 0 {
				t.Errorf("Secret %s comes after the first ArmadaChart", t2.Name)
			}
			secrets[t2.Name] = t2
		case *armadav1.ArmadaChart:
			if firstChart < 0 {
				firstChart = i
			}
			raw, _ := json.Marshal(t2.Spec)
			if t2.Spec.Values != nil || strings.Contains(string(raw), "PRIVATE KEY") {
				t.Errorf("ArmadaChart %s still carries values", t2.Name)
			}
			if len(t2.Spec.ValuesFrom) != 1 || t2.Spec.ValuesFrom[0] != (armadav1.ValuesReference{Kind: "Secret", Name: ValuesSecretName("promenade", t2.Name)}) {
				t.Errorf("ArmadaChart %s: valuesFrom %+v", t2.Name, t2.Spec.ValuesFrom)
				continue
			}
			sec := secrets[t2.Spec.ValuesFrom[0].Name]
			if sec == nil || sec.Namespace != t2.Namespace {
				t.Errorf("ArmadaChart %s: no Secret %s before it in its namespace", t2.Name, t2.Spec.ValuesFrom[0].Name)
				continue
			}
			var got any
			if err := yaml.Unmarshal(sec.Data[armadav1.DefaultValuesKey], &got); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want[t2.Name], got); d != "" {
				t.Errorf("Secret %s differs from the embedded values:\n%s", sec.Name, d)
			}
		}
	}
	if len(secrets) != len(Names()) {
		t.Errorf("%d Secrets, want one per chart (%d)", len(secrets), len(Names()))
	}
}
