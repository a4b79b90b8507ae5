package convert

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected files under testdata/ from the actual output")

// TestGolden converts testdata/<case>/input.yaml and compares with
// expected.yaml (objects) and warnings.txt (dropped fields).
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, in := range dirs {
		dir := filepath.Dir(in)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }() // only read: closing cannot lose data
			docs, err := Read("input.yaml", f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Convert(docs, Options{Namespace: "site"})
			if err != nil {
				t.Fatal(err)
			}
			got, err := Marshal(res.Objects, "yaml")
			if err != nil {
				t.Fatal(err)
			}
			warnings := []byte(strings.Join(res.Warnings, "\n") + "\n")
			golden(t, filepath.Join(dir, "expected.yaml"), got)
			golden(t, filepath.Join(dir, "warnings.txt"), warnings)
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestConvertErrorsNameDocumentAndField(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"chart without release", "schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {namespace: x, source: {type: local, location: /c}}\n", `f.yaml: document 0 (armada/Chart/v2 "c"): data.release is required`},
		{"no name", "schema: armada/Manifest/v2\nmetadata: {}\ndata: {release_prefix: p, chart_groups: [g]}\n", "metadata.name is required"},
		{"empty group", "schema: armada/ChartGroup/v2\nmetadata: {name: g}\ndata: {chart_group: []}\n", "data.chart_group must list"},
		{"manifest without prefix", "---\nschema: armada/Chart/v2\nmetadata: {name: c}\ndata: {release: c}\n---\nschema: armada/Manifest/v2\nmetadata: {name: m}\ndata: {chart_groups: [g]}\n", `document 1 (armada/Manifest/v2 "m"): data.release_prefix is required`},
		{"bad wait resource type", "schema: armada/Chart/v1\nmetadata: {name: c}\ndata: {release: c, wait: {resources: {replicaset: {}}}}\n", "data.wait.resources.replicaset: unknown resource type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Read("f.yaml", strings.NewReader(tt.in))
			if err == nil {
				_, err = Convert(docs, Options{})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestMarshalJSON(t *testing.T) {
	docs, err := Read("f.yaml", strings.NewReader("schema: armada/Manifest/v2\nmetadata: {name: m}\ndata: {release_prefix: p, chart_groups: [g]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Convert(docs, Options{AllowDangling: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(res.Objects, "json")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind": "List"`, `"kind": "ArmadaManifest"`, `"release_prefix": "p"`} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("json output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "status") {
		t.Fatalf("json output carries status:\n%s", out)
	}
}
