package docset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Metadata is the metadata of a document.
type Metadata struct {
	Schema             string            `json:"schema"`
	Name               string            `json:"name"`
	Labels             map[string]string `json:"labels,omitempty"`
	LayeringDefinition map[string]any    `json:"layeringDefinition,omitempty"`
	StoragePolicy      string            `json:"storagePolicy,omitempty"`
}

// Document is one configuration document.
type Document struct {
	Schema   string          `json:"schema"`
	Metadata Metadata        `json:"metadata"`
	Data     json.RawMessage `json:"data"`

	// Source is the file the document came from and Index its position
	// (0-based) in that file. Neither is serialised.
	Source string `json:"-"`
	Index  int    `json:"-"`
}

// Ref names a document in messages: "file (document N: schema name)".
func (d *Document) Ref() string {
	name := d.Metadata.Name
	if name == "" {
		name = "<unnamed>"
	}
	schema := d.Schema
	if schema == "" {
		schema = "<no schema>"
	}
	return fmt.Sprintf("%s (document %d: %s %s)", d.Source, d.Index+1, schema, name)
}

// Kind returns the middle part of the schema ("Genesis" for promenade/Genesis/v1).
func (d *Document) Kind() string {
	parts := strings.Split(d.Schema, "/")
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}

// DecodeInto unmarshals the data of the document into v.
func (d *Document) DecodeInto(v any) error {
	if err := json.Unmarshal(d.Data, v); err != nil {
		return fmt.Errorf("%s: decoding data: %w", d.Ref(), err)
	}
	return nil
}

// raw holds a document's JSON form for schema validation.
type rawDoc struct {
	doc  Document
	json []byte
}

// maxDocumentSize bounds one YAML document (and so the decoder's memory).
const maxDocumentSize = 8 << 20

// Decode splits a multi-document YAML stream and decodes each non-empty
// document. Syntax errors name the file and the document index.
func Decode(source string, data []byte) ([]Document, error) {
	raws, err := decodeRaw(source, data)
	if err != nil {
		return nil, err
	}
	docs := make([]Document, len(raws))
	for i := range raws {
		docs[i] = raws[i].doc
	}
	return docs, nil
}

func decodeRaw(source string, data []byte) ([]rawDoc, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReaderSize(bytes.NewReader(data), 4096))
	var out []rawDoc
	index := 0
	for {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: reading document %d: %w", source, index+1, err)
		}
		if len(chunk) > maxDocumentSize {
			return nil, fmt.Errorf("%s: document %d is larger than %d bytes", source, index+1, maxDocumentSize)
		}
		if isBlank(chunk) {
			continue
		}
		j, err := yaml.YAMLToJSON(chunk)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, index+1, err)
		}
		if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			continue
		}
		var doc Document
		if err := json.Unmarshal(j, &doc); err != nil {
			// Not a mapping of the expected shape: keep it for the
			// envelope schema to report field by field.
			doc = Document{}
			var m map[string]any
			if json.Unmarshal(j, &m) == nil {
				if s, ok := m["schema"].(string); ok {
					doc.Schema = s
				}
				if md, ok := m["metadata"].(map[string]any); ok {
					if n, ok := md["name"].(string); ok {
						doc.Metadata.Name = n
					}
				}
			}
		}
		doc.Source = source
		doc.Index = index
		out = append(out, rawDoc{doc: doc, json: j})
		index++
	}
	return out, nil
}

func isBlank(chunk []byte) bool {
	for _, line := range bytes.Split(chunk, []byte("\n")) {
		l := bytes.TrimSpace(line)
		if len(l) == 0 || l[0] == '#' || bytes.Equal(l, []byte("---")) || bytes.Equal(l, []byte("...")) {
			continue
		}
		return false
	}
	return true
}

// Load reads, decodes and validates the files, returning the configuration
// set or every problem found.
func Load(paths ...string) (*Set, error) {
	var sources []Source
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		sources = append(sources, Source{Name: p, Data: b})
	}
	return LoadSources(sources...)
}

// Source is a named YAML stream.
type Source struct {
	Name string
	Data []byte
}

// LoadSources decodes and validates in-memory sources.
func LoadSources(sources ...Source) (*Set, error) {
	var all []rawDoc
	var errs ValidationErrors
	for _, s := range sources {
		raws, err := decodeRaw(s.Name, s.Data)
		if err != nil {
			errs = append(errs, &FieldError{File: s.Name, Message: err.Error()})
			continue
		}
		all = append(all, raws...)
	}
	errs = append(errs, validateAll(all)...)
	if len(errs) > 0 {
		return nil, errs
	}
	set := &Set{}
	for _, r := range all {
		set.Documents = append(set.Documents, r.doc)
	}
	return set, nil
}
