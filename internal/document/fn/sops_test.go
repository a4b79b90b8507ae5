package fn

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airshipit/airship-go/internal/secret/sops"
	"github.com/airshipit/airship-go/internal/secret/sops/sopstest"
)

// Keys are generated per run; no private key is committed.

type testKeys struct {
	ageID, ageRecipient    string
	pgpFP, pgpPriv, pgpPub string
}

func newTestKeys(t testing.TB) testKeys {
	t.Helper()
	a, p := sopstest.NewAgeKey(t), sopstest.NewPGPKey(t, "sops test")
	return testKeys{ageID: a.Identity, ageRecipient: a.Recipient, pgpFP: p.Fingerprint, pgpPriv: p.Private, pgpPub: p.Public}
}

const (
	sopsSecret    = "s3cr3t-ca-key-material"
	sopsSecretTwo = "another-s3cr3t-ssh-key"
)

// catalogue is a VariableCatalogue with its fields in the order kustomize
// hands documents to functions (sorted), so that its MAC holds in a build.
func catalogue(name string) string {
	return `apiVersion: airshipit.org/v1alpha1
kind: VariableCatalogue
metadata:
  labels:
    airshipit.org/deploy-k8s: 'false'
  name: ` + name + `
secretGroups:
- name: targetK8sSecrets
  updated: '2021-10-08T20:17:33Z'
  values:
  - data: ` + sopsSecret + `
    name: caKey
  - data: ` + sopsSecretTwo + `
    name: privateKey
`
}

// encryptedCatalogue is catalogue(name) encrypted as upstream's test-site
// secrets are (encrypted-regex ^(data)$) for the given keys.
func encryptedCatalogue(t testing.TB, name string, k testKeys) string {
	t.Helper()
	return encryptYAML(t, catalogue(name), k)
}

func encryptYAML(t testing.TB, plain string, k testKeys) string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(plain), &doc); err != nil {
		t.Fatal(err)
	}
	var kr sops.Keyring
	if _, err := kr.ImportPGP([]byte(k.pgpPub), "test"); err != nil {
		t.Fatal(err)
	}
	if err := sops.Encrypt(&doc, &kr, sops.EncryptOptions{Age: []string{k.ageRecipient}, PGP: []string{k.pgpFP}, Rules: sops.Rules{EncryptedRegex: "^(data)$"}}); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), sopsSecret) {
		t.Fatal("fixture not encrypted")
	}
	return string(b)
}

func TestBuiltinImage(t *testing.T) {
	for _, tc := range []struct{ image, want string }{
		{"gcr.io/kpt-fn-contrib/sops:v0.3.0", BuiltinSops},
		{"gcr.io/kpt-fn-contrib/sops", BuiltinSops},
		{"gcr.io/kpt-fn-contrib/sops@sha256:0123", BuiltinSops},
		{"mirror.example:5000/kpt-fn-contrib/sops:unstable", BuiltinSops},
		{"localhost/templater", BuiltinTemplater},
		{"quay.io/airshipit/templater:latest", BuiltinTemplater},
		{"quay.io/airshipit/replacement-transformer:v2", BuiltinReplacementTransformer},
		{"gcr.io/kpt-fn/set-labels:v0.1", ""},
		{"example.com/sops", ""},
		{"", ""},
	} {
		got, ok := BuiltinImage(tc.image)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("BuiltinImage(%q) = %q, %v; want %q", tc.image, got, ok, tc.want)
		}
	}
}

func TestJSONFilter(t *testing.T) {
	doc := yaml.MustParse(`kind: Secret
metadata:
  name: decryption-key
  labels: {a/b: "x", n: "3"}
  annotations: {flag: "false"}
data: {k: v}
`)
	for _, tc := range []struct {
		filter string
		want   bool
		err    string
	}{
		{filter: "", want: true},
		{filter: "$[*]", want: true},
		{filter: `$[?(@.metadata.name=="decryption-key")]`, want: true},
		{filter: `$[?(@.metadata.name=="other")]`, want: false},
		{filter: `$[?(@.metadata.name == 'decryption-key' && @.kind == "Secret")]`, want: true},
		{filter: `$[?(@.metadata.name=="decryption-key" && @.kind=="ConfigMap")]`, want: false},
		{filter: `$[?(@.kind=="ConfigMap" || @.metadata.labels['a/b']=="x")]`, want: true},
		{filter: `$[?(@.metadata.name!="decryption-key")]`, want: false},
		{filter: `$[?(!(@.kind==="Secret"))]`, want: false},
		{filter: `$[?(@.data.k)]`, want: true},
		{filter: `$[?(@.data.missing)]`, want: false},
		{filter: `$[?(@.metadata.labels.n == 3)]`, want: true},
		{filter: `$[?(@.metadata.namespace == null)]`, want: true},
		{filter: `$.metadata.name`, err: "want $[?(expression)]"},
		{filter: `$[?(@.metadata.name=="x"`, err: "want $[?(expression)]"},
		{filter: `$[?(@.metadata.name==x)]`, err: `literal "x"`},
		{filter: `$[?(@.metadata.name=="x" &&)]`, err: "want @.field"},
		{filter: `$[?(@.metadata.name=="x)]`, err: "unterminated string"},
	} {
		f, err := parseJSONFilter(tc.filter)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.filter, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.filter, err)
			continue
		}
		if got := f.matches(doc); got != tc.want {
			t.Errorf("%s matches = %v, want %v", tc.filter, got, tc.want)
		}
	}
}

func sopsConfig(data string) *yaml.RNode {
	return yaml.MustParse(`apiVersion: v1
kind: ConfigMap
metadata:
  name: decrypt
  annotations:
    config.kubernetes.io/function: |
      container:
        image: gcr.io/kpt-fn-contrib/sops:v0.3.0
data:
` + data)
}

func TestSopsConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"unknown key", "  cmd: decrypt\n  ignore-macs: true\n", `ConfigMap/decrypt: data.ignore-macs: unknown sops function setting "ignore-macs"`},
		{"cloud kms", "  kms: arn:aws:kms:x\n", "ConfigMap/decrypt: data.kms: AWS KMS are not supported by the built-in sops function"},
		{"bad cmd", "  cmd: rotate\n", `data.cmd: "rotate" is neither decrypt nor encrypt`},
		{"bad filter", "  cmd-json-path-filter: '$.x'\n", "data.cmd-json-path-filter: JSONPath filter"},
		{"not a string", "  cmd: [decrypt]\n", "data.cmd is a list, not a string"},
		{"bad age import", "  cmd-import-age: AGE-SECRET-KEY-1NOTAKEY\n", "data.cmd-import-age: line 1 is not a valid age identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newSops(sopsConfig(tc.data), func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	_, err := newSops(yaml.MustParse("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"), func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "must be a ConfigMap") {
		t.Errorf("a Secret as config: %v", err)
	}
}

func parseItems(t *testing.T, docs ...string) []*yaml.RNode {
	t.Helper()
	var out []*yaml.RNode
	for _, d := range docs {
		n, err := yaml.Parse(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func secretDoc(name string, data map[string]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\ndata:\n")
	for k, v := range data {
		b.WriteString("  " + k + ": " + base64.StdEncoding.EncodeToString([]byte(v)) + "\n")
	}
	return b.String()
}

func configMapDoc(name string, data map[string]string) string {
	n := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n")
	if err := n.LoadMapIntoConfigMapData(data); err != nil {
		panic(err)
	}
	return n.MustString()
}

func TestSopsFilter(t *testing.T) {
	k := newTestKeys(t)
	other := newTestKeys(t)
	enc := encryptedCatalogue(t, "combined-target-secrets", k)
	encOther := encryptedCatalogue(t, "combined-ephemeral-secrets", k)
	tampered := strings.Replace(enc, "name: caKey", "name: caKeyRenamed", 1)
	// Annotations kustomize adds after encryption are detached for the MAC.
	annotated := strings.Replace(enc, "  labels:\n", "  annotations:\n    config.kubernetes.io/index: '3'\n    internal.config.kubernetes.io/path: secrets.yaml\n  labels:\n", 1)
	if annotated == enc {
		t.Fatal("fixture: no labels line")
	}
	noEnv := map[string]string{}
	ageEnv := map[string]string{sops.EnvImportAge: k.ageID}
	pgpEnv := map[string]string{sops.EnvImportPGP: k.pgpPriv}
	wrongEnv := map[string]string{sops.EnvImportAge: other.ageID, sops.EnvImportPGP: other.pgpPriv}
	decryptionKey := secretDoc("decryption-key", map[string]string{"cmd-import-age": "# my key\n" + k.ageID + "\n"})

	cases := []struct {
		name   string
		data   string
		env    map[string]string
		items  []string
		want   []string // substrings of the output
		absent []string // must not be in the output
		err    []string // substrings of the error
		warn   []string // substrings of the warnings
		// annotations the (single) output document must have.
		annotations map[string]string
	}{
		{
			name: "age key from the environment", data: "  cmd: decrypt\n", env: ageEnv, items: []string{enc},
			want: []string{sopsSecret, sopsSecretTwo}, absent: []string{"sops:", "ENC["},
		},
		{
			name: "pgp key from the environment", data: "  cmd: decrypt\n", env: pgpEnv, items: []string{enc},
			want: []string{sopsSecret},
		},
		{
			name: "filter picks one document", data: "  cmd-json-path-filter: '$[?(@.metadata.name==\"combined-target-secrets\")]'\n", env: ageEnv,
			items: []string{enc, encOther}, want: []string{sopsSecret, "name: combined-ephemeral-secrets", "ENC[AES256_GCM"},
		},
		{
			name: "key from a Secret through cmd-extra-params-json-path-filter, as upstream's decryption-key",
			data: "  cmd: decrypt\n  cmd-extra-params-json-path-filter: '$[?(@.metadata.name==\"decryption-key\")]'\n", env: noEnv,
			items: []string{decryptionKey, enc}, want: []string{sopsSecret, "name: decryption-key"}, absent: []string{"ENC["},
		},
		{
			name: "wrong key", data: "  cmd: decrypt\n", env: wrongEnv, items: []string{enc},
			err: []string{"decrypting VariableCatalogue/combined-target-secrets", "no key could decrypt", "pgp " + k.pgpFP, "age " + k.ageRecipient, "imported private keys: pgp " + other.pgpFP},
		},
		{
			name: "wrong key, failures tolerated", data: "  cmd: decrypt\n  cmd-tolerate-failures: 'true'\n", env: wrongEnv, items: []string{enc, catalogue("plain")},
			want: []string{"ENC[AES256_GCM", "name: plain"}, warn: []string{"decrypting VariableCatalogue/combined-target-secrets left as it is (cmd-tolerate-failures)", "no key could decrypt"},
		},
		{
			name: "tolerate-failures false is off", data: "  cmd-tolerate-failures: 'false'\n", env: wrongEnv, items: []string{enc},
			err: []string{"no key could decrypt"},
		},
		{
			name: "tampered document", data: "  cmd: decrypt\n", env: ageEnv, items: []string{tampered},
			err: []string{"VariableCatalogue/combined-target-secrets", "MAC mismatch", "ignore-mac"},
		},
		{
			name: "tampered document, ignore-mac", data: "  cmd: decrypt\n  ignore-mac: 'true'\n", env: ageEnv, items: []string{tampered},
			want: []string{sopsSecret, "caKeyRenamed"},
		},
		{
			name: "kustomize annotations are detached", data: "  cmd: decrypt\n", env: ageEnv, items: []string{annotated},
			want: []string{sopsSecret}, annotations: map[string]string{"config.kubernetes.io/index": "3", "internal.config.kubernetes.io/path": "secrets.yaml"},
		},
		{
			name: "plain documents pass through", data: "  cmd: decrypt\n", env: noEnv, items: []string{catalogue("plain")},
			want: []string{sopsSecret},
		},
		{
			name: "encrypt needs recipients", data: "  cmd: encrypt\n", env: noEnv, items: []string{catalogue("plain")},
			err: []string{"cmd: encrypt needs recipients"},
		},
		{
			name: "encrypt for a PGP key the site's public-keys ConfigMap names, like upstream's encrypt-target",
			data: "  cmd: encrypt\n  cmd-json-path-filter: '$[?(@.metadata.name==\"plain\")]'\n" +
				"  cmd-extra-params-json-path-filter: '$[?(@.metadata.name==\"target-encryption-keys\")]'\n  encrypted-regex: '^(data)$'\n",
			env:    noEnv,
			items:  []string{configMapDoc("target-encryption-keys", map[string]string{"cmd-import-pgp": k.pgpPub, "pgp": k.pgpFP}), catalogue("plain"), catalogue("untouched")},
			want:   []string{"encrypted_regex: ^(data)$", "fp: " + k.pgpFP, "name: untouched", sopsSecret},
			absent: []string{"age:"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := newSops(sopsConfig(tc.data), func(n string) string { return tc.env[n] })
			if err != nil {
				t.Fatal(err)
			}
			var warn bytes.Buffer
			s.Warn = &warn
			out, err := s.Filter(parseItems(t, tc.items...))
			if tc.err != nil {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q: %v", w, err)
					}
				}
				for _, s := range []string{sopsSecret, sopsSecretTwo, "PRIVATE KEY", "AGE-SECRET-KEY"} {
					if strings.Contains(err.Error(), s) {
						t.Errorf("error shows %q: %v", s, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, n := range out {
				b.WriteString(n.MustString() + "---\n")
			}
			got := b.String()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(got, w) {
					t.Errorf("output has %q:\n%s", w, got)
				}
			}
			for k, v := range tc.annotations {
				if got := out[0].GetAnnotations()[k]; got != v {
					t.Errorf("annotation %s = %q, want %q", k, got, v)
				}
			}
			for _, w := range tc.warn {
				if !strings.Contains(warn.String(), w) {
					t.Errorf("warnings lack %q: %s", w, warn.String())
				}
			}
			if tc.warn == nil && warn.Len() > 0 {
				t.Errorf("unexpected warnings: %s", warn.String())
			}
			if strings.Contains(warn.String(), sopsSecret) {
				t.Errorf("warning shows a secret: %s", warn.String())
			}
		})
	}

	// What the function encrypted, the function decrypts (the first case
	// above, run again on the output of the last).
	s, err := newSops(sopsConfig("  cmd: encrypt\n  age: "+k.ageRecipient+"\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Filter(parseItems(t, catalogue("round-trip")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out[0].MustString(), sopsSecret) {
		t.Fatal("not encrypted")
	}
	d, err := newSops(sopsConfig("  cmd: decrypt\n"), func(n string) string { return ageEnv[n] })
	if err != nil {
		t.Fatal(err)
	}
	back, err := d.Filter(out)
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := yaml.Unmarshal([]byte(back[0].MustString()), &got); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(catalogue("round-trip")), &want); err != nil {
		t.Fatal(err)
	}
	if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
		t.Errorf("round trip:\n%s\nwant\n%s", g, w)
	}
}

// writeTree writes files under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// upstreamDecryptSecrets is upstream's type/gating/shared/decrypt-secrets:
// a Templater that renders the sops function's ConfigMap.
const upstreamDecryptSecrets = `apiVersion: airshipit.org/v1alpha1
kind: Templater
metadata:
  name: secret-template
  annotations:
    config.kubernetes.io/function: |
      container:
        image: localhost/templater
        envs:
        - TOLERATE_DECRYPTION_FAILURES
template: |
  {{- $tolerate := env "TOLERATE_DECRYPTION_FAILURES" }}
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: my-config2
    annotations:
      config.k8s.io/function: |
        container:
          image:  gcr.io/kpt-fn-contrib/sops:v0.3.0
          envs:
          - SOPS_IMPORT_PGP
          - SOPS_IMPORT_AGE
          network: true
  data:
    ignore-mac: true
    cmd: decrypt
    {{- if eq $tolerate "true" }}
    cmd-tolerate-failures: true
    {{- end }}
    cmd-extra-params-json-path-filter: '$[?(@.metadata.name=="decryption-key")]'
`

const cleanupPatch = `apiVersion: builtin
kind: PatchTransformer
metadata:
  name: delete-decryption-secrets
target:
 name: decryption-key
patch: |
  apiVersion: not-important
  kind: not-important
  metadata:
    name: not-important
  $patch: delete
`

func TestSopsKustomizeBuild(t *testing.T) {
	k := newTestKeys(t)
	other := newTestKeys(t)
	enc := encryptedCatalogue(t, "combined-target-secrets", k)

	// Two shapes of site: the function's ConfigMap written as a file, and
	// upstream's (rendered by a Templater, with a private-keys Secret and a
	// cleanup patch). Both are built by kustomize in process.
	plainTree := map[string]string{
		"site/kustomization.yaml": "resources:\n- secrets.yaml\ntransformers:\n- decrypt.yaml\n",
		"site/secrets.yaml":       enc,
		"site/decrypt.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: decrypt
  annotations:
    config.kubernetes.io/function: |
      container:
        image: gcr.io/kpt-fn-contrib/sops:v0.3.0
data:
  cmd: decrypt
`,
	}
	upstreamTree := map[string]string{
		"manifests/site/test-site/target/catalogues/encrypted/kustomization.yaml": "resources:\n  - ../../../../../.private-keys/\n  - secrets.yaml\n" +
			"transformers:\n  - ../../../../../type/gating/shared/decrypt-secrets/\n  - ../../../../../type/gating/shared/decrypt-secrets/cleanup/\n",
		"manifests/site/test-site/target/catalogues/encrypted/secrets.yaml": enc,
		"manifests/.private-keys/kustomization.yaml": "secretGenerator:\n  - name: decryption-key\n    options:\n      disableNameSuffixHash: true\n" +
			"    files:\n    - cmd-import-pgp=my.key\n",
		"manifests/.private-keys/my.key":                                            "# put here your key, or provide it using env var\n",
		"manifests/type/gating/shared/decrypt-secrets/kustomization.yaml":           "generators:\n  - configurable-decryption.yaml\n",
		"manifests/type/gating/shared/decrypt-secrets/configurable-decryption.yaml": upstreamDecryptSecrets,
		"manifests/type/gating/shared/decrypt-secrets/cleanup/kustomization.yaml":   "resources:\n  - patch.yaml\n",
		"manifests/type/gating/shared/decrypt-secrets/cleanup/patch.yaml":           cleanupPatch,
	}
	const upstreamPath = "manifests/site/test-site/target/catalogues/encrypted"
	// The same catalogue encrypted with name before labels: kustomize
	// sorts the fields, so the MAC no longer matches in a build.
	unsorted := strings.Replace(catalogue("combined-target-secrets"),
		"  labels:\n    airshipit.org/deploy-k8s: 'false'\n  name: combined-target-secrets\n",
		"  name: combined-target-secrets\n  labels:\n    airshipit.org/deploy-k8s: 'false'\n", 1)
	if unsorted == catalogue("combined-target-secrets") {
		t.Fatal("fixture: metadata not reordered")
	}
	unsortedTree := map[string]string{}
	for k, v := range plainTree {
		unsortedTree[k] = v
	}
	unsortedTree["site/secrets.yaml"] = encryptYAML(t, unsorted, k)

	cases := []struct {
		name     string
		tree     map[string]string
		path     string
		env      map[string]string
		want     []string
		absent   []string
		err      []string
		tolerate bool
	}{
		{name: "configmap, age key", tree: plainTree, path: "site", env: map[string]string{sops.EnvImportAge: k.ageID},
			want: []string{sopsSecret, sopsSecretTwo}, absent: []string{"\nsops:\n", "ENC["}},
		{name: "upstream shape, pgp key", tree: upstreamTree, path: upstreamPath, env: map[string]string{sops.EnvImportPGP: k.pgpPriv},
			// The sops ConfigMap itself also reaches the output: kustomize runs
			// the Templater of a transformer directory as a transformer too (a
			// difference from upstream's older kustomize, issue 15 part 5).
			want: []string{sopsSecret, "name: combined-target-secrets"}, absent: []string{"\nsops:\n", "kind: Secret", "ENC["}},
		{name: "upstream shape, wrong key", tree: upstreamTree, path: upstreamPath, env: map[string]string{sops.EnvImportPGP: other.pgpPriv},
			err: []string{"VariableCatalogue/combined-target-secrets", "no key could decrypt", "pgp " + k.pgpFP}},
		{name: "upstream shape, wrong key tolerated", tree: upstreamTree, path: upstreamPath,
			env:  map[string]string{sops.EnvImportPGP: other.pgpPriv, "TOLERATE_DECRYPTION_FAILURES": "true"},
			want: []string{"ENC[AES256_GCM", "\nsops:\n"}, absent: []string{sopsSecret}},
		// Functions run in process on the documents as read: fields keep
		// their order, so the MAC of a document encrypted with its fields
		// in any order verifies (kustomize's exec protocol sorted them).
		{name: "fields in another order", tree: unsortedTree, path: "site", env: map[string]string{sops.EnvImportAge: k.ageID},
			want: []string{sopsSecret, sopsSecretTwo}, absent: []string{"\nsops:\n", "ENC["}},
		{name: "configmap, no key", tree: plainTree, path: "site", env: map[string]string{},
			err: []string{"VariableCatalogue/combined-target-secrets", "no key could decrypt", "imported private keys: none"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range []string{sops.EnvImportAge, sops.EnvImportPGP, sops.EnvAgeKey, sops.EnvAgeKeyFile, "TOLERATE_DECRYPTION_FAILURES"} {
				t.Setenv(name, tc.env[name])
			}
			dir := t.TempDir()
			writeTree(t, dir, tc.tree)
			m, secrets, err := (&Runner{}).BuildSecrets(filesys.MakeFsOnDisk(), filepath.Join(dir, tc.path), nil)
			if tc.err != nil {
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q: %v", w, err)
					}
				}
				for _, s := range []string{sopsSecret, sopsSecretTwo, "PRIVATE KEY", "AGE-SECRET-KEY"} {
					if strings.Contains(err.Error(), s) {
						t.Errorf("error shows %q: %v", s, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !secrets {
				t.Error("BuildSecrets did not report that the sops function ran")
			}
			y, err := m.AsYaml()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(y), w) {
					t.Errorf("output lacks %q:\n%s", w, y)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(string(y), w) {
					t.Errorf("output has %q:\n%s", w, y)
				}
			}
		})
	}
}

// A build whose functions never include sops reports no secrets, even when
// a Templater renders function configs of its own.
func TestBuildSecretsWithoutSops(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"site/kustomization.yaml": "generators:\n- gen.yaml\n",
		"site/gen.yaml": `apiVersion: airshipit.org/v1alpha1
kind: Templater
metadata:
  name: gen
  annotations:
    config.kubernetes.io/function: |
      container:
        image: localhost/templater
template: |
  apiVersion: v1
  kind: ConfigMap
  metadata:
    name: made
  data:
    k: v
`,
	})
	m, secrets, err := (&Runner{}).BuildSecrets(filesys.MakeFsOnDisk(), filepath.Join(dir, "site"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if secrets {
		t.Error("a build without the sops function reported secrets")
	}
	if m.Size() != 1 {
		t.Errorf("build made %d documents, want 1", m.Size())
	}
}
