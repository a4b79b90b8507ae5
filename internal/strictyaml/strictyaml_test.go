package strictyaml_test

import (
	"testing"

	"github.com/airshipit/airship-go/internal/strictyaml"
)

type inner struct {
	Path string `json:"path"`
}

type outer struct {
	Phase inner    `json:"phase"`
	Items []inner  `json:"items,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // error text; empty for none
	}{
		{"known fields", "phase: {path: p}\ntags: [a]\n", ""},
		{"json is yaml", `{"phase": {"path": "p"}}`, ""},
		{"nested unknown field", "phase:\n  path: p\n  pth: e\n", `unknown field "phase.pth"`},
		{"unknown field in a list", "items: [{path: a}, {pat: b}]\n", `unknown field "items[1].pat"`},
		{"every unknown field", "phase: {pth: p}\ntag: [a]\n", `unknown field "phase.pth"; unknown field "tag"`},
		{"not yaml", "phase: [\n", "yaml: line 1: did not find expected node content"},
		{"repeated key", "phase: {path: a}\nphase: {path: b}\n", "yaml: unmarshal errors:\n  line 2: key \"phase\" already set in map"},
		{"repeated nested key", "phase: {path: a, path: b}\n", "yaml: unmarshal errors:\n  line 1: key \"path\" already set in map"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o outer
			err := strictyaml.Unmarshal([]byte(tt.in), &o)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestUnmarshalJSON: JSON may repeat a key, which the strict decoder
// refuses.
func TestUnmarshalJSON(t *testing.T) {
	var o outer
	err := strictyaml.UnmarshalJSON([]byte(`{"phase": {"path": "a", "path": "b"}}`), &o)
	if want := `duplicate field "phase.path"`; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}
