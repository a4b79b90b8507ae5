package fn

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestDecodeResourceList(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		items     int
		hasConfig bool
		wantErr   string
	}{
		{name: "full", in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: {kind: X}\nitems:\n- {kind: A}\n- {kind: B}\n", items: 2, hasConfig: true},
		{name: "v1alpha1 without config", in: "apiVersion: config.kubernetes.io/v1alpha1\nkind: ResourceList\nitems: []\n"},
		{name: "null items", in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\nfunctionConfig:\n"},
		{name: "empty", in: "", wantErr: "empty input"},
		{name: "not an object", in: "- a\n", wantErr: "not an object"},
		{name: "wrong kind", in: "apiVersion: v1\nkind: List\nitems: []\n", wantErr: `kind is "List"`},
		{name: "wrong version", in: "apiVersion: v2\nkind: ResourceList\n", wantErr: `apiVersion is "v2"`},
		{name: "items not a list", in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {a: b}\n", wantErr: "items is a map"},
		{name: "scalar item", in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [a]\n", wantErr: "items[0] is a scalar"},
		{name: "scalar config", in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: x\n", wantErr: "functionConfig is a scalar"},
		{name: "two documents", in: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n---\na: b\n", wantErr: "more than one YAML document"},
		{name: "bad yaml", in: "a: [b\n", wantErr: "reading ResourceList"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, items, err := DecodeResourceList([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != tc.items || (cfg != nil) != tc.hasConfig {
				t.Errorf("got %d items, config %v", len(items), cfg != nil)
			}
		})
	}
}

func TestRunUnsupportedKind(t *testing.T) {
	tests := []struct {
		name, config, wantImage string
	}{
		{name: "other kind", wantImage: "gcr.io/example/setter:v1", config: `
apiVersion: example.com/v1
kind: Setter
metadata:
  name: set-things
  annotations:
    config.kubernetes.io/function: |
      container:
        image: gcr.io/example/setter:v1
`},
		{name: "our group, unknown kind", wantImage: "quay.io/airshipit/sops:latest", config: `
apiVersion: airshipit.org/v1alpha1
kind: Sops
metadata:
  name: decrypt
  annotations:
    config.kubernetes.io/function: |
      container:
        image: quay.io/airshipit/sops:latest
`},
		{name: "exec function", wantImage: "exec:/usr/local/bin/thing", config: `
apiVersion: example.com/v1
kind: Thing
metadata:
  name: run-thing
  annotations:
    config.kubernetes.io/function: |
      exec:
        path: /usr/local/bin/thing
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := yaml.MustParse(tc.config)
			_, err := Run(cfg, nil)
			var ue *UnsupportedFunctionError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want *UnsupportedFunctionError", err)
			}
			msg := err.Error()
			for _, want := range []string{cfg.GetKind() + "/" + cfg.GetName(), tc.wantImage, "no container runtime"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not name %q", msg, want)
				}
			}
		})
	}
	if _, err := Run(nil, nil); err == nil || !strings.Contains(err.Error(), "no functionConfig") {
		t.Errorf("nil config: %v", err)
	}
}

// FuzzDecodeResourceList checks that decoding never panics, and that what
// decodes survives a write and a second read unchanged in size.
func FuzzDecodeResourceList(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*", "*", "input.yaml"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [{a: &x b}, {c: *x}]\n"))
	f.Add([]byte("kind: ResourceList\napiVersion: config.kubernetes.io/v1\nitems: [[]]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, items, err := DecodeResourceList(data)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w := kio.ByteWriter{Writer: &buf, KeepReaderAnnotations: true, WrappingKind: kio.ResourceListKind,
			WrappingAPIVersion: kio.ResourceListAPIVersion, FunctionConfig: cfg}
		if err := w.Write(items); err != nil {
			return // kyaml cannot write some oddities (e.g. dangling aliases); decoding them was still safe
		}
		cfg2, items2, err := DecodeResourceList(buf.Bytes())
		if err != nil {
			t.Fatalf("re-reading written ResourceList: %v\n%s", err, buf.String())
		}
		if len(items2) != len(items) || (cfg2 == nil) != (cfg == nil) {
			t.Fatalf("round trip: %d items -> %d, config %v -> %v", len(items), len(items2), cfg != nil, cfg2 != nil)
		}
	})
}
