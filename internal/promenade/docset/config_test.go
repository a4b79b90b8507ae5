package docset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
)

func exampleFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("../../../examples/site/promenade/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("example configuration not found: %v", err)
	}
	return files
}

func TestExampleValidates(t *testing.T) {
	set, err := Load(exampleFiles(t)...)
	if err != nil {
		t.Fatal(err)
	}
	var g v1.Genesis
	if err := set.One(v1.SchemaGenesis, &g); err != nil {
		t.Fatal(err)
	}
	if g.Hostname != "n0" || g.IP != "192.168.77.10" {
		t.Errorf("genesis = %+v", g)
	}
	nodes, err := set.Nodes()
	if err != nil || len(nodes) != 3 {
		t.Fatalf("nodes = %v, %v", nodes, err)
	}
	for _, schema := range []string{v1.SchemaKubernetesNetwork, v1.SchemaHostSystem, v1.SchemaKubelet, v1.SchemaContainerd, v1.SchemaEncryptionPolicy, v1.SchemaPKICatalog} {
		if len(set.All(schema)) != 1 {
			t.Errorf("want one %s", schema)
		}
	}
}

func TestEverySchemaCompiles(t *testing.T) {
	names := SchemaNames()
	want := []string{
		v1.SchemaGenesis, v1.SchemaKubernetesNode, v1.SchemaKubernetesNetwork, v1.SchemaHostSystem,
		v1.SchemaKubelet, v1.SchemaDocker, v1.SchemaContainerd, v1.SchemaEncryptionPolicy, v1.SchemaPKICatalog,
		v1.SchemaCertificate, v1.SchemaCertificateKey, v1.SchemaCertificateAuthority,
		v1.SchemaCertificateAuthorityKey, v1.SchemaPublicKey, v1.SchemaPrivateKey,
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("no schema for %s (have %v)", w, names)
		}
	}
}

func TestValidationReportsEveryError(t *testing.T) {
	nodes := `
schema: promenade/KubernetesNode/v1
metadata: {schema: metadata/Document/v1, name: n1}
data:
  hostname: n1
  ip: 10.0.0.300
  labels: {static: ["bad label"]}
---
schema: promenade/KubernetesNode/v1
metadata: {schema: metadata/Document/v1, name: n2}
data:
  hostname: n2
  colour: blue
`
	other := `
schema: promenade/KubernetesNode/v1
metadata: {schema: metadata/Document/v1, name: n1}
data: {hostname: n1, ip: 10.0.0.1}
---
schema: promenade/Kubelet/v1
metadata: {schema: metadata/Document/v1}
data: {}
---
schema: promenade/Nonsense/v1
metadata: {schema: metadata/Document/v1, name: x}
data: {}
---
schema: deckhand/Certificate/v1
metadata: {schema: metadata/Document/v1, name: c}
data: not a pem
---
schema: armada/Chart/v1
metadata: {schema: metadata/Document/v1, name: ignored}
data: {anything: goes}
`
	_, err := LoadSources(Source{Name: "nodes.yaml", Data: []byte(nodes)}, Source{Name: "other.yaml", Data: []byte(other)})
	var verrs ValidationErrors
	if !errors.As(err, &verrs) {
		t.Fatalf("want ValidationErrors, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"nodes.yaml: promenade/KubernetesNode/v1 n1: /data/ip:",
		"nodes.yaml: promenade/KubernetesNode/v1 n1: /data/labels/static/0:",
		"nodes.yaml: promenade/KubernetesNode/v1 n2: /data:", // missing ip
		"colour",
		`other.yaml: promenade/KubernetesNode/v1 n1: /metadata/name: duplicate document name "n1" (also in nodes.yaml (document 1`,
		"other.yaml: promenade/Kubelet/v1: /metadata:",
		"unknown promenade schema",
		"other.yaml: deckhand/Certificate/v1 c: /data:",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not contain %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "armada/Chart") {
		t.Errorf("documents of other applications must pass unchecked:\n%s", msg)
	}
	if len(verrs) < 8 {
		t.Errorf("got %d errors, want every error at once:\n%s", len(verrs), msg)
	}
}

// TestSecretValuesAreNotShown checks that a malformed key document's
// validation message names the field and the rule but never the value.
func TestSecretValuesAreNotShown(t *testing.T) {
	const secret = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC-SECRET"
	tests := []struct{ schema, want string }{
		{v1.SchemaCertificateKey, "does not match pattern"},
		{v1.SchemaCertificateAuthorityKey, "does not match pattern"},
		{v1.SchemaPrivateKey, "does not match pattern"},
		// Not secret: the value may be shown.
		{v1.SchemaCertificate, secret},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			doc := "schema: " + tt.schema + "\nmetadata: {schema: metadata/Document/v1, name: k}\ndata: " + secret + "\n"
			_, err := LoadSources(Source{Name: "keys.yaml", Data: []byte(doc)})
			if err == nil {
				t.Fatal("a key that is not PEM was accepted")
			}
			msg := err.Error()
			if !strings.Contains(msg, "keys.yaml: "+tt.schema+" k: /data: ") || !strings.Contains(msg, tt.want) {
				t.Errorf("message %q, want the field and %q", msg, tt.want)
			}
			if tt.want != secret && strings.Contains(msg, "SECRET") {
				t.Errorf("message shows the secret value: %q", msg)
			}
		})
	}
}

func TestDecodeErrorsNameFileAndDocument(t *testing.T) {
	_, err := Decode("bad.yaml", []byte("schema: a/B/v1\n---\nkey: [unclosed\n"))
	if err == nil || !strings.Contains(err.Error(), "bad.yaml: document 2") {
		t.Fatalf("got %v", err)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	set, err := Load(exampleFiles(t)...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalYAML(set.Documents)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadSources(Source{Name: "out.yaml", Data: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Documents) != len(set.Documents) {
		t.Fatalf("round trip: %d documents, want %d", len(again.Documents), len(set.Documents))
	}
}

func FuzzDecode(f *testing.F) {
	for _, p := range exampleFiles(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("schema: 1\nmetadata: []\ndata: null\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := Decode("fuzz.yaml", data)
		if err != nil {
			return
		}
		// Validation must never panic, whatever was decoded.
		_ = Validate(docs)
		_, _ = LoadSources(Source{Name: "fuzz.yaml", Data: data})
	})
}
