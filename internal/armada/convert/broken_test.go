package convert

import (
	"strings"
	"testing"
)

const (
	okChart = "schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {release: c, namespace: ns, source: {type: local, location: /c}}\n"
	okGroup = "schema: armada/ChartGroup/v2\nmetadata: {name: g}\ndata: {chart_group: [c]}\n"
	okMan   = "schema: armada/Manifest/v2\nmetadata: {name: m}\ndata: {release_prefix: p, chart_groups: [g]}\n"
)

func stream(docs ...string) string { return "---\n" + strings.Join(docs, "---\n") }

// TestBrokenDocumentsAreRefused feeds the breakages a user's typos make, one
// per case, and checks that each is refused naming the file, the document
// and the field.
func TestBrokenDocumentsAreRefused(t *testing.T) {
	chart := func(data string) string {
		return "schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {release: c, namespace: ns, source: {type: local, location: /c}, " + data + "}\n"
	}
	tests := []struct {
		name  string
		in    string
		opts  Options
		wants []string
	}{
		{"wait.timeout a string", stream(chart("wait: {timeout: soon}"), okGroup, okMan), Options{}, []string{`(armada/Chart/v2 "c"): data: wait.timeout: cannot unmarshal string, want int64`}},
		{"values a list", stream(chart("values: [a, b]"), okGroup, okMan), Options{}, []string{"data.values: must be a map of values, got a list"}},
		{"values a string", stream(chart("values: replicas=2"), okGroup, okMan), Options{}, []string{"data.values: must be a map of values, got a string"}},
		{"dependencies not a list", stream(chart("dependencies: other"), okGroup, okMan), Options{}, []string{"data: dependencies: cannot unmarshal string"}},
		{"typo in a field", stream(chart("chart_nmae: c"), okGroup, okMan), Options{}, []string{`data: unknown field "chart_nmae"`}},
		{"typo in a nested field", stream(chart("wait: {timout: 10}"), okGroup, okMan), Options{}, []string{`unknown field "wait.timout"`}},
		{"typo at the top", stream("schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {release: c, namespace: ns, source: {type: local, location: /c}}\ndta: {}\n", okGroup, okMan), Options{}, []string{`unknown field "dta"`}},
		{"release missing", stream("schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {namespace: ns, source: {type: local, location: /c}}\n", okGroup, okMan), Options{}, []string{"data.release is required"}},
		{"source location missing", stream("schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {release: c, namespace: ns, source: {type: local}}\n", okGroup, okMan), Options{}, []string{"data.source.location is required"}},
		{"namespace missing", stream("schema: armada/Chart/v2\nmetadata: {name: c}\ndata: {release: c, source: {type: local, location: /c}}\n", okGroup, okMan), Options{}, []string{"data.namespace is required"}},
		{"metadata.name missing", stream("schema: armada/Chart/v2\nmetadata: {}\ndata: {release: c}\n", okGroup, okMan), Options{}, []string{"metadata.name is required"}},
		{"data not an object", stream("schema: armada/Chart/v2\nmetadata: {name: c}\ndata: [1]\n", okGroup, okMan), Options{}, []string{"data: must be an object"}},
		{"unknown armada schema", stream(okChart, okGroup, okMan, "schema: armada/Chrat/v2\nmetadata: {name: x}\ndata: {}\n"), Options{}, []string{`(armada/Chrat/v2 "x"): schema: unknown Armada schema`}},
		{"unknown armada version", stream(okChart, okGroup, okMan, "schema: armada/Chart/v3\nmetadata: {name: x}\ndata: {}\n"), Options{}, []string{"unknown Armada schema"}},
		{"manifest to a missing group", stream(okChart, okGroup, "schema: armada/Manifest/v2\nmetadata: {name: m}\ndata: {release_prefix: p, chart_groups: [g, h]}\n"), Options{}, []string{`data.chart_groups[1]: no armada/ChartGroup document named "h"`}},
		{"group to a missing chart", stream(okChart, "schema: armada/ChartGroup/v2\nmetadata: {name: g}\ndata: {chart_group: [c, d]}\n", okMan), Options{}, []string{`data.chart_group[1]: no armada/Chart document named "d"`}},
		{"chart to a missing dependency", stream(chart("dependencies: [base]"), okGroup, okMan), Options{}, []string{`data.dependencies[0]: no armada/Chart document named "base"`}},
		{"duplicate chart names", stream(okChart, okChart, okGroup, okMan), Options{}, []string{`document 1 (armada/Chart/v2 "c"): metadata.name: a armada/Chart/v2 named "c" is already defined in f.yaml document 0`}},
		{"invalid YAML in one document", stream(okChart, "schema: armada/ChartGroup/v2\nmetadata: {name: g\ndata: x\n", okMan), Options{}, []string{"f.yaml: document 1: not valid YAML"}},
		{"empty group", stream(okChart, "schema: armada/ChartGroup/v2\nmetadata: {name: g}\ndata: {chart_group: []}\n", okMan), Options{}, []string{"data.chart_group must list at least one chart"}},
		{"manifest without prefix", stream(okChart, okGroup, "schema: armada/Manifest/v2\nmetadata: {name: m}\ndata: {chart_groups: [g]}\n"), Options{}, []string{"data.release_prefix is required"}},
		{"every problem at once", stream(chart("wait: {timeout: soon}"), "schema: armada/Chart/v2\nmetadata: {name: d}\ndata: {release: d, namespace: ns, source: {type: local, location: /d}, chart_nmae: x}\n", "schema: armada/ChartGroup/v2\nmetadata: {name: g}\ndata: {chart_group: [c, gone]}\n", okMan), Options{},
			[]string{"3 problems", "wait.timeout", `"chart_nmae"`, `no armada/Chart document named "gone"`}},
		{"--allow-dangling does not excuse a typo", stream(chart("chart_nmae: c"), okGroup), Options{AllowDangling: true}, []string{`unknown field "chart_nmae"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, rerr := Read("f.yaml", strings.NewReader(tt.in))
			res, cerr := Convert(docs, tt.opts)
			var msgs []string
			for _, err := range []error{rerr, cerr} {
				if err != nil {
					msgs = append(msgs, err.Error())
				}
			}
			got := strings.Join(msgs, "\n")
			if got == "" {
				t.Fatalf("accepted; converted %d objects", len(res.Objects))
			}
			for _, w := range tt.wants {
				if !strings.Contains(got, w) {
					t.Errorf("problems do not contain %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestGoodTreesConvert(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opts Options
		n    int
	}{
		{"whole tree", stream(okChart, okGroup, okMan), Options{}, 3},
		{"partial tree with --allow-dangling", stream(okGroup, okMan), Options{AllowDangling: true}, 2},
		{"other schemas skipped", stream(okChart, okGroup, okMan, "schema: deckhand/Passphrase/v1\nmetadata: {name: p}\ndata: secret\n", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), Options{}, 3},
		{"same name in different schemas", stream(okChart, "schema: armada/ChartGroup/v2\nmetadata: {name: c}\ndata: {chart_group: [c]}\n", "schema: armada/Manifest/v2\nmetadata: {name: m}\ndata: {release_prefix: p, chart_groups: [c]}\n"), Options{}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Read("f.yaml", strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Convert(docs, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Objects) != tt.n {
				t.Errorf("%d objects, want %d", len(res.Objects), tt.n)
			}
		})
	}
}
