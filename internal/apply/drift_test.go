package apply

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestDrift(t *testing.T) {
	obj := func(o map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: o} }
	tests := []struct {
		name          string
		live, applied map[string]any
		want          []string
	}{
		{"same", map[string]any{"data": map[string]any{"k": "v"}}, map[string]any{"data": map[string]any{"k": "v"}}, nil},
		{"changed value", map[string]any{"data": map[string]any{"k": "by hand"}}, map[string]any{"data": map[string]any{"k": "v"}},
			[]string{`data.k: "by hand" → "v"`}},
		{"added and removed", map[string]any{"spec": map[string]any{"a": int64(1)}}, map[string]any{"spec": map[string]any{"b": true}},
			[]string{`spec.a: 1 → (none)`, `spec.b: (none) → true`}},
		{"list", map[string]any{"spec": map[string]any{"l": []any{"x"}}}, map[string]any{"spec": map[string]any{"l": []any{"x", "y"}}},
			[]string{`spec.l: ["x"] → ["x","y"]`}},
		{"server fields ignored", map[string]any{"metadata": map[string]any{"resourceVersion": "1", "generation": int64(2), "name": "a"}, "status": map[string]any{"x": 1}},
			map[string]any{"metadata": map[string]any{"resourceVersion": "2", "generation": int64(3), "name": "a"}}, nil},
	}
	for _, tt := range tests {
		if got := Drift(obj(tt.live), obj(tt.applied)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	long := map[string]any{}
	for i := range 60 {
		long[string(rune('a'+i%26))+strings.Repeat("x", i)] = strings.Repeat("v", 300)
	}
	got := Drift(obj(map[string]any{"data": long}), obj(map[string]any{"data": map[string]any{}}))
	if len(got) != 51 || got[50] != "… and 10 more" || len(got[0]) > 300 {
		t.Errorf("bounds: %d lines, last %q, first %d bytes", len(got), got[len(got)-1], len(got[0]))
	}
}
