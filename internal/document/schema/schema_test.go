package schema

import (
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/document"
)

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.airshipit.org
spec:
  group: example.airshipit.org
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string, enum: [red, green, blue]}
`

func docs(t *testing.T, y string) []*document.Document {
	t.Helper()
	b, err := document.FromYAML("test.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return b.Documents()
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		opts Options
		want []string // substrings, one per expected problem; empty means valid
	}{
		{"valid deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 2\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: i}]}\n", Options{Strict: true}, nil},
		{"unknown field in built-in kind", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndatta: {a: b}\n", Options{Strict: true}, []string{`unknown field "datta"`}},
		{"unknown field allowed when not strict", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndatta: {a: b}\n", Options{}, nil},
		{"wrong type in built-in kind", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: many}\n", Options{Strict: true}, []string{"replicas"}},
		{"valid custom resource", "apiVersion: example.airshipit.org/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 2, color: red}\n", Options{Strict: true}, nil},
		{"custom resource below minimum and bad enum", "apiVersion: example.airshipit.org/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 0, color: pink}\n", Options{Strict: true}, []string{"spec.size", "spec.color"}},
		{"custom resource missing required", "apiVersion: example.airshipit.org/v1\nkind: Widget\nmetadata: {name: w}\nspec: {color: red}\n", Options{Strict: true}, []string{"spec.size: Required"}},
		{"custom resource unknown field", "apiVersion: example.airshipit.org/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1, shape: round}\n", Options{Strict: true}, []string{"spec.shape: unknown field"}},
		{"airship phase typo", "apiVersion: airshipit.org/v1alpha1\nkind: Phase\nmetadata: {name: p, clusterName: c}\nconfig: {executorRef: {kind: K, name: n}, documentEntryPont: x}\n", Options{Strict: true}, []string{"documentEntryPont"}},
		{"missing schema reported", "apiVersion: other.io/v1\nkind: Gadget\nmetadata: {name: g}\n", Options{Strict: true}, []string{"no schema for kind Gadget (other.io/v1): add its CRD to the bundle or to the phase's validation.crdList, or list Gadget in validation.kindsToSkip"}},
		{"missing schema ignored", "apiVersion: other.io/v1\nkind: Gadget\nmetadata: {name: g}\n", Options{IgnoreMissingSchemas: true}, nil},
		{"kind skipped", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndatta: 1\n", Options{Strict: true, KindsToSkip: []string{"ConfigMap"}}, nil},
	}
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if probs := v.AddCRDs(docs(t, crd)); len(probs) > 0 {
		t.Fatalf("valid CRD refused: %v", probs)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := v.ValidateAll(docs(t, tt.doc), tt.opts)
			if len(probs) != len(tt.want) {
				t.Fatalf("got %d problems %v, want %d %v", len(probs), probs, len(tt.want), tt.want)
			}
			all := ""
			for _, p := range probs {
				all += p.String() + "\n"
				if !strings.Contains(p.Document, "test.yaml") {
					t.Errorf("problem does not name the file: %s", p)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems lack %q:\n%s", w, all)
				}
			}
		})
	}
}

func TestBadCRDIsAProblem(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(crd, "scope: Namespaced", "scope: Everywhere", 1)
	probs := v.AddCRDs(docs(t, bad))
	if len(probs) != 1 || !strings.Contains(probs[0].Message, "spec.scope") {
		t.Fatalf("got %v, want one problem naming spec.scope", probs)
	}
}
