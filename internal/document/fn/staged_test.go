package fn

import (
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// noopFunction is a built-in function config that changes nothing.
const noopFunction = "apiVersion: airshipit.org/v1alpha1\nkind: ReplacementTransformer\nmetadata:\n  name: noop\nreplacements: []\n"

// stagedTree exercises what a build keeps from one step to the next:
// hash suffixes of generated ConfigMaps (computed once, at the end, from
// the final content), name references to renamed objects (a prefix in a
// base, a Deployment referring to the base's ConfigMap), local-config
// documents (dropped only at the end), namespaces, labels, patches,
// generator merge behaviour and the legacy sort.
var stagedTree = map[string]string{
	"base/kustomization.yaml": "namePrefix: base-\nresources: [deploy.yaml, catalogue.yaml]\n" +
		"configMapGenerator:\n- name: settings\n  literals: [a=1]\n",
	"base/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n" +
		"      containers:\n      - name: web\n        image: web:v1\n        envFrom:\n        - configMapRef: {name: settings}\n" +
		"      volumes:\n      - name: cfg\n        configMap: {name: settings}\n",
	"base/catalogue.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: VariableCatalogue\nmetadata:\n  name: values\n" +
		"  annotations:\n    config.kubernetes.io/local-config: \"true\"\nimage: web:v2\n",
	"site/kustomization.yaml": "namespace: prod\nlabels:\n- pairs: {site: s1}\n  includeSelectors: true\nresources: [../base, svc.yaml]\n" +
		"configMapGenerator:\n- name: settings\n  behavior: merge\n  literals: [b=2]\n" +
		"patches:\n- target: {kind: Deployment}\n  patch: |-\n    - op: add\n      path: /spec/replicas\n      value: 3\n" +
		"TRANSFORMERS",
	"site/svc.yaml":         "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector: {app: web}\n",
	"site/fns/noop.yaml":    noopFunction,
	"site/fns/label.yaml":   "apiVersion: builtin\nkind: LabelTransformer\nmetadata:\n  name: tier\nlabels: {tier: front}\nfieldSpecs:\n- {path: metadata/labels, create: true}\n",
	"site/fns/prefix.yaml":  "apiVersion: builtin\nkind: PrefixSuffixTransformer\nmetadata:\n  name: pre\nprefix: site-\nfieldSpecs:\n- {path: metadata/name}\n",
	"site/gen/noop.yaml":    noopFunction,
	"site/fns/replace.yaml": "apiVersion: builtin\nkind: ReplacementTransformer\nmetadata:\n  name: image\nreplacements:\n- source: {kind: VariableCatalogue, fieldPath: image}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.template.spec.containers.0.image]\n",
}

// TestStagedBuildMatchesKustomize builds a tree with a built-in function
// that changes nothing placed among its transformers or generators: the
// staged build must give exactly what kustomize gives without the
// function, so staging loses nothing kustomize carries from one step to
// the next.
func TestStagedBuildMatchesKustomize(t *testing.T) {
	tests := []struct {
		name string
		// with and without are the site's plugin fields.
		with, without string
	}{
		{name: "function first", with: "transformers: [fns/noop.yaml, fns/replace.yaml, fns/label.yaml, fns/prefix.yaml]\n",
			without: "transformers: [fns/replace.yaml, fns/label.yaml, fns/prefix.yaml]\n"},
		{name: "function between builtins", with: "transformers: [fns/replace.yaml, fns/noop.yaml, fns/label.yaml, fns/noop.yaml, fns/prefix.yaml]\n",
			without: "transformers: [fns/replace.yaml, fns/label.yaml, fns/prefix.yaml]\n"},
		{name: "function last", with: "transformers: [fns/replace.yaml, fns/label.yaml, fns/prefix.yaml, fns/noop.yaml]\n",
			without: "transformers: [fns/replace.yaml, fns/label.yaml, fns/prefix.yaml]\n"},
		{name: "function as a generator", with: "generators: [gen/noop.yaml]\ntransformers: [fns/replace.yaml, fns/label.yaml, fns/prefix.yaml]\n",
			without: "transformers: [fns/replace.yaml, fns/label.yaml, fns/prefix.yaml]\n"},
		{name: "function in a transformer directory", with: "transformers: [fns/replace.yaml, dir, fns/prefix.yaml]\n",
			without: "transformers: [fns/replace.yaml, fns/label.yaml, fns/prefix.yaml]\n"},
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	opts.Reorder = krusty.ReorderOptionLegacy
	build := func(t *testing.T, plugins string, staged bool) string {
		t.Helper()
		dir := t.TempDir()
		files := map[string]string{
			"site/dir/kustomization.yaml": "resources: [../fns/noop.yaml, ../fns/label.yaml, noop2.yaml]\n",
			"site/dir/noop2.yaml":         strings.Replace(noopFunction, "name: noop", "name: noop2", 1),
		}
		for k, v := range stagedTree {
			files[k] = strings.ReplaceAll(v, "TRANSFORMERS", plugins)
		}
		writeTree(t, dir, files)
		root := filepath.Join(dir, "site")
		var y []byte
		if staged {
			m, err := (&Runner{}).Build(filesys.MakeFsOnDisk(), root, opts)
			if err != nil {
				t.Fatal(err)
			}
			if y, err = m.AsYaml(); err != nil {
				t.Fatal(err)
			}
		} else {
			m, err := krusty.MakeKustomizer(KrustyOptions(opts)).Run(filesys.MakeFsOnDisk(), root)
			if err != nil {
				t.Fatal(err)
			}
			if y, err = m.AsYaml(); err != nil {
				t.Fatal(err)
			}
		}
		return string(y)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := build(t, tc.without, false)
			got := build(t, tc.with, true)
			if got != want {
				t.Errorf("staged build differs from kustomize's:\n--- staged\n%s\n--- kustomize\n%s", got, want)
			}
			// The fixture exercises what it says it does.
			for _, w := range []string{"name: site-base-settings-", "namespace: prod", "image: web:v2", "tier: front", "replicas: 3"} {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "VariableCatalogue") {
				t.Errorf("the local-config catalogue reached the output:\n%s", got)
			}
		})
	}
}
