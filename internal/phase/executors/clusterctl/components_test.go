package clusterctl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	ctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"

	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

const componentsYAML = `apiVersion: v1
kind: Namespace
metadata: {name: NS}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: manager, namespace: NS}
spec:
  selector: {matchLabels: {app: m}}
  template:
    metadata: {labels: {app: m}}
    spec:
      containers:
      - name: manager
        image: registry.invalid/capi/manager:v1
        args: ["--a=${FOO}", "--b=${BAR:=dflt}", "--c=${BAZ}"EXTRA]
`

const componentsDoc = `apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: init}
action: init
env-vars: true
additional-vars: {FOO: from-doc}
images:
  cluster-api: {repository: mirror.invalid/capi, tag: v9}
providers:
- {name: cluster-api, type: CoreProvider, url: core, variable-substitution: true}
- {name: raw, type: InfrastructureProvider, versions: {v0.1.0: raw, v0.9.0: core}}
- {name: strict, type: BootstrapProvider, url: strict, variable-substitution: true}
init-options:
  core-provider: cluster-api:v1.14.2
  bootstrap-providers: [strict:v0.1.0]
  infrastructure-providers: [raw:v0.1.0]
`

// TestComponentsVariablesAndImages builds provider components from a site
// tree and reads them back through clusterctl's own processing (no cluster):
// additional-vars win over the environment, defaults apply, a provider
// without variable-substitution is installed as built, a missing variable is
// named, image overrides reach the Deployment of their component, and a
// provider's versions map picks the tree of the version asked for.
func TestComponentsVariablesAndImages(t *testing.T) {
	dir := t.TempDir()
	for sub, ns := range map[string]string{"core": "capi-system", "raw": "raw-system", "strict": "strict-system"} {
		extra := ""
		if sub == "strict" {
			extra = `, "--d=${QUX}"`
		}
		y := strings.NewReplacer("NS", ns, "EXTRA", extra).Replace(componentsYAML)
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sub, "kustomization.yaml"), []byte("resources: [components.yaml]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, sub, "components.yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := document.FromYAML("executors.yaml", []byte(componentsDoc))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := New(executor.Config{PhaseName: "init", ExecutorDoc: b.Documents()[0], TargetPath: dir,
		Build: func(path string) (*document.Bundle, error) { return document.Build(path, document.BuildOptions{}) }})
	if err != nil {
		t.Fatal(err)
	}
	e := ex.(*Executor)
	entries, err := e.initEntries()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BAZ", "from-env")
	t.Setenv("FOO", "env-loses")
	ctx := context.Background()
	c, err := e.newClusterctl(ctx, t.TempDir(), entries)
	if err != nil {
		t.Fatal(err)
	}
	yamlOf := func(provider string, typ clusterctlv1.ProviderType) (string, error) {
		comps, err := c.GenerateProvider(ctx, provider, typ, ctlclient.ComponentsOptions{})
		if err != nil {
			return "", err
		}
		data, err := comps.Yaml()
		return string(data), err
	}

	core, err := yamlOf("cluster-api:v1.14.2", clusterctlv1.CoreProviderType)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--a=from-doc", "--b=dflt", "--c=from-env", "image: mirror.invalid/capi/manager:v9"} {
		if !strings.Contains(core, want) {
			t.Errorf("core components lack %q:\n%s", want, core)
		}
	}

	raw, err := yamlOf("raw:v0.1.0", clusterctlv1.InfrastructureProviderType)
	if err != nil {
		t.Fatal(err)
	}
	// versions picks the tree of the version init asks for, not the newest.
	for _, want := range []string{"--a=${FOO}", "--b=${BAR:=dflt}", "image: registry.invalid/capi/manager:v1", "namespace: raw-system"} {
		if !strings.Contains(raw, want) {
			t.Errorf("components without variable-substitution lack %q:\n%s", want, raw)
		}
	}

	_, err = yamlOf("strict:v0.1.0", clusterctlv1.BootstrapProviderType)
	if err == nil || !strings.Contains(err.Error(), "QUX") {
		t.Fatalf("a variable without a value: err %v, want one naming QUX", err)
	}
}
