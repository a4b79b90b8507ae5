package charts

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// ManifestOptions place the Armada objects and say where the charts are.
type ManifestOptions struct {
	// Name of the ArmadaManifest (default "promenade").
	Name string
	// Namespace of the Armada objects (default "default"); the releases go
	// to Namespace (kube-system) whatever it is.
	Namespace string
	// ReleasePrefix of the Helm releases (default "promenade").
	ReleasePrefix string
	// ChartsDir is the directory holding the charts, as the operator sees
	// it (default: Dir, relative to the operator's working directory).
	ChartsDir string
	// Timeout of each chart's wait, in seconds (default 600).
	Timeout int64
	// ValuesSecrets puts each chart's values in a Secret of its own
	// (ValuesSecretName, key values.yaml) that the ArmadaChart reads through
	// spec.valuesFrom, instead of in spec.values: they carry private keys.
	ValuesSecrets bool
}

// ValuesSecretName is the Secret that holds a chart's values when
// ManifestOptions.ValuesSecrets is set: "<manifest>-<chart>-values".
func ValuesSecretName(manifest, chart string) string { return manifest + "-" + chart + "-values" }

func (o *ManifestOptions) defaults() {
	if o.Name == "" {
		o.Name = "promenade"
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.ReleasePrefix == "" {
		o.ReleasePrefix = "promenade"
	}
	if o.ChartsDir == "" {
		o.ChartsDir = Dir
	}
	if o.Timeout == 0 {
		o.Timeout = 600
	}
}

// Wait is what a chart waits for before it counts as deployed: an anchor
// chart for its DaemonSet's pods on every selected node (the anchor is
// ready once its files are in place), kube-proxy for its DaemonSet, Calico
// for calico-node on every node and calico-kube-controllers, CoreDNS and
// the API for their Deployments.
func Wait(chart string, timeout int64) *armadav1.ArmadaChartWait {
	all := intstr.FromString("100%")
	res := armadav1.ArmadaChartWaitResource{Type: "deployment", MinReady: &all}
	more := []armadav1.ArmadaChartWaitResource{}
	switch {
	case IsAnchor(chart):
		res = armadav1.ArmadaChartWaitResource{Type: "daemonset", MinReady: &all,
			Labels: map[string]string{"application": "promenade", "component": chart + "-anchor"}}
	case chart == "kube-proxy":
		res = armadav1.ArmadaChartWaitResource{Type: "daemonset", MinReady: &all, Labels: map[string]string{"application": "kube-proxy"}}
	case chart == "calico":
		res = armadav1.ArmadaChartWaitResource{Type: "daemonset", MinReady: &all, Labels: map[string]string{"application": "calico", "component": "node"}}
		more = append(more, armadav1.ArmadaChartWaitResource{Type: "deployment", MinReady: &all,
			Labels: map[string]string{"application": "calico", "component": "kube-controllers"}})
	case chart == "coredns":
		res.Labels = map[string]string{"application": "coredns"}
	case chart == "promenade":
		res.Labels = map[string]string{"application": "promenade", "component": "api"}
	}
	return &armadav1.ArmadaChartWait{Timeout: timeout, Resources: append([]armadav1.ArmadaChartWaitResource{res}, more...)}
}

// Manifest renders the ArmadaManifest, its ArmadaChartGroups (Groups, in
// order) and an ArmadaChart per chart with its values embedded, or, with
// opts.ValuesSecrets, each chart's values as a Secret listed before the
// charts. Groups and charts are created uninitialized: the manifest moves
// them to deployed in order (docs/armada.md, Order).
func Manifest(values map[string]map[string]any, opts ManifestOptions) ([]client.Object, error) {
	opts.defaults()
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: opts.Namespace, Labels: map[string]string{"application": "promenade"}}
	}
	typeMeta := func(kind string) metav1.TypeMeta {
		return metav1.TypeMeta{APIVersion: armadav1.GroupVersion.String(), Kind: kind}
	}
	amf := &armadav1.ArmadaManifest{TypeMeta: typeMeta("ArmadaManifest"), ObjectMeta: meta(opts.Name),
		Spec: armadav1.ArmadaManifestSpec{ReleasePrefix: opts.ReleasePrefix}}
	objs := []client.Object{amf}
	var secrets, charts []client.Object
	for _, g := range Groups {
		amf.Spec.ChartGroups = append(amf.Spec.ChartGroups, g.Name)
		acg := &armadav1.ArmadaChartGroup{TypeMeta: typeMeta("ArmadaChartGroup"), ObjectMeta: meta(g.Name),
			Spec: armadav1.ArmadaChartGroupSpec{Description: g.Description, Sequenced: g.Sequenced, ChartGroup: g.Charts,
				TargetState: armadav1.TargetStateUninitialized}}
		objs = append(objs, acg)
	}
	for _, g := range Groups {
		for _, name := range g.Charts {
			v, ok := values[name]
			if !ok {
				return nil, fmt.Errorf("no values for chart %s", name)
			}
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("values of chart %s: %w", name, err)
			}
			act := &armadav1.ArmadaChart{TypeMeta: typeMeta("ArmadaChart"), ObjectMeta: meta(name),
				Spec: armadav1.ArmadaChartSpec{
					Release:   name,
					Namespace: Namespace,
					Source:    armadav1.ArmadaChartSource{Type: "dir", Location: opts.ChartsDir, Subpath: name},
					Values:    &apiextensionsv1.JSON{Raw: raw},
					Wait:      Wait(name, opts.Timeout),
					// The charts ship no Helm tests; the waits are the check.
					Test: &armadav1.ArmadaChartTest{Enabled: ptr.To(false)},
					// The manifest enables the groups and the groups their
					// charts, in order.
					TargetState: armadav1.TargetStateUninitialized,
				}}
			if opts.ValuesSecrets {
				y, err := yaml.Marshal(v)
				if err != nil {
					return nil, fmt.Errorf("values of chart %s: %w", name, err)
				}
				sec := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta(ValuesSecretName(opts.Name, name)),
					Type: corev1.SecretTypeOpaque, Data: map[string][]byte{armadav1.DefaultValuesKey: y}}
				secrets = append(secrets, sec)
				act.Spec.Values = nil
				act.Spec.ValuesFrom = []armadav1.ValuesReference{{Kind: "Secret", Name: sec.Name}}
			}
			charts = append(charts, act)
		}
	}
	// The Secrets first, so a chart enabled at once finds its values.
	return append(append(objs, secrets...), charts...), nil
}
