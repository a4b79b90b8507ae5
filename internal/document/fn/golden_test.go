package fn

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	sigyaml "sigs.k8s.io/yaml"
)

// runGolden runs every testdata/<fn>/<case>/input.yaml (a ResourceList)
// through run and compares with expected.yaml: the output documents, or
// "error: <message>" when the function fails.
func runGolden(t *testing.T, dir string) {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join("testdata", dir, "*", "input.yaml"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases under testdata/%s: %v", dir, err)
	}
	for _, in := range cases {
		caseDir := filepath.Dir(in)
		t.Run(filepath.Base(caseDir), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			config, items, err := DecodeResourceList(data)
			if err != nil {
				t.Fatalf("decoding %s: %v", in, err)
			}
			fixed := Entropy{Rand: &counterReader{}, Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }}
			out, err := run(config, items, runOptions{entropy: fixed})
			var got []byte
			if err != nil {
				got, err = sigyaml.Marshal(map[string]string{"error": err.Error()})
				if err != nil {
					t.Fatal(err)
				}
			} else {
				var buf bytes.Buffer
				if err := (kio.ByteWriter{Writer: &buf}).Write(out); err != nil {
					t.Fatal(err)
				}
				got = buf.Bytes()
			}
			exp := filepath.Join(caseDir, "expected.yaml")
			if *update {
				if err := os.WriteFile(exp, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(exp)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the output:\n--- got\n%s\n--- want\n%s", exp, got, want)
			}
		})
	}
}

func TestReplacementGolden(t *testing.T) { runGolden(t, "replacement") }
func TestTemplaterGolden(t *testing.T)   { runGolden(t, "templater") }

// counterReader is a reproducible byte stream for serials and regexGen.
type counterReader struct{ n byte }

func (c *counterReader) Read(p []byte) (int, error) {
	for i := range p {
		c.n = c.n*31 + 7
		p[i] = c.n
	}
	return len(p), nil
}
