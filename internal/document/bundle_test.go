package document

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

var update = flag.Bool("update", false, "rewrite golden files from the actual output")

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func TestBuildGolden(t *testing.T) {
	tests := []struct {
		name     string
		root     string
		selector Selector
	}{
		{"overlay", "testdata/build/overlay", Selector{}},
		{"overlay-deployments", "testdata/build/overlay", Selector{Kind: "Deployment"}},
		{"overlay-label-site", "testdata/build/overlay", Selector{LabelSelector: "app=web"}},
		{"overlay-annotation", "testdata/build/overlay", Selector{AnnotationSelector: "tier=front"}},
		{"overlay-core-group", "testdata/build/overlay", Selector{Version: "v1", Namespace: "demo"}},
		{"plain-file", "testdata/build/plain/docs.yaml", Selector{Name: "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Build(tt.root, BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := b.Filter(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.YAML()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata/golden", tt.name+".yaml"), got)
		})
	}
}

func TestDocumentsKnowTheirFiles(t *testing.T) {
	b, err := Build("testdata/build/overlay", BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Deployment/demo/web": "../base/deployment.yaml",
		"Service/demo/web":    "service.yaml",
		"Namespace/demo":      "../base/namespace.yaml",
	}
	for _, d := range b.Documents() {
		id := strings.SplitN(d.ID(), " ", 2)[0]
		if w, ok := want[id]; ok && d.Source() != w {
			t.Errorf("%s: source %q, want %q", id, d.Source(), w)
		}
		if _, ok := d.Annotations()[originAnnotation]; ok {
			t.Errorf("%s: origin annotation leaked into output", id)
		}
	}
	cm, err := b.SelectOne(Selector{Kind: "ConfigMap"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Source(), "kustomization.yaml") {
		t.Errorf("generated ConfigMap source %q, want the kustomization that generated it", cm.Source())
	}
}

func TestDeployable(t *testing.T) {
	b, err := Build("testdata/build/base", BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := b.Len()
	dep := b.Deployable()
	if dep.Len() != all-1 {
		t.Fatalf("deployable %d of %d, want one fewer", dep.Len(), all)
	}
	if _, err := dep.SelectOne(Selector{Kind: "KubernetesApply"}); err == nil {
		t.Error("executor document labelled deploy-k8s=false is still deployable")
	}
}

func TestSelectOneErrors(t *testing.T) {
	b, err := Build("testdata/build/overlay", BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		sel      Selector
		contains []string
		target   any
	}{
		{"missing name lists same kind", Selector{Kind: "Deployment", Name: "api"},
			[]string{"kind=Deployment name=api", "Deployment/demo/web"}, new(*NotFoundError)},
		{"missing kind lists kinds", Selector{Kind: "Secret"},
			[]string{"kind=Secret", "kinds present", "ConfigMap", "Deployment"}, new(*NotFoundError)},
		{"ambiguous", Selector{Name: "web"},
			[]string{"2 documents match", "Service/demo/web", "Deployment/demo/web"}, new(*AmbiguousError)},
		{"bad label selector", Selector{LabelSelector: "a in (b"}, []string{"label selector"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.SelectOne(tt.sel)
			if err == nil {
				t.Fatal("want error")
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q lacks %q", err, c)
				}
			}
			if tt.target != nil && !errors.As(err, tt.target) {
				t.Errorf("error %T is not %T", err, tt.target)
			}
		})
	}
}

func TestBuildBadInput(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		root     string
		contains []string
	}{
		{"missing root", nil, "/site/none", []string{"/site/none", "does not exist"}},
		{"no kustomization", map[string]string{"/site/a.yaml": "kind: X"}, "/site", []string{"no kustomization file"}},
		{"malformed yaml", map[string]string{
			"/site/kustomization.yaml": "resources: [a.yaml]",
			"/site/a.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n",
		}, "/site", []string{"/site", "a.yaml"}},
		{"document without kind", map[string]string{
			"/site/kustomization.yaml": "resources: [a.yaml]",
			"/site/a.yaml":             "apiVersion: v1\nmetadata:\n  name: x\n",
		}, "/site", []string{"a.yaml", "kind"}},
		{"duplicate ids", map[string]string{
			"/site/kustomization.yaml": "resources: [a.yaml, b.yaml]",
			"/site/a.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
			"/site/b.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		}, "/site", []string{"ConfigMap", "x", "b.yaml"}},
		{"missing resource", map[string]string{
			"/site/kustomization.yaml": "resources: [gone.yaml]",
		}, "/site", []string{"gone.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := filesys.MakeFsInMemory()
			for p, c := range tt.files {
				if err := fs.WriteFile(p, []byte(c)); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Build(tt.root, BuildOptions{FS: fs})
			if err == nil {
				t.Fatal("want error")
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q lacks %q", err, c)
				}
			}
		})
	}
}

func TestFromYAMLReportsEveryDocumentWithoutIdentity(t *testing.T) {
	_, err := FromYAML("docs.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\nkind: X\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Y\n"))
	if err == nil {
		t.Fatal("want error")
	}
	for _, c := range []string{"document 2", "apiVersion", "document 3", "metadata.name", "docs.yaml"} {
		if !strings.Contains(err.Error(), c) {
			t.Errorf("error %q lacks %q", err, c)
		}
	}
}

func TestFromYAMLRefusesMetadataThatIsNotAMap(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"metadata list (fuzz finding)", "a: b\nmetadata: [{}]\n", "document 1: metadata is a list, not an object"},
		{"metadata scalar", "apiVersion: v1\nkind: K\nmetadata: x\n", "metadata is a scalar"},
		{"labels list", "apiVersion: v1\nkind: K\nmetadata: {name: n, labels: [a, b, c]}\n", "metadata.labels is a list"},
		{"annotations scalar", "apiVersion: v1\nkind: K\nmetadata: {name: n, annotations: x}\n", "metadata.annotations is a scalar"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromYAML("docs.yaml", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "docs.yaml") {
				t.Fatalf("err = %v, want one naming docs.yaml and %q", err, tc.want)
			}
		})
	}
	// Empty labels and a null metadata are not shape errors.
	if _, err := FromYAML("ok.yaml", []byte("apiVersion: v1\nkind: K\nmetadata: {name: n, labels: }\n")); err != nil {
		t.Fatalf("empty labels: %v", err)
	}
}

func TestCacheHitsUntilAFileChanges(t *testing.T) {
	fs := filesys.MakeFsInMemory()
	write := func(p, c string) {
		if err := fs.WriteFile(p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	write("/site/kustomization.yaml", "resources: [../shared/cm.yaml]\nnamePrefix: x-\n")
	write("/shared/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v1\n")
	cache := &Cache{Dir: t.TempDir(), Salt: "test"}
	build := func() string {
		b, err := Build("/site", BuildOptions{FS: fs, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.YAML()
		if err != nil {
			t.Fatal(err)
		}
		return string(y)
	}
	first := build()
	if got := build(); got != first {
		t.Fatalf("cached build differs:\n%s\nvs\n%s", got, first)
	}
	if h, m := cache.Stats(); h != 1 || m != 1 {
		t.Fatalf("hits=%d misses=%d, want 1 and 1", h, m)
	}
	// A file outside the root that the build read changes: rebuild.
	write("/shared/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v2\n")
	if got := build(); !strings.Contains(got, "k: v2") {
		t.Fatalf("stale cache entry served:\n%s", got)
	}
	// A new process (fresh memory) is served from disk.
	disk := &Cache{Dir: cache.Dir, Salt: "test"}
	b, err := Build("/site", BuildOptions{FS: fs, Cache: disk})
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := disk.Stats(); h != 1 {
		t.Fatalf("disk cache not used")
	}
	if d, err := b.SelectOne(Selector{Kind: "ConfigMap"}); err != nil || d.Source() == "" {
		t.Fatalf("document from disk cache lost its source: %v", err)
	}
	// Another salt (another program version) never trusts the entry.
	other := &Cache{Dir: cache.Dir, Salt: "other"}
	if _, err := Build("/site", BuildOptions{FS: fs, Cache: other}); err != nil {
		t.Fatal(err)
	}
	if h, _ := other.Stats(); h != 0 {
		t.Fatal("entry of another salt was trusted")
	}
}

func FuzzFromYAML(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"))
	f.Add([]byte("---\n---\nkind: [\n"))
	f.Add([]byte("a: &x 1\nb: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := FromYAML("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, d := range b.Documents() {
			if d.Kind() == "" || d.Name() == "" || d.APIVersion() == "" {
				t.Fatalf("accepted a document without identity: %q", data)
			}
		}
		if _, err := b.YAML(); err != nil {
			t.Fatalf("accepted documents cannot be written back: %v", err)
		}
	})
}
