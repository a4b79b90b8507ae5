package fn

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// These tests run krusty for real on the trees under testdata/kustomize,
// the functions in process.

func buildTree(t *testing.T, name string) (resmap.ResMap, error) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("testdata", "kustomize", name, "input"))
	if err != nil {
		t.Fatal(err)
	}
	return (&Runner{}).Build(filesys.MakeFsOnDisk(), root, nil)
}

func TestKustomizeGolden(t *testing.T) {
	for _, name := range []string{"replacement", "templater", "inline", "unannotated", "generator-echo", "patch-path-annotation", "upstream-replacements"} {
		t.Run(name, func(t *testing.T) {
			m, err := buildTree(t, name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.AsYaml()
			if err != nil {
				t.Fatal(err)
			}
			exp := filepath.Join("testdata", "kustomize", name, "expected.yaml")
			if *update {
				if err := os.WriteFile(exp, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(exp)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("build differs from %s:\n--- got\n%s\n--- want\n%s", exp, got, want)
			}
		})
	}
}

func TestKustomizeTemplaterPKI(t *testing.T) {
	m, err := buildTree(t, "templater-pki")
	if err != nil {
		t.Fatal(err)
	}
	if m.Size() != 1 {
		t.Fatalf("%d resources, want the Secret only", m.Size())
	}
	secret := m.Resources()[0]
	data := secret.GetDataMap()
	pemOf := func(k string) []byte {
		b, err := decodeB64(data[k])
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return b
	}
	caBlock, _ := pem.Decode(pemOf("ca.crt"))
	adminBlock, _ := pem.Decode(pemOf("admin.crt"))
	if caBlock == nil || adminBlock == nil {
		t.Fatal("certificates are not PEM")
	}
	ca, err := x509.ParseCertificate(caBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := x509.ParseCertificate(adminBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := admin.Verify(x509.VerifyOptions{Roots: pool, DNSName: "api.example.com", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		t.Errorf("admin certificate does not verify: %v", err)
	}
	if _, err := parseKeyPEM(string(pemOf("admin.key"))); err != nil {
		t.Errorf("admin key: %v", err)
	}
	if _, _, _, _, err := ssh.ParseAuthorizedKey(pemOf("ssh.pub")); err != nil {
		t.Errorf("ssh public key: %v", err)
	}
}

func TestKustomizeFunctionErrors(t *testing.T) {
	tests := []struct {
		tree string
		want []string
	}{
		{tree: "unknown-function", want: []string{"Setter/set-image", "gcr.io/kpt-fn/apply-setters:v0.2", "not supported"}},
		{tree: "exec-function", want: []string{"Script/touch-marker", "exec:/bin/touch", "not supported"}},
		{tree: "legacy-plugin", want: []string{"ChartInflator/inflate", "legacy.yaml", "kustomize exec/Go plugin", "not supported"}},
		{tree: "missing-target", want: []string{"ReplacementTransformer/region", "replacement.yaml", "no document matches objref kind=Deployment name=web", "v1 ConfigMap/settings"}},
	}
	for _, tc := range tests {
		t.Run(tc.tree, func(t *testing.T) {
			_, err := buildTree(t, tc.tree)
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	marker := filepath.Join("testdata", "kustomize", "exec-function", "input", "MARKER")
	if _, err := os.Stat(marker); err == nil {
		t.Error("the exec function in the tree was run")
		if err := os.Remove(marker); err != nil {
			t.Error(err)
		}
	}
}

// Functions run in process, so a tree that exists only in memory builds.
func TestKustomizeInMemoryTree(t *testing.T) {
	mem := filesys.MakeFsInMemory()
	files := map[string]string{
		"/no/such/site/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [r.yaml]\n",
		"/no/such/site/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"/no/such/site/r.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: ReplacementTransformer\nmetadata: {name: r}\n" +
			"replacements:\n- source: {value: x}\n  target: {objref: {kind: ConfigMap}, fieldrefs: [data.a]}\n",
	}
	for p, c := range files {
		if err := mem.WriteFile(p, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := (&Runner{}).Build(mem, "/no/such/site", nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := m.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "a: x") {
		t.Errorf("replacement not applied:\n%s", y)
	}
}
