package document

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airshipit/airship-go/internal/document/fn"
	"github.com/airshipit/airship-go/internal/secret/sops"
	"github.com/airshipit/airship-go/internal/secret/sops/sopstest"
)

const clearSecret = "cache-must-never-see-this-0xC0FFEE"

// secretTree writes a site with two roots: secret/ decrypts a catalogue
// with the sops function (tolerating a missing key, so a build without a
// key succeeds and leaves it encrypted), plain/ has no function at all.
func secretTree(t *testing.T, recipient string) string {
	t.Helper()
	plain := "apiVersion: airshipit.org/v1alpha1\nkind: VariableCatalogue\nmetadata:\n  name: secrets\ndata:\n  password: " + clearSecret + "\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(plain), &doc); err != nil {
		t.Fatal(err)
	}
	if err := sops.Encrypt(&doc, &sops.Keyring{}, sops.EncryptOptions{Age: []string{recipient}, Rules: sops.Rules{EncryptedRegex: "^(data)$"}}); err != nil {
		t.Fatal(err)
	}
	enc, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(enc), clearSecret) {
		t.Fatal("fixture not encrypted")
	}
	dir := t.TempDir()
	files := map[string]string{
		"secret/kustomization.yaml": "resources:\n- secrets.yaml\ntransformers:\n- decrypt.yaml\n",
		"secret/secrets.yaml":       string(enc),
		"secret/decrypt.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: decrypt
  annotations:
    config.kubernetes.io/function: |
      container:
        image: gcr.io/kpt-fn-contrib/sops:v0.3.0
data:
  cmd: decrypt
  ignore-mac: "true"
  cmd-tolerate-failures: "true"
`,
		"plain/kustomization.yaml": "resources:\n- cm.yaml\n",
		"plain/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\ndata:\n  k: v\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func setKeyEnv(t *testing.T, ageKey string) {
	t.Helper()
	for _, name := range []string{sops.EnvImportAge, sops.EnvImportPGP, sops.EnvAgeKey, sops.EnvAgeKeyFile} {
		t.Setenv(name, "")
	}
	t.Setenv(sops.EnvImportAge, ageKey)
}

func buildYAML(t *testing.T, root string, opts BuildOptions) string {
	t.Helper()
	b, err := Build(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.YAML()
	if err != nil {
		t.Fatal(err)
	}
	return string(y)
}

// cacheFiles returns every file under dir with its content.
func cacheFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCacheNeverKeepsDecryptedSecrets(t *testing.T) {
	key := sopstest.NewAgeKey(t)
	site := secretTree(t, key.Recipient)
	cacheDir := t.TempDir()
	opts := func() BuildOptions {
		// A new Cache per build is a new process: only the disk carries over.
		return BuildOptions{Functions: &fn.Runner{}, Cache: &Cache{Dir: cacheDir, Salt: "test"}}
	}

	// No key: the tolerated failure leaves the catalogue encrypted.
	setKeyEnv(t, "")
	if got := buildYAML(t, filepath.Join(site, "secret"), opts()); strings.Contains(got, clearSecret) || !strings.Contains(got, "ENC[") {
		t.Fatalf("without a key the catalogue should stay encrypted:\n%s", got)
	}

	// The key exported: the next build decrypts, though no file changed.
	setKeyEnv(t, key.Identity)
	shared := opts()
	if got := buildYAML(t, filepath.Join(site, "secret"), shared); !strings.Contains(got, clearSecret) {
		t.Fatalf("with the key exported the build served a stale encrypted result:\n%s", got)
	}
	// Built again in the same process: not answered from memory either.
	if got := buildYAML(t, filepath.Join(site, "secret"), shared); !strings.Contains(got, clearSecret) {
		t.Fatalf("second build lost the decrypted value:\n%s", got)
	}
	if h, m := shared.Cache.Stats(); h != 0 || m != 2 {
		t.Errorf("secret builds: hits=%d misses=%d, want 0 and 2", h, m)
	}

	// A build without secrets is still cached, on disk, next to them.
	buildYAML(t, filepath.Join(site, "plain"), opts())
	again := opts()
	buildYAML(t, filepath.Join(site, "plain"), again)
	if h, _ := again.Cache.Stats(); h != 1 {
		t.Errorf("the plain root was not served from the disk cache")
	}

	files := cacheFiles(t, cacheDir)
	if len(files) != 1 {
		t.Errorf("cache holds %d files, want only the plain root's: %v", len(files), files)
	}
	for p, content := range files {
		if strings.Contains(content, clearSecret) {
			t.Errorf("%s holds the decrypted value", p)
		}
		if strings.Contains(content, "VariableCatalogue") {
			t.Errorf("%s holds the secret root's build", p)
		}
	}

	// The key taken away again: encrypted once more, nothing remembered.
	setKeyEnv(t, "")
	if got := buildYAML(t, filepath.Join(site, "secret"), opts()); strings.Contains(got, clearSecret) {
		t.Fatalf("with the key gone the decrypted value was still served:\n%s", got)
	}
}

// opaqueRunner cannot tell whether a build handled secrets.
type opaqueRunner struct{ r *fn.Runner }

func (o opaqueRunner) Build(fs filesys.FileSystem, path string, opts *krusty.Options) (resmap.ResMap, error) {
	return o.r.Build(fs, path, opts)
}

func TestCacheSkipsBuildsOfRunnersThatCannotTell(t *testing.T) {
	site := secretTree(t, sopstest.NewAgeKey(t).Recipient)
	cacheDir := t.TempDir()
	for _, runner := range []struct {
		name      string
		functions FunctionRunner
		want      int
	}{
		{"opaque runner", opaqueRunner{&fn.Runner{}}, 0},
		{"fn.Runner", &fn.Runner{}, 1},
	} {
		t.Run(runner.name, func(t *testing.T) {
			cache := &Cache{Dir: cacheDir, Salt: runner.name}
			buildYAML(t, filepath.Join(site, "plain"), BuildOptions{Functions: runner.functions, Cache: cache})
			buildYAML(t, filepath.Join(site, "plain"), BuildOptions{Functions: runner.functions, Cache: cache})
			if h, _ := cache.Stats(); h != runner.want {
				t.Errorf("hits=%d, want %d", h, runner.want)
			}
		})
	}
}
