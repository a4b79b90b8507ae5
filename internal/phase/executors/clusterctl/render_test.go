package clusterctl_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/config"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/document/fn"
	"github.com/airshipit/airship-go/internal/phase"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/phase/executors"
	"github.com/airshipit/airship-go/internal/phase/executors/clusterctl"
)

const renderPhases = `apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: init, clusterName: mgmt}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: init}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: init}
action: init
providers:
- {name: cluster-api, type: CoreProvider, url: site/providers/core}
- {name: infra, type: InfrastructureProvider, versions: {v0.1.0: site/providers/infra-old, v0.2.0: site/providers/infra-new}}
init-options:
  core-provider: cluster-api:v1.14.2
  infrastructure-providers: [infra:v0.1.0]
`

const renderComponents = `apiVersion: apps/v1
kind: Deployment
metadata: {name: manager, namespace: NS}
spec:
  selector: {matchLabels: {app: m}}
  template:
    metadata: {labels: {app: m}}
    spec:
      containers:
      - {name: manager, image: IMAGE}
`

// The core provider's image comes from a catalogue through the built-in
// ReplacementTransformer: a build without the site's functions fails.
const renderReplacement = `apiVersion: airshipit.org/v1alpha1
kind: ReplacementTransformer
metadata:
  name: versions
  annotations:
    config.kubernetes.io/function: |-
      container:
        image: quay.io/airshipit/replacement-transformer:latest
replacements:
- source: {objref: {kind: VariableCatalogue, name: versions}, fieldref: "{.images.manager}"}
  target:
    objref: {kind: Deployment, name: manager}
    fieldrefs: ["spec.template.spec.containers[name=manager].image"]
`

// TestRenderAndRunBuildTheSame renders a Clusterctl phase as `phase render
// --source executor` does and builds the local repository `run` installs
// from, both from one Site with the site's build options (built-in
// functions, render cache): the components must be byte for byte the same,
// with the function applied and, for a provider with versions, the tree of
// the version init-options asks for.
func TestRenderAndRunBuildTheSame(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"site/metadata.yaml":                          "phase: {path: phases}\n",
		"site/phases/kustomization.yaml":              "resources: [phases.yaml]\n",
		"site/phases/phases.yaml":                     renderPhases,
		"site/providers/core/kustomization.yaml":      "resources: [components.yaml, catalogue.yaml]\ntransformers: [replacement.yaml]\n",
		"site/providers/core/components.yaml":         strings.NewReplacer("NS", "capi-system", "IMAGE", "PLACEHOLDER").Replace(renderComponents),
		"site/providers/core/catalogue.yaml":          "apiVersion: airshipit.org/v1alpha1\nkind: VariableCatalogue\nmetadata: {name: versions, labels: {airshipit.org/deploy-k8s: \"false\"}}\nimages: {manager: registry.invalid/capi/manager:v1.14.2}\n",
		"site/providers/core/replacement.yaml":        renderReplacement,
		"site/providers/infra-old/kustomization.yaml": "resources: [components.yaml]\n",
		"site/providers/infra-old/components.yaml":    strings.NewReplacer("NS", "infra-system", "IMAGE", "registry.invalid/infra:v0.1.0").Replace(renderComponents),
		"site/providers/infra-new/kustomization.yaml": "resources: [components.yaml]\n",
		"site/providers/infra-new/components.yaml":    strings.NewReplacer("NS", "infra-system", "IMAGE", "registry.invalid/infra:v0.2.0").Replace(renderComponents),
	}
	files["config"] = "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts: {c: {manifest: m}}\n" +
		"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n"
	writeSite(t, dir, files)
	cfg, err := config.Load(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	cache := &document.Cache{}
	executors.Register()
	s, err := phase.Load(cfg, "", document.BuildOptions{Functions: &fn.Runner{}, Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Phase("init")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := s.Executor(p)
	if err != nil {
		t.Fatal(err)
	}
	var rendered bytes.Buffer
	if err := ex.Render(context.Background(), &rendered, executor.RenderOptions{}); err != nil {
		t.Fatalf("render: %v", err)
	}

	// What run installs: the local clusterctl repository it writes.
	repo := t.TempDir()
	if err := ex.(*clusterctl.Executor).WriteRunRepository(repo); err != nil {
		t.Fatalf("run's repository: %v", err)
	}
	var built []string
	for _, c := range []string{"cluster-api/v1.14.2", "infrastructure-infra/v0.1.0"} {
		data, err := os.ReadFile(filepath.Join(repo, c, "components.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		built = append(built, string(data))
	}
	run := strings.Join(built, "---\n")
	if rendered.String() != run {
		t.Errorf("render and run built different components:\n--- render ---\n%s\n--- run ---\n%s", rendered.String(), run)
	}
	for _, want := range []string{"image: registry.invalid/capi/manager:v1.14.2", "image: registry.invalid/infra:v0.1.0"} {
		if !strings.Contains(run, want) {
			t.Errorf("components lack %q (the site's function, the version init asks for):\n%s", want, run)
		}
	}
	if strings.Contains(run, "PLACEHOLDER") || strings.Contains(run, "v0.2.0") {
		t.Errorf("components built without the site's function or from the newest version:\n%s", run)
	}
	// Both went through the site's one build: the second asked the cache.
	if hits, misses := cache.Stats(); misses == 0 {
		t.Errorf("the site's render cache was not used (hits %d, misses %d)", hits, misses)
	}
}
