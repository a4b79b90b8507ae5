package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	airshipv1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/strictyaml"
)

// DeployToK8sLabel set to "false" keeps a document out of what is applied.
const DeployToK8sLabel = "airshipit.org/deploy-k8s"

// Document is one object of a bundle.
type Document struct {
	node *kyaml.RNode
	// source is the file the document was read from, relative to the
	// kustomize root when known.
	source string
}

// NewDocument wraps a kyaml node read from source.
func NewDocument(node *kyaml.RNode, source string) *Document {
	return &Document{node: node, source: source}
}

// Node returns the underlying kyaml node. Changing it changes the document.
func (d *Document) Node() *kyaml.RNode { return d.node }

// Source is the file the document came from, or "" when unknown.
func (d *Document) Source() string { return d.source }

// APIVersion is the document's apiVersion.
func (d *Document) APIVersion() string { return d.node.GetApiVersion() }

// Kind is the document's kind.
func (d *Document) Kind() string { return d.node.GetKind() }

// Name is metadata.name.
func (d *Document) Name() string { return d.node.GetName() }

// Namespace is metadata.namespace.
func (d *Document) Namespace() string { return d.node.GetNamespace() }

// Labels are metadata.labels.
func (d *Document) Labels() map[string]string { return d.node.GetLabels() }

// Annotations are metadata.annotations.
func (d *Document) Annotations() map[string]string { return d.node.GetAnnotations() }

// GroupVersionKind of the document.
func (d *Document) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(d.APIVersion(), d.Kind())
}

// Deployable reports whether an executor should apply the document: it is
// not labelled airshipit.org/deploy-k8s: "false".
func (d *Document) Deployable() bool {
	return d.Labels()[DeployToK8sLabel] != "false"
}

// ID identifies the document in messages: Kind/namespace/name (file).
func (d *Document) ID() string {
	var b strings.Builder
	b.WriteString(d.Kind())
	b.WriteString("/")
	if ns := d.Namespace(); ns != "" {
		b.WriteString(ns)
		b.WriteString("/")
	}
	b.WriteString(d.Name())
	if d.source != "" {
		fmt.Fprintf(&b, " (%s)", d.source)
	}
	return b.String()
}

// String is the document's ID.
func (d *Document) String() string { return d.ID() }

// YAML returns the document as YAML with sorted keys, exactly as
// `kubectl kustomize` prints it.
func (d *Document) YAML() ([]byte, error) {
	data, err := d.JSON()
	if err != nil {
		return nil, err
	}
	out, err := yaml.JSONToYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding YAML: %w", d.ID(), err)
	}
	return out, nil
}

// JSON returns the document as JSON.
func (d *Document) JSON() ([]byte, error) {
	data, err := d.node.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s: encoding JSON: %w", d.ID(), err)
	}
	return data, nil
}

// Unstructured returns a copy of the document as an unstructured object.
func (d *Document) Unstructured() (*unstructured.Unstructured, error) {
	data, err := d.JSON()
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("%s: %w", d.ID(), err)
	}
	return u, nil
}

// Decode fills into (a Go type with JSON tags) from the document. Documents
// of the airshipit.org group are decoded strictly (see DecodeStrict): a
// misspelt field there would otherwise be dropped without a word. Other
// documents ignore fields the type does not know.
func (d *Document) Decode(into any) error {
	if d.GroupVersionKind().Group == airshipv1.GroupVersion.Group {
		return d.DecodeStrict(into)
	}
	data, err := d.JSON()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %w", d.ID(), err)
	}
	return nil
}

// DecodeStrict is Decode that fails on unknown or duplicate fields, naming
// each by its full path.
func (d *Document) DecodeStrict(into any) error {
	data, err := d.JSON()
	if err != nil {
		return err
	}
	if err := strictyaml.UnmarshalJSON(data, into); err != nil {
		return fmt.Errorf("%s: %w", d.ID(), err)
	}
	return nil
}

// Copy returns a deep copy.
func (d *Document) Copy() *Document {
	return &Document{node: d.node.Copy(), source: d.source}
}

// documentsYAML writes documents as a YAML stream separated by ---,
// encoding them on every CPU.
func documentsYAML(docs []*Document) ([]byte, error) {
	encoded := make([][]byte, len(docs))
	errs := make([]error, len(docs))
	parallel(len(docs), func(i int) {
		encoded[i], errs[i] = docs[i].YAML()
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	size := 0
	for _, e := range encoded {
		size += len(e) + 4
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	for i, e := range encoded {
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(e)
	}
	return buf.Bytes(), nil
}
