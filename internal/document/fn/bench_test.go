package fn

import (
	"fmt"
	"strings"
	"testing"

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
