package document

import (
	"testing"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/strictyaml"
)

// strictKinds are the airshipit.org document kinds a site holds, each with
// a fresh value to decode into.
var strictKinds = map[string]func() any{
	"Phase":            func() any { return &v1.Phase{} },
	"PhasePlan":        func() any { return &v1.PhasePlan{} },
	"ClusterMap":       func() any { return &v1.ClusterMap{} },
	"KubeConfig":       func() any { return &v1.KubeConfig{} },
	"KubernetesApply":  func() any { return &v1.KubernetesApply{} },
	"Clusterctl":       func() any { return &v1.Clusterctl{} },
	"BaremetalManager": func() any { return &v1.BaremetalManager{} },
	"GenericContainer": func() any { return &v1.GenericContainer{} },
	"ManifestMetadata": func() any { return &v1.ManifestMetadata{} },
}

// FuzzDecodeStrict reads arbitrary YAML as a bundle and decodes each
// document strictly as the airshipit.org kind it names (and, through
// strictyaml.Unmarshal, the whole input as each kind and as the airship
// config): an error or a value, never a panic.
func FuzzDecodeStrict(f *testing.F) {
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: Phase\nmetadata: {name: x, clusterName: c}\nconfig: {executorRef: {kind: K, name: n}, documentEntryPoint: p}\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: PhasePlan\nmetadata: {name: x}\nphases: [{name: a, dependsOn: [b]}]\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: ClusterMap\nmetadata: {name: x}\nmap:\n  w: {parent: t, kubeconfigSources: [{type: bundle}]}\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: Clusterctl\nmetadata: {name: x}\naction: init\ninit-options: {core-provider: a}\nproviders: [{name: a, type: CoreProvider, url: u}]\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: GenericContainer\nmetadata: {name: x}\nspec: {type: airship, airship: {privileged: true}}\nconfig: |\n  a: b\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: KubernetesApply\nmetadata: {name: x}\nconfig: {waitOptions: {timeout: 1, conditions: [{apiVersion: v1, kind: K, jsonPath: '{.a}', value: b}]}}\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: ManifestMetadata\nmetadata: {name: x}\nspec: {phase: {path: p, docEntryPointPrefix: q}}\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: Phase\nmetadata: {name: x}\nconfig: {executorRef: [1]}\n---\nkind: Phase\n")
	f.Fuzz(func(t *testing.T, in string) {
		for _, newValue := range strictKinds {
			_ = strictyaml.Unmarshal([]byte(in), newValue())
		}
		_ = strictyaml.Unmarshal([]byte(in), &v1.Config{})
		b, err := FromYAML("fuzz.yaml", []byte(in))
		if err != nil {
			return
		}
		for _, d := range b.Documents() {
			newValue, ok := strictKinds[d.Kind()]
			if !ok {
				continue
			}
			_ = d.DecodeStrict(newValue())
			_ = d.Decode(newValue())
		}
	})
}
