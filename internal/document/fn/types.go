package fn

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Group, version and kinds of the function configs this package runs. They
// are upstream Airship's, so site trees written for airshipctl work as is.
const (
	APIVersion                 = "airshipit.org/v1alpha1"
	KindReplacementTransformer = "ReplacementTransformer"
	KindTemplater              = "Templater"
)

// ObjRef picks documents by group, version, kind, name and namespace. Every
// set field must match; each is an anchored regular expression, as upstream
// (a plain name is a regular expression that matches only itself).
// Upstream calls it objref in both source (kustomize types.Target) and
// target (kustomize types.Selector); both shapes decode into ObjRef.
type ObjRef struct {
	// group is the API group of the document, e.g. apps; empty matches any.
	Group string `yaml:"group,omitempty"`
	// version is the API version, e.g. v1; empty matches any.
	Version string `yaml:"version,omitempty"`
	// apiVersion matches the whole apiVersion field; empty matches any.
	APIVersion string `yaml:"apiVersion,omitempty"`
	// kind of the document; empty matches any.
	Kind string `yaml:"kind,omitempty"`
	// name is metadata.name; empty matches any.
	Name string `yaml:"name,omitempty"`
	// namespace is metadata.namespace; empty matches any.
	Namespace string `yaml:"namespace,omitempty"`
	// labelSelector is a Kubernetes label selector (target only).
	LabelSelector string `yaml:"labelSelector,omitempty"`
	// annotationSelector is a label-selector expression over annotations
	// (target only).
	AnnotationSelector string `yaml:"annotationSelector,omitempty"`
}

// String renders the set fields, e.g. "kind=Deployment name=web".
func (r ObjRef) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("apiVersion", r.APIVersion)
	add("group", r.Group)
	add("version", r.Version)
	add("kind", r.Kind)
	add("name", r.Name)
	add("namespace", r.Namespace)
	add("labelSelector", r.LabelSelector)
	add("annotationSelector", r.AnnotationSelector)
	if len(parts) == 0 {
		return "(any document)"
	}
	return strings.Join(parts, " ")
}

// ReplacementTransformer copies values between documents. It is upstream
// Airship's airshipit.org/v1alpha1 ReplacementTransformer.
type ReplacementTransformer struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Metadata   map[string]any `yaml:"metadata,omitempty"`
	// replacements are applied in order; a later one sees the results of
	// the earlier ones.
	Replacements []Replacement `yaml:"replacements,omitempty"`
}

// Replacement is one source and where its value goes.
type Replacement struct {
	// source is where the value comes from.
	Source *ReplSource `yaml:"source"`
	// target is where the value goes.
	Target *ReplTarget `yaml:"target,omitempty"`
	// targets are more places the value goes (upstream's type declares it
	// next to target).
	Targets []*ReplTarget `yaml:"targets,omitempty"`
}

// ReplSource is a literal value or a field of one document.
type ReplSource struct {
	// objref picks exactly one document.
	ObjRef *ObjRef `yaml:"objref,omitempty"`
	// fieldref is the path of the value in that document; the default is
	// metadata.name.
	FieldRef string `yaml:"fieldref,omitempty"`
	// value is a literal string; exclusive with objref.
	Value string `yaml:"value,omitempty"`
}

// ReplTarget is a set of documents and the fields in them that receive the
// value.
type ReplTarget struct {
	// objref picks one or more documents; at least one must exist.
	ObjRef *ObjRef `yaml:"objref,omitempty"`
	// fieldrefs are paths in each picked document. A path ending in
	// %PATTERN% replaces only the matches of the regular expression PATTERN
	// inside the string (or each string of a list) at that path.
	FieldRefs []string `yaml:"fieldrefs,omitempty"`
}

// Templater renders a Go text/template with values into documents. It is
// upstream Airship's airshipit.org/v1alpha1 Templater.
type Templater struct {
	APIVersion string         `yaml:"apiVersion"`
	Kind       string         `yaml:"kind"`
	Metadata   map[string]any `yaml:"metadata,omitempty"`
	// values is any YAML; it is the template's dot.
	Values any `yaml:"values,omitempty"`
	// template is a Go text/template producing zero or more YAML documents.
	Template string `yaml:"template,omitempty"`
}

// decodeStrict decodes a config node into out, failing on unknown fields so
// a misspelt field (fieldRef for fieldref) is an error rather than silently
// ignored.
func decodeStrict(node *yaml.RNode, out any) error {
	s, err := node.String()
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(strings.NewReader(s))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil {
		return err
	}
	return nil
}

// docID names a document for errors: Kind/name, the namespace when set, and
// the file it came from when kustomize or kio recorded it.
func docID(n *yaml.RNode) string {
	if n == nil {
		return "<nil>"
	}
	id := n.GetKind() + "/" + n.GetName()
	if id == "/" {
		id = "(document without kind and name)"
	}
	if ns := n.GetNamespace(); ns != "" {
		id += " in namespace " + ns
	}
	if p := docPath(n); p != "" {
		id += fmt.Sprintf(" (file %s)", p)
	}
	return id
}

func docPath(n *yaml.RNode) string {
	a := n.GetAnnotations()
	for _, k := range []string{"internal.config.kubernetes.io/path", "config.kubernetes.io/path", "config.k8s.io/path"} {
		if p := a[k]; p != "" {
			return p
		}
	}
	return ""
}
