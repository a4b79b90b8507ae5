package fn

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// benchItems makes n Deployments plus one catalogue to copy from.
func benchItems(b *testing.B, n int) []*yaml.RNode {
	b.Helper()
	items := make([]*yaml.RNode, 0, n+1)
	items = append(items, yaml.MustParse(`
apiVersion: airshipit.org/v1alpha1
kind: VariableCatalogue
metadata:
  name: versions
images:
  app: registry.example.com/app:v2
proxy: proxy.example.com
`))
	for i := range n {
		items = append(items, yaml.MustParse(fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  namespace: ns-%d
spec:
  template:
    spec:
      containers:
      - name: sidecar
        image: sidecar:v1
      - name: app
        image: registry.example.com/app:v1
        env:
        - name: HTTP_PROXY
          value: http://PROXY:3128
`, i, i%10)))
	}
	return items
}

const benchConfig = `
apiVersion: airshipit.org/v1alpha1
kind: ReplacementTransformer
metadata:
  name: bench
replacements:
- source:
    objref:
      kind: VariableCatalogue
      name: versions
    fieldref: images.app
  target:
    objref:
      kind: Deployment
    fieldrefs:
    - spec.template.spec.containers[name=app].image
- source:
    objref:
      kind: VariableCatalogue
      name: versions
    fieldref: proxy
  target:
    objref:
      kind: Deployment
      namespace: ns-[0-4]
    fieldrefs:
    - spec.template.spec.containers[name=app].env[name=HTTP_PROXY].value%PROXY%
    - metadata.labels.proxied
`

// BenchmarkReplacementTransformer1000 runs two replacements (three field
// refs, one a %PATTERN%) over 1,000 Deployments.
func BenchmarkReplacementTransformer1000(b *testing.B) {
	cfg := yaml.MustParse(benchConfig)
	base := benchItems(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		items := make([]*yaml.RNode, len(base))
		for i, it := range base {
			items[i] = it.Copy()
		}
		b.StartTimer()
		out, err := Run(cfg, items)
		if err != nil {
			b.Fatal(err)
		}
		if len(out) != 1001 {
			b.Fatalf("%d items", len(out))
		}
	}
	b.StopTimer()
	s := benchItems(b, 10)
	out, err := Run(cfg, s)
	if err != nil {
		b.Fatal(err)
	}
	if y := out[1].MustString(); !strings.Contains(y, "app:v2") || !strings.Contains(y, "proxy.example.com") {
		b.Fatalf("benchmark replacements did not apply:\n%s", y)
	}
}

// BenchmarkBuildWithFunctions builds a kustomization of 200 Deployments
// (in a base), a catalogue, a Templater generator and a directory of two
// ReplacementTransformers with a builtin label transformer between them:
// a build with functions from end to end.
func BenchmarkBuildWithFunctions(b *testing.B) {
	dir := b.TempDir()
	var deploys strings.Builder
	for i := range 200 {
		fmt.Fprintf(&deploys, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-%d\nspec:\n  template:\n    spec:\n"+
			"      containers:\n      - name: app\n        image: registry.example.com/app:v1\n", i)
	}
	files := map[string]string{
		"base/kustomization.yaml": "resources: [deploys.yaml]\n",
		"base/deploys.yaml":       deploys.String(),
		"site/kustomization.yaml": "resources: [../base, catalogue.yaml]\ngenerators: [pages.yaml]\ntransformers: [fns]\n",
		"site/catalogue.yaml":     "apiVersion: airshipit.org/v1alpha1\nkind: VariableCatalogue\nmetadata:\n  name: versions\nimages:\n  app: registry.example.com/app:v2\n",
		"site/pages.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: Templater\nmetadata:\n  name: pages\nvalues:\n  pages: [a, b, c]\n" +
			"template: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: pages\n  data:\n  {{- range .pages }}\n    {{ . }}: page\n  {{- end }}\n",
		"site/fns/kustomization.yaml": "resources: [image.yaml, label.yaml, proxy.yaml]\n",
		"site/fns/image.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: ReplacementTransformer\nmetadata:\n  name: image\nreplacements:\n" +
			"- source: {objref: {kind: VariableCatalogue, name: versions}, fieldref: images.app}\n" +
			"  target: {objref: {kind: Deployment}, fieldrefs: ['spec.template.spec.containers[name=app].image']}\n",
		"site/fns/label.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: site\nlabels: {site: s1}\nfieldSpecs:\n- {path: metadata/labels, create: true}\n",
		"site/fns/proxy.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: ReplacementTransformer\nmetadata:\n  name: proxy\nreplacements:\n" +
			"- source: {value: proxy.example.com}\n  target: {objref: {kind: Deployment}, fieldrefs: [metadata.annotations.proxy]}\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	root := filepath.Join(dir, "site")
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	b.ReportAllocs()
	for b.Loop() {
		m, err := (&Runner{}).Build(filesys.MakeFsOnDisk(), root, opts)
		if err != nil {
			b.Fatal(err)
		}
		if m.Size() != 202 {
			b.Fatalf("%d documents", m.Size())
		}
	}
}
