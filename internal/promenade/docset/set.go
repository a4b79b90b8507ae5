package docset

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
)

// Set is a validated configuration set.
type Set struct {
	Documents []Document
}

// Find returns the document with the schema and name, or nil.
func (s *Set) Find(schema, name string) *Document {
	for i := range s.Documents {
		d := &s.Documents[i]
		if d.Schema == schema && d.Metadata.Name == name {
			return d
		}
	}
	return nil
}

// All returns the documents with the schema, in input order.
func (s *Set) All(schema string) []*Document {
	var out []*Document
	for i := range s.Documents {
		if s.Documents[i].Schema == schema {
			out = append(out, &s.Documents[i])
		}
	}
	return out
}

// One decodes the only document of a schema into v. It fails when there is
// none or more than one.
func (s *Set) One(schema string, v any) error {
	docs := s.All(schema)
	switch len(docs) {
	case 0:
		return fmt.Errorf("the configuration has no %s document", schema)
	case 1:
		return docs[0].DecodeInto(v)
	default:
		refs := make([]string, len(docs))
		for i, d := range docs {
			refs[i] = d.Ref()
		}
		return fmt.Errorf("the configuration has %d %s documents, want one: %s", len(docs), schema, strings.Join(refs, ", "))
	}
}

// Optional decodes the only document of a schema into v and reports whether
// there was one. More than one is an error.
func (s *Set) Optional(schema string, v any) (bool, error) {
	if len(s.All(schema)) == 0 {
		return false, nil
	}
	return true, s.One(schema, v)
}

// PEM returns the string data of a deckhand material document, or "".
func (s *Set) PEM(schema, name string) string {
	d := s.Find(schema, name)
	if d == nil {
		return ""
	}
	var str string
	if json.Unmarshal(d.Data, &str) != nil {
		return ""
	}
	return str
}

// Node is a KubernetesNode document with its name.
type Node struct {
	Name string
	v1.KubernetesNode
}

// Nodes decodes every KubernetesNode document, sorted by hostname.
func (s *Set) Nodes() ([]Node, error) {
	var out []Node
	for _, d := range s.All(v1.SchemaKubernetesNode) {
		var n v1.KubernetesNode
		if err := d.DecodeInto(&n); err != nil {
			return nil, err
		}
		out = append(out, Node{Name: d.Metadata.Name, KubernetesNode: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hostname < out[j].Hostname })
	return out, nil
}

// Append adds a document (for example one made by the API) after
// validating it with the rest.
func (s *Set) Append(d Document) error {
	all := append(append([]Document(nil), s.Documents...), d)
	if errs := Validate(all); len(errs) > 0 {
		return errs
	}
	s.Documents = all
	return nil
}

// NewDocument builds a document with standard metadata.
func NewDocument(schema, name string, data any) (Document, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Document{}, err
	}
	return Document{
		Schema: schema,
		Metadata: Metadata{
			Schema:             "metadata/Document/v1",
			Name:               name,
			LayeringDefinition: map[string]any{"abstract": false, "layer": "site"},
			StoragePolicy:      "cleartext",
		},
		Data: raw,
	}, nil
}

func marshalDoc(d Document) ([]byte, error) {
	type plain Document
	return json.Marshal(plain(d))
}

// MarshalYAML renders documents as a multi-document YAML stream, each
// starting with "---". Multi-line strings become literal blocks.
func MarshalYAML(docs []Document) ([]byte, error) {
	var b strings.Builder
	for _, d := range docs {
		j, err := marshalDoc(d)
		if err != nil {
			return nil, err
		}
		y, err := yaml.JSONToYAML(j)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return []byte(b.String()), nil
}
