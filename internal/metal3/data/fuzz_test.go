package data

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzRender renders meta-data, network-data and the pool references of
// any input in the form of testdata/<case>/input.yaml (a template spec, its
// objects, the pools' addresses), seeded with every case there. Rendering
// never panics; whatever it renders is a YAML mapping (network-data with
// links, networks and services) and the same input renders the same bytes.
func FuzzRender(f *testing.F) {
	ins, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(ins) == 0 {
		f.Fatalf("no seeds under testdata/: %v", err)
	}
	for _, in := range ins {
		raw, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var g golden
		if err := yaml.Unmarshal(raw, &g); err != nil {
			return
		}
		for _, render := range []struct {
			name string
			fn   func(Input) ([]byte, error)
			keys []string
		}{{"meta-data", RenderMetaData, nil}, {"network-data", RenderNetworkData, []string{"links", "networks", "services"}}} {
			out, err := render.fn(g.input())
			if err != nil || out == nil {
				continue
			}
			var m map[string]any
			if err := yaml.Unmarshal(out, &m); err != nil {
				t.Fatalf("%s is not a YAML mapping: %v\n%s", render.name, err, out)
			}
			for _, k := range render.keys {
				if _, ok := m[k]; !ok {
					t.Errorf("%s has no %s:\n%s", render.name, k, out)
				}
			}
			again, err := render.fn(g.input())
			if err != nil || !bytes.Equal(out, again) {
				t.Errorf("%s rendered twice differs (%v):\n%s\n---\n%s", render.name, err, out, again)
			}
		}
		_, _ = Pools(g.input())
	})
}
