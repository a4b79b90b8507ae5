package fn

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airshipit/airship-go/internal/secret/sops"
)

// FuzzSopsDecrypt runs the built-in sops function's decryption over
// arbitrary documents (seeded with a real encrypted catalogue and
// damaged copies of it): it must never panic, and no error or warning may
// carry the private key or a decrypted value.
func FuzzSopsDecrypt(f *testing.F) {
	k := newTestKeys(f)
	enc := encryptedCatalogue(f, "fuzz", k)
	f.Add(enc)
	f.Add(strings.Replace(enc, "mac: ENC[", "mac: ENC[X", 1))
	f.Add(strings.Replace(enc, "data: ENC[AES256_GCM,data:", "data: ENC[AES256_GCM,data:A", 1))
	f.Add(strings.Replace(enc, "type:str]", "type:int]", 1))
	f.Add(catalogue("plain"))
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nsops: {mac: 1, lastmodified: x, age: [{recipient: a, enc: b}]}\n")
	env := map[string]string{sops.EnvImportAge: k.ageID}
	f.Fuzz(func(t *testing.T, doc string) {
		items, err := kio.FromBytes([]byte(doc))
		if err != nil {
			return
		}
		for _, tolerate := range []string{"false", "true"} {
			s, err := newSops(sopsConfig("  cmd: decrypt\n  cmd-tolerate-failures: '"+tolerate+"'\n"), func(n string) string { return env[n] })
			if err != nil {
				t.Fatal(err)
			}
			var warn strings.Builder
			s.Warn = &warn
			in := make([]*yaml.RNode, len(items))
			for i, it := range items {
				in[i] = it.Copy()
			}
			_, err = s.Filter(in)
			msg := warn.String()
			if err != nil {
				msg += err.Error()
			}
			for _, secret := range []string{k.ageID, sopsSecret, sopsSecretTwo} {
				if strings.Contains(msg, secret) {
					t.Fatalf("an error or warning shows a secret: %s", msg)
				}
			}
		}
	})
}

// FuzzFunctionConfigs decodes arbitrary documents as the built-in
// functions' configs (strictly) and runs those that decode over a small
// input: errors, never a panic.
func FuzzFunctionConfigs(f *testing.F) {
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: ReplacementTransformer\nmetadata: {name: r}\nreplacements:\n- source: {value: x}\n  target: {objref: {kind: ConfigMap}, fieldrefs: ['data.a%b%']}\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: ReplacementTransformer\nmetadata: {name: r}\nreplacements:\n- source: {objref: {kind: ConfigMap}, fieldref: '{.data.a}'}\n  target: {objref: {kind: ConfigMap}, fieldrefs: ['data[b]', 'spec.x[name=y].z']}\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: Templater\nmetadata: {name: t}\nvalues: {a: 1}\ntemplate: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: '{{ .a }}'}\n")
	f.Add("apiVersion: airshipit.org/v1alpha1\nkind: Templater\nmetadata: {name: t}\ntemplate: '{{ range getItems }}{{ end }}'\n")
	f.Fuzz(func(t *testing.T, cfg string) {
		config, err := yaml.Parse(cfg)
		if err != nil || config.YNode().Kind != yaml.MappingNode {
			return
		}
		if config.GetKind() == KindTemplater && (strings.Contains(cfg, "genCA") || strings.Contains(cfg, "genSSH") || strings.Contains(cfg, "genSigned")) {
			return // key generation is slow, and tested elsewhere
		}
		items := []*yaml.RNode{yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: b}\n")}
		_, _ = run(config, items, runOptions{image: "example.com/not-sops:v1", entropy: Entropy{Rand: &counterReader{}}})
	})
}
