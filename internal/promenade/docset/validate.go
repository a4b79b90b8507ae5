package docset

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"sigs.k8s.io/yaml"
)

//go:embed schemas/*.yaml
var schemaFS embed.FS

// FieldError is one validation problem.
type FieldError struct {
	File     string // source file
	Document string // "schema name", empty for file-level errors
	Field    string // JSON pointer into the document, e.g. /data/ip
	Message  string
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Document != "" {
		b.WriteString(": " + e.Document)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Message)
	return b.String()
}

// ValidationErrors are all the problems of a configuration set.
type ValidationErrors []*FieldError

func (v ValidationErrors) Error() string {
	lines := make([]string, len(v))
	for i, e := range v {
		lines[i] = "  " + e.Error()
	}
	return fmt.Sprintf("%d problem(s) in the configuration:\n%s", len(v), strings.Join(lines, "\n"))
}

const schemaBase = "https://schemas.airshipit.org/"

type schemas struct {
	envelope *jsonschema.Schema
	byKind   map[string]*jsonschema.Schema // "promenade/Genesis/v1" -> schema
}

var (
	compiled     *schemas
	compileErr   error
	compileOnce  sync.Once
	englishPrint = message.NewPrinter(language.English)
)

// SchemaNames lists the document schemas that have a JSON schema.
func SchemaNames() []string {
	s, err := loadSchemas()
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(s.byKind))
	for k := range s.byKind {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

var deckhandKinds = map[string]bool{
	"Certificate": true, "CertificateKey": true, "CertificateAuthority": true,
	"CertificateAuthorityKey": true, "PublicKey": true, "PrivateKey": true,
}

// secretKinds hold key material: their validation messages never show the
// value (errors reach logs and API answers).
var secretKinds = map[string]bool{"CertificateKey": true, "CertificateAuthorityKey": true, "PrivateKey": true}

func loadSchemas() (*schemas, error) {
	compileOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		entries, err := fs.ReadDir(schemaFS, "schemas")
		if err != nil {
			compileErr = err
			return
		}
		var kinds []string
		for _, e := range entries {
			b, err := schemaFS.ReadFile(path.Join("schemas", e.Name()))
			if err != nil {
				compileErr = err
				return
			}
			j, err := yaml.YAMLToJSON(b)
			if err != nil {
				compileErr = fmt.Errorf("schema %s: %w", e.Name(), err)
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
			if err != nil {
				compileErr = fmt.Errorf("schema %s: %w", e.Name(), err)
				return
			}
			m, _ := doc.(map[string]any)
			id, _ := m["$id"].(string)
			if id == "" {
				compileErr = fmt.Errorf("schema %s has no $id", e.Name())
				return
			}
			if err := c.AddResource(id, doc); err != nil {
				compileErr = fmt.Errorf("schema %s: %w", e.Name(), err)
				return
			}
			if !strings.HasPrefix(e.Name(), "_") && e.Name() != "envelope.yaml" {
				kinds = append(kinds, id)
			}
		}
		s := &schemas{byKind: map[string]*jsonschema.Schema{}}
		if s.envelope, err = c.Compile(schemaBase + "promenade/envelope.json"); err != nil {
			compileErr = err
			return
		}
		for _, id := range kinds {
			sch, err := c.Compile(id)
			if err != nil {
				compileErr = fmt.Errorf("compiling %s: %w", id, err)
				return
			}
			rest := strings.TrimSuffix(strings.TrimPrefix(id, schemaBase), ".json") // promenade/Genesis
			s.byKind[rest+"/v1"] = sch
		}
		compiled = s
	})
	return compiled, compileErr
}

// Validate checks documents that were decoded with Decode (re-encoding them).
// It is the same check LoadSources does.
func Validate(docs []Document) ValidationErrors {
	raws := make([]rawDoc, 0, len(docs))
	for _, d := range docs {
		j, err := marshalDoc(d)
		if err != nil {
			return ValidationErrors{{File: d.Source, Document: d.Schema + " " + d.Metadata.Name, Message: err.Error()}}
		}
		raws = append(raws, rawDoc{doc: d, json: j})
	}
	return validateAll(raws)
}

func validateAll(raws []rawDoc) ValidationErrors {
	s, err := loadSchemas()
	if err != nil {
		return ValidationErrors{{File: "<embedded schemas>", Message: err.Error()}}
	}
	var errs ValidationErrors
	type key struct{ schema, name string }
	seen := map[key]*Document{}
	for i := range raws {
		r := &raws[i]
		docName := strings.TrimSpace(r.doc.Schema + " " + r.doc.Metadata.Name)
		if docName == "" {
			docName = fmt.Sprintf("document %d", r.doc.Index+1)
		}
		add := func(field, msg string) {
			errs = append(errs, &FieldError{File: r.doc.Source, Document: docName, Field: field, Message: msg})
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.json))
		if err != nil {
			add("", err.Error())
			continue
		}
		if err := s.envelope.Validate(inst); err != nil {
			for _, fe := range flatten(err, false) {
				add(fe[0], fe[1])
			}
			continue
		}
		k := key{r.doc.Schema, r.doc.Metadata.Name}
		if prev, ok := seen[k]; ok {
			add("/metadata/name", fmt.Sprintf("duplicate document name %q (also in %s)", r.doc.Metadata.Name, prev.Ref()))
		} else {
			seen[k] = &r.doc
		}
		sch, ok := s.byKind[r.doc.Schema]
		if !ok {
			if strings.HasPrefix(r.doc.Schema, "promenade/") {
				add("/schema", fmt.Sprintf("unknown promenade schema %q (known: %s)", r.doc.Schema, strings.Join(SchemaNames(), ", ")))
			} else if strings.HasPrefix(r.doc.Schema, "deckhand/") && deckhandKinds[r.doc.Kind()] {
				add("/schema", fmt.Sprintf("unsupported version of %q", r.doc.Schema))
			}
			// Documents of other applications are carried along unchecked.
			continue
		}
		data := inst.(map[string]any)["data"]
		if err := sch.Validate(data); err != nil {
			for _, fe := range flatten(err, strings.HasPrefix(r.doc.Schema, "deckhand/") && secretKinds[r.doc.Kind()]) {
				add("/data"+fe[0], fe[1])
			}
		}
	}
	return errs
}

// flatten turns a validation error into (instance location, message) pairs,
// one per leaf cause, without duplicates. With secret, messages that would
// quote the value are replaced by ones that do not.
func flatten(err error, secret bool) [][2]string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return [][2]string{{"", err.Error()}}
	}
	var out [][2]string
	seen := map[[2]string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := ""
			if len(e.InstanceLocation) > 0 {
				loc = "/" + strings.Join(e.InstanceLocation, "/")
			}
			p := [2]string{loc, e.ErrorKind.LocalizedString(englishPrint)}
			if secret {
				p[1] = secretMessage(e.ErrorKind, p[1])
			}
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

// secretMessage keeps the messages that carry no part of the value (types,
// lengths, property names) and replaces the others.
func secretMessage(k jsonschema.ErrorKind, msg string) string {
	switch k := k.(type) {
	case *kind.Type, *kind.MinLength, *kind.MaxLength, *kind.Required, *kind.AdditionalProperties:
		return msg
	case *kind.Pattern:
		return fmt.Sprintf("does not match pattern '%s' (the value is secret and not shown)", k.Want)
	default:
		return "is invalid (the value is secret and not shown)"
	}
}
