package document

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/strictyaml"
)

// TestAirshipDocumentsDecodeStrictly feeds every airshipit.org document
// kind of a bundle one unknown field, nested where the kind nests: Decode
// must refuse it, naming the document and the field's full path. (The
// airship config and metadata.yaml, read with strictyaml.Unmarshal, are tested
// in internal/config.)
func TestAirshipDocumentsDecodeStrictly(t *testing.T) {
	tests := []struct {
		kind string
		into any
		body string
		path string
	}{
		{"Phase", &v1.Phase{}, "metadata: {name: x, clusterName: c}\nconfig: {executorRef: {kind: K, name: n}, documentEntryPont: p}\n", "config.documentEntryPont"},
		{"PhasePlan", &v1.PhasePlan{}, "metadata: {name: x}\nphases: [{name: a, dependOn: [b]}]\n", "phases[0].dependOn"},
		{"ClusterMap", &v1.ClusterMap{}, "metadata: {name: x}\nmap:\n  workload01: {parent: t, dynamicKubeconf: true}\n", "map.workload01.dynamicKubeconf"},
		{"KubeConfig", &v1.KubeConfig{}, "metadata: {name: x}\nconfig:\n  contexts: [{name: a, context: {cluster: a, usr: a}}]\n", "config.contexts[0].context.usr"},
		{"KubernetesApply", &v1.KubernetesApply{}, "metadata: {name: x}\nconfig: {waitOptions: {timout: 10}}\n", "config.waitOptions.timout"},
		{"Clusterctl", &v1.Clusterctl{}, "metadata: {name: x}\naction: init\ninit-options: {core-providr: a}\n", "init-options.core-providr"},
		{"BaremetalManager", &v1.BaremetalManager{}, "metadata: {name: x}\nspec: {operation: reboot, hostSelector: {nam: h}}\n", "spec.hostSelector.nam"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			doc := "apiVersion: airshipit.org/v1alpha1\nkind: " + tt.kind + "\n" + tt.body
			b, err := FromYAML("site.yaml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			err = b.Documents()[0].Decode(tt.into)
			if err == nil {
				t.Fatalf("unknown field %s accepted", tt.path)
			}
			want := tt.kind + "/x (site.yaml): unknown field \"" + tt.path + "\""
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		})
	}

	t.Run("other groups stay lenient", func(t *testing.T) {
		b, err := FromYAML("cm.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndatta: {a: b}\ndata: {k: v}\n"))
		if err != nil {
			t.Fatal(err)
		}
		cm := &corev1.ConfigMap{}
		if err := b.Documents()[0].Decode(cm); err != nil || cm.Data["k"] != "v" {
			t.Fatalf("ConfigMap: %v %v", err, cm.Data)
		}
	})
	t.Run("strictyaml.Unmarshal names the path", func(t *testing.T) {
		err := strictyaml.Unmarshal([]byte("phase:\n  path: p\n  docEntryPointPrefx: e\n"), &v1.ManifestMetadata{})
		if err == nil || err.Error() != `unknown field "phase.docEntryPointPrefx"` {
			t.Fatalf("got %v", err)
		}
	})
}
