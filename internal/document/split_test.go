package document

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/airshipit/airship-go/internal/document/fn"
)

// smallSplits makes roots of a few documents split into parts of a few.
func smallSplits(t *testing.T) {
	t.Helper()
	saved := splitTuning
	splitTuning.minDocs, splitTuning.partDocs = 6, 6
	t.Cleanup(func() { splitTuning = saved })
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func splitOptions() *krusty.Options {
	o := krusty.MakeDefaultOptions()
	o.Reorder = krusty.ReorderOptionLegacy
	o.LoadRestrictions = types.LoadRestrictionsNone
	return fn.KrustyOptions(o)
}

func stream(t *testing.T, res []*resource.Resource) string {
	t.Helper()
	var b strings.Builder
	for _, r := range res {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.String()
}

// buildBoth builds root split and whole, through the recording file
// system Build uses (so both carry origin annotations).
func buildBoth(t *testing.T, root string) (split string, splitOK bool, plain string, plainErr error) {
	t.Helper()
	res, _, ok, _ := splitBuild(newRecordingFS(filesys.MakeFsOnDisk()), root, splitOptions(), &fn.Runner{})
	if ok {
		split = stream(t, res)
	}
	whole, _, err := buildPlain(newRecordingFS(filesys.MakeFsOnDisk()), root, splitOptions(), &fn.Runner{})
	if err == nil {
		plain = stream(t, whole)
	}
	return split, ok, plain, err
}

// objects writes n objects that reference each other: ConfigMaps,
// Deployments that name a ConfigMap (envFrom, a volume) and a
// ServiceAccount, Services, ServiceAccounts and RoleBindings naming them.
func objects(n int, ns func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("---\n")
		space := ns(i)
		meta := fmt.Sprintf("metadata:\n  name: %%s\n  namespace: %s\n", space)
		if space == "" {
			meta = "metadata:\n  name: %s\n"
		}
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\n"+meta+"data:\n  k: v%d\n", fmt.Sprintf("cm-%d", i), i)
		case 1:
			fmt.Fprintf(&b, "apiVersion: apps/v1\nkind: Deployment\n"+meta+`spec:
  selector:
    matchLabels: {app: app-%d}
  template:
    metadata:
      labels: {app: app-%d}
    spec:
      serviceAccountName: sa-%d
      containers:
      - name: main
        image: registry.invalid/app:v1
        envFrom:
        - configMapRef: {name: cm-%d}
      volumes:
      - name: config
        configMap: {name: cm-%d}
`, fmt.Sprintf("app-%d", i), i, i, i+2, i-1, i-1)
		case 2:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\n"+meta+"spec:\n  selector: {app: app-%d}\n  ports:\n  - port: 80\n", fmt.Sprintf("svc-%d", i), i-1)
		case 3:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ServiceAccount\n"+meta, fmt.Sprintf("sa-%d", i))
		case 4:
			fmt.Fprintf(&b, "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\n"+meta+`roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
subjects:
- kind: ServiceAccount
  name: sa-%d
`, fmt.Sprintf("rb-%d", i), i-1)
			if s := ns(i - 1); s != "" {
				fmt.Fprintf(&b, "  namespace: %s\n", s)
			}
		}
	}
	return b.String()
}

func TestSplitBuildMatchesPlainBuild(t *testing.T) {
	smallSplits(t)
	inNs := func(i int) string { return fmt.Sprintf("ns-%d", i%3) }
	noNs := func(int) string { return "" }
	tests := []struct {
		name  string
		files map[string]string
	}{{
		name: "labels and a JSON patch",
		files: map[string]string{
			"objects.yaml": objects(40, inNs),
			"kustomization.yaml": `resources: [objects.yaml]
labels:
- pairs: {airshipit.org/site: test}
  includeSelectors: true
commonAnnotations: {airshipit.org/by: test}
patches:
- target: {kind: Deployment}
  patch: |
    - op: add
      path: /spec/replicas
      value: 2
`,
		},
	}, {
		name: "name prefix and suffix with cross references, namespace, images",
		files: map[string]string{
			"objects.yaml": objects(40, noNs),
			"kustomization.yaml": `resources: [objects.yaml]
namePrefix: site-
nameSuffix: -v1
namespace: airship
images:
- name: registry.invalid/app
  newTag: v2
`,
		},
	}, {
		name: "replacements inline and from a file, their source a local config",
		files: map[string]string{
			"objects.yaml": objects(30, inNs),
			"catalogue.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: versions
  annotations: {config.kubernetes.io/local-config: "true"}
data:
  app: registry.invalid/app:v3
  proxy: proxy.invalid
`,
			"more.yaml": `---
# comments and empty documents around objects
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  proxy: PROXY
---
`,
			"replacements.yaml": `- source: {kind: ConfigMap, name: versions, fieldPath: data.proxy}
  targets:
  - select: {kind: ConfigMap, name: settings}
    fieldPaths: [data.proxy]
`,
			"kustomization.yaml": `resources: [catalogue.yaml, objects.yaml, more.yaml]
namePrefix: p-
replacements:
- source: {kind: ConfigMap, name: versions, fieldPath: data.app}
  targets:
  - select: {kind: Deployment}
    reject: [{name: app-1}]
    fieldPaths:
    - spec.template.spec.containers.[name=main].image
- path: replacements.yaml
`,
		},
	}, {
		name: "a replacement whose source is built too",
		files: map[string]string{
			"objects.yaml": objects(30, noNs),
			"kustomization.yaml": `resources: [objects.yaml]
namePrefix: p-
replacements:
- source: {kind: ConfigMap, name: cm-0, fieldPath: data.k}
  targets:
  - select: {kind: ConfigMap}
    reject: [{name: cm-0}]
    fieldPaths: [data.copy]
    options: {create: true}
`,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			split, ok, plain, err := buildBoth(t, root)
			if err != nil {
				t.Fatalf("plain build: %v", err)
			}
			if !ok {
				_, why := planSplit(filesys.MakeFsOnDisk(), root, nil)
				t.Fatalf("the root was not split (%s)", why)
			}
			if split != plain {
				t.Errorf("split build differs from the plain one:\nsplit:\n%s\nplain:\n%s", split, plain)
			}
			// Build, the caller, takes the split too and gives the
			// same documents.
			b, err := Build(root, BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := b.Len(), strings.Count(plain, "\n---\n")+1; got != want {
				t.Errorf("Build gave %d documents, want %d", got, want)
			}
		})
	}
}

func TestSplitBuildFallsBack(t *testing.T) {
	smallSplits(t)
	noNs := func(int) string { return "" }
	tests := []struct {
		name string
		// why is the reason planSplit gives; "" when the plan is made
		// and a check after the parts discards it.
		why   string
		files map[string]string
		// wantErr is part of the plain build's error, when it fails.
		wantErr string
	}{{
		name: "a generator",
		why:  "field configMapGenerator",
		files: map[string]string{"objects.yaml": objects(20, noNs), "kustomization.yaml": `resources: [objects.yaml]
configMapGenerator:
- name: generated
  literals: [a=b]
`},
	}, {
		name: "a patch without a target",
		why:  "a patch without a target",
		files: map[string]string{"objects.yaml": objects(20, noNs), "kustomization.yaml": `resources: [objects.yaml]
patches:
- patch: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: cm-0}
    data: {k: patched}
`},
	}, {
		name: "a resource directory",
		why:  "a resource that is not a file",
		files: map[string]string{"base/objects.yaml": objects(20, noNs), "base/kustomization.yaml": "resources: [objects.yaml]\n",
			"kustomization.yaml": "resources: [base]\n"},
	}, {
		name:  "too few documents",
		why:   "too few documents",
		files: map[string]string{"objects.yaml": objects(5, noNs), "kustomization.yaml": "resources: [objects.yaml]\n"},
	}, {
		name: "a list",
		why:  "a document without kind or metadata, or a list",
		files: map[string]string{"objects.yaml": objects(20, noNs) + "---\napiVersion: v1\nkind: ConfigMapList\nmetadata: {name: l}\nitems: []\n",
			"kustomization.yaml": "resources: [objects.yaml]\n"},
	}, {
		name: "one identity twice",
		why:  "two resources with one identity",
		files: map[string]string{"objects.yaml": objects(20, noNs), "again.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-0, namespace: default}\n",
			"kustomization.yaml": "resources: [objects.yaml, again.yaml]\n"},
		wantErr: "already registered id",
	}, {
		name: "a replacement that may read any resource",
		why:  "a replacement whose source may be any resource",
		files: map[string]string{"objects.yaml": objects(20, noNs), "kustomization.yaml": `resources: [objects.yaml]
replacements:
- source: {fieldPath: metadata.name}
  targets: [{select: {kind: ConfigMap}, fieldPaths: [data.k]}]
`},
		wantErr: "multiple matches",
	}, {
		name: "a patch that fails on one part",
		files: map[string]string{"objects.yaml": objects(20, noNs), "kustomization.yaml": `resources: [objects.yaml]
patches:
- target: {kind: ConfigMap, name: cm-10}
  patch: |
    - op: test
      path: /data/k
      value: not this
`},
		wantErr: "testing value /data/k failed",
	}, {
		name: "a namespace that makes two identities one",
		files: map[string]string{"objects.yaml": objects(20, noNs) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-0, namespace: other}\n",
			"kustomization.yaml": "resources: [objects.yaml]\nnamespace: airship\n"},
		wantErr: "ID conflict",
	}, {
		name: "a label that makes an object local",
		files: map[string]string{"objects.yaml": objects(20, noNs), "kustomization.yaml": `resources: [objects.yaml]
patches:
- target: {kind: Service}
  patch: |
    - op: add
      path: /metadata/annotations
      value: {config.kubernetes.io/local-config: "true"}
`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := writeTree(t, tc.files)
			_, why := planSplit(newRecordingFS(filesys.MakeFsOnDisk()), root, nil)
			if why != tc.why {
				t.Fatalf("planSplit says %q, want %q", why, tc.why)
			}
			_, ok, plain, plainErr := buildBoth(t, root)
			if ok {
				t.Fatal("the split build was taken")
			}
			b, err := Build(root, BuildOptions{})
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Build: %v, want an error with %q", err, tc.wantErr)
				}
				if plainErr == nil {
					t.Fatal("the plain build succeeded")
				}
			case err != nil:
				t.Fatal(err)
			default:
				if got, want := b.Len(), strings.Count(plain, "\n---\n")+1; got != want {
					t.Errorf("Build gave %d documents, want %d", got, want)
				}
			}
		})
	}
}

// TestSplitBuildRandomTrees builds random trees of objects referencing
// each other, split and whole: wherever the split is taken it must give
// the plain build's output, and it must never succeed where the plain
// build fails.
func TestSplitBuildRandomTrees(t *testing.T) {
	smallSplits(t)
	taken := 0
	const trees = 100
	for seed := range trees {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		n := 8 + r.IntN(40)
		namespaces := []string{"", "default", "a", "b"}
		ns := func(int) string { return namespaces[r.IntN(len(namespaces))] }
		k := "resources: [objects.yaml]\n"
		if r.IntN(2) == 0 {
			k += "namePrefix: pre-\n"
		}
		if r.IntN(3) == 0 {
			k += "nameSuffix: -suf\n"
		}
		if r.IntN(3) == 0 {
			k += "namespace: site\n"
		}
		if r.IntN(2) == 0 {
			k += fmt.Sprintf(`replacements:
- source: {kind: ConfigMap, name: cm-%d, fieldPath: data.k}
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.template.metadata.labels.copied]
    options: {create: true}
`, 5*r.IntN(n/5+1))
		}
		root := writeTree(t, map[string]string{"objects.yaml": objects(n, ns), "kustomization.yaml": k})
		split, ok, plain, err := buildBoth(t, root)
		if !ok {
			continue
		}
		taken++
		if err != nil {
			t.Errorf("seed %d: the split build succeeded where the plain one fails: %v", seed, err)
			continue
		}
		if split != plain {
			t.Errorf("seed %d: split build differs from the plain one:\nsplit:\n%s\nplain:\n%s", seed, split, plain)
		}
	}
	t.Logf("the split build was taken for %d trees of %d", taken, trees)
	if taken < trees/2 {
		t.Errorf("the split build was taken for %d trees of %d", taken, trees)
	}
}

func TestSplitStream(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{"a: 1\n", []string{"a: 1\n"}, true},
		{"---\na: 1\n---\nb: 2", []string{"a: 1\n", "b: 2"}, true},
		{"a: 1\n--- # next\nb: 2\n---\n", []string{"a: 1\n", "b: 2\n"}, true},
		{"a: |\n  ---\n  x\n", []string{"a: |\n  ---\n  x\n"}, true},
		{"a: 1\n----\n", []string{"a: 1\n----\n"}, true},
		{"a: 1\n--- {b: 2}\n", nil, false},
		{"%YAML 1.2\n---\na: 1\n", nil, false},
		{"a: 1\n...\n", nil, false},
	}
	for _, tc := range tests {
		got, ok := splitStream([]byte(tc.in))
		if ok != tc.ok {
			t.Errorf("%q: ok %v, want %v", tc.in, ok, tc.ok)
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, string(p))
		}
		if fmt.Sprint(s) != fmt.Sprint(tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, s, tc.want)
		}
	}
}

func TestLegacyKeyOrdersAsKustomize(t *testing.T) {
	// The plain build of these objects, listed in reverse, is in
	// kustomize's legacy order; the keys must give the same.
	var b bytes.Buffer
	kinds := []string{"ValidatingWebhookConfiguration", "Widget", "Deployment", "Service", "ConfigMap", "Namespace", "CustomResourceDefinition"}
	for i, k := range kinds {
		for j, ns := range []string{"b", "a", ""} {
			api := "v1"
			if k == "Widget" {
				api = "example.com/v1"
			}
			fmt.Fprintf(&b, "---\napiVersion: %s\nkind: %s\nmetadata: {name: o-%d-%d, namespace: %q}\n", api, k, i, 2-j, ns)
		}
	}
	fmt.Fprintf(&b, "---\napiVersion: example.com/v1\nkind: Namespace\nmetadata: {name: x}\n")
	root := writeTree(t, map[string]string{"o.yaml": b.String(), "kustomization.yaml": "resources: [o.yaml]\n"})
	whole, _, err := buildPlain(filesys.MakeFsOnDisk(), root, splitOptions(), &fn.Runner{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(whole); i++ {
		a, c := newLegacyKey(whole[i-1].CurId()), newLegacyKey(whole[i].CurId())
		if !a.less(c) || c.less(a) {
			t.Errorf("kustomize puts %s before %s; the keys do not", whole[i-1].CurId(), whole[i].CurId())
		}
	}
}

// countingFS counts the reads of each file.
type countingFS struct {
	filesys.FileSystem
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingFS) ReadFile(path string) ([]byte, error) {
	c.mu.Lock()
	c.reads[filepath.Clean(path)]++
	c.mu.Unlock()
	return c.FileSystem.ReadFile(path)
}

// TestBuildReadsEachResourceFileOnce: the split reads the resource files,
// and neither its parts nor the plain build that follows a split it
// declines read them again.
func TestBuildReadsEachResourceFileOnce(t *testing.T) {
	smallSplits(t)
	noNs := func(int) string { return "" }
	for _, tc := range []struct {
		name  string
		n     int
		split bool
	}{
		{"split", 20, true},
		{"declined once read: too few documents", 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var more strings.Builder
			for i := range tc.n / 2 {
				fmt.Fprintf(&more, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra-%d}\n", i)
			}
			root := writeTree(t, map[string]string{"objects.yaml": objects(tc.n, noNs), "more.yaml": more.String(),
				"kustomization.yaml": "resources: [objects.yaml, more.yaml]\nnamePrefix: p-\n"})
			fs := &countingFS{FileSystem: filesys.MakeFsOnDisk(), reads: map[string]int{}}
			if _, why := planSplit(fs, root, nil); (why == "") != tc.split {
				t.Fatalf("planSplit says %q", why)
			}
			fs.reads = map[string]int{}
			b, err := Build(root, BuildOptions{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			if b.Len() != tc.n+tc.n/2 {
				t.Fatalf("built %d documents", b.Len())
			}
			for _, f := range []string{"objects.yaml", "more.yaml"} {
				if n := fs.reads[filepath.Join(root, f)]; n != 1 {
					t.Errorf("%s read %d times, want once", f, n)
				}
			}
		})
	}
}
