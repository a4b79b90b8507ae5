package config

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzParse feeds the config decoder arbitrary files: it never panics, and
// what it accepts survives a write and a read unchanged.
func FuzzParse(f *testing.F) {
	dir := f.TempDir()
	def := filepath.Join(dir, "default")
	if err := NewDefault(def).Save(); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(def)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	if example, err := os.ReadFile("../../examples/site/airship-config.yaml"); err == nil {
		f.Add(example)
	}
	f.Add([]byte("kind: Config\nmanifests: {m: {repositories: {r: {url: 'user:pw@host:x', auth: {type: http-basic}}}}}\n"))
	f.Add([]byte("contexts: {c: null}\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz")
		if err != nil {
			return
		}
		out, err := yaml.Marshal(&c.Config)
		if err != nil {
			t.Fatalf("accepted config does not encode: %v", err)
		}
		again, err := Parse(out, "fuzz")
		if err != nil {
			t.Fatalf("accepted config does not read back: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(c.Config, again.Config) {
			t.Fatalf("config changed on the way through:\n%#v\n%#v", c.Config, again.Config)
		}
	})
}
