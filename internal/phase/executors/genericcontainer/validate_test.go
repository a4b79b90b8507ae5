package genericcontainer

import (
	"context"
	"strings"
	"testing"
)

const toolboxConfigMap = `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kubectl-get-node
data:
  script: |
    kubectl get node 1>&2
`

func TestValidate(t *testing.T) {
	cases := []struct {
		name     string
		executor string
		bundle   string
		newErr   []string
		err      []string
	}{
		{name: "unknown field", executor: gc("bad", "  image: localhost/toolbox\n  imagePullPolicy: Always\n"),
			newErr: []string{"GenericContainer/bad", "imagePullPolicy"}},
		{name: "no image, bad type, bad runtime, bad env, mount without dst", executor: gc("many",
			"  type: docker\n  airship:\n    containerRuntime: rkt\n  envVars:\n  - 1BAD=x\n  mounts:\n  - type: bind\n    src: /a\n"),
			err: []string{"GenericContainer/many (executors.yaml): spec.image is required", "spec.type \"docker\"", "spec.airship.containerRuntime \"rkt\"",
				"spec.envVars[0] \"1BAD=x\"", "spec.mounts[0].dst is required"}},
		{name: "configRef to nothing", executor: gc("ref", "  image: localhost/toolbox\nconfigRef:\n  kind: ConfigMap\n  name: missing\n  apiVersion: v1\n"),
			err: []string{"GenericContainer/ref", "configRef", "missing"}},
		{name: "toolbox config without script", executor: gc("noscript", "  image: localhost/toolbox\nconfig: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  data:\n    other: x\n"),
			err: []string{"GenericContainer/noscript", "config ConfigMap/c has no data.script"}},
		{name: "toolbox without config", executor: gc("noconfig", "  image: quay.io/airshipit/toolbox:latest\n"),
			err: []string{"GenericContainer/noconfig", "set config to a ConfigMap with data.script"}},
		{name: "config not YAML", executor: gc("badyaml", "  image: localhost/x\nconfig: \"a: [\"\n"),
			err: []string{"GenericContainer/badyaml", "config is not one YAML document"}},
		{name: "valid toolbox with configRef", executor: gc("ok", "  type: krm\n  image: localhost/toolbox\nconfigRef:\n  kind: ConfigMap\n  name: kubectl-get-node\n  apiVersion: v1\n"),
			bundle: toolboxConfigMap},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := build(t, site{executor: tc.executor, phaseBundle: tc.executor + tc.bundle})
			if tc.newErr != nil {
				if err == nil {
					t.Fatal("New accepted the document")
				}
				for _, w := range tc.newErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q: %v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			err = ex.Validate(context.Background())
			if tc.err == nil {
				if err != nil {
					t.Fatalf("valid document refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.err {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}

// gc is a GenericContainer document named name whose spec (and anything
// after it) is rest.
func gc(name, rest string) string {
	return "apiVersion: airshipit.org/v1alpha1\nkind: GenericContainer\nmetadata:\n  name: " + name + "\nspec:\n" + rest
}
