package document

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Selector picks documents. Empty fields match anything.
type Selector struct {
	Group     string
	Version   string
	Kind      string
	Name      string
	Namespace string
	// LabelSelector is a Kubernetes label selector, e.g. "app=web,tier!=db".
	LabelSelector string
	// AnnotationSelector uses the same syntax over annotations.
	AnnotationSelector string
}

// NewSelector returns an empty selector (matches everything).
func NewSelector() Selector { return Selector{} }

// ByGVK narrows to a group, version and kind.
func (s Selector) ByGVK(group, version, kind string) Selector {
	s.Group, s.Version, s.Kind = group, version, kind
	return s
}

// ByAPIVersionKind narrows to an apiVersion ("group/version" or "v1") and kind.
func (s Selector) ByAPIVersionKind(apiVersion, kind string) Selector {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		gv = schema.GroupVersion{Version: apiVersion}
	}
	return s.ByGVK(gv.Group, gv.Version, kind)
}

// ByKind narrows to a kind.
func (s Selector) ByKind(kind string) Selector { s.Kind = kind; return s }

// ByName narrows to a name.
func (s Selector) ByName(name string) Selector { s.Name = name; return s }

// ByNamespace narrows to a namespace.
func (s Selector) ByNamespace(ns string) Selector { s.Namespace = ns; return s }

// ByLabel narrows by a label selector.
func (s Selector) ByLabel(sel string) Selector { s.LabelSelector = sel; return s }

// ByAnnotation narrows by an annotation selector.
func (s Selector) ByAnnotation(sel string) Selector { s.AnnotationSelector = sel; return s }

// String describes the selector for messages.
func (s Selector) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("group", s.Group)
	add("version", s.Version)
	add("kind", s.Kind)
	add("name", s.Name)
	add("namespace", s.Namespace)
	add("labels", s.LabelSelector)
	add("annotations", s.AnnotationSelector)
	if len(parts) == 0 {
		return "any document"
	}
	return strings.Join(parts, " ")
}

// compiled is a selector with parsed label and annotation selectors.
type compiled struct {
	s           Selector
	labels      labels.Selector
	annotations labels.Selector
}

func (s Selector) compile() (*compiled, error) {
	c := &compiled{s: s}
	var err error
	if s.LabelSelector != "" {
		if c.labels, err = labels.Parse(s.LabelSelector); err != nil {
			return nil, fmt.Errorf("label selector %q: %w", s.LabelSelector, err)
		}
	}
	if s.AnnotationSelector != "" {
		if c.annotations, err = labels.Parse(s.AnnotationSelector); err != nil {
			return nil, fmt.Errorf("annotation selector %q: %w", s.AnnotationSelector, err)
		}
	}
	return c, nil
}

func (c *compiled) matches(d *Document) bool {
	s := c.s
	if s.Kind != "" && s.Kind != d.Kind() {
		return false
	}
	if s.Group != "" || s.Version != "" {
		gvk := d.GroupVersionKind()
		if s.Group != "" && s.Group != gvk.Group {
			return false
		}
		if s.Version != "" && s.Version != gvk.Version {
			return false
		}
	}
	if s.Name != "" && s.Name != d.Name() {
		return false
	}
	if s.Namespace != "" && s.Namespace != d.Namespace() {
		return false
	}
	if c.labels != nil && !c.labels.Matches(labels.Set(d.Labels())) {
		return false
	}
	if c.annotations != nil && !c.annotations.Matches(labels.Set(d.Annotations())) {
		return false
	}
	return true
}

// NotFoundError says a selector matched nothing, and what the bundle has
// of the asked kind instead.
type NotFoundError struct {
	Selector Selector
	Root     string
	// Candidates are documents of the same kind (or all kinds present when
	// none of that kind exists).
	Candidates []string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("no document matches %s in bundle %s", e.Selector, e.Root)
	if len(e.Candidates) == 0 {
		return msg + " (the bundle is empty)"
	}
	what := "documents of that kind"
	if e.Selector.Kind == "" {
		what = "documents"
	}
	if !strings.Contains(e.Candidates[0], "/") {
		what = "kinds"
	}
	c := e.Candidates
	more := ""
	if len(c) > 10 {
		more = fmt.Sprintf(" and %d more", len(c)-10)
		c = c[:10]
	}
	return fmt.Sprintf("%s; %s present: %s%s", msg, what, strings.Join(c, ", "), more)
}

// AmbiguousError says a selector matched several documents where one was expected.
type AmbiguousError struct {
	Selector Selector
	Matches  []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%d documents match %s, expected one: %s", len(e.Matches), e.Selector, strings.Join(e.Matches, ", "))
}

func candidates(docs []*Document, kind string) []string {
	var out []string
	for _, d := range docs {
		if kind == "" || d.Kind() == kind {
			out = append(out, d.ID())
		}
	}
	if len(out) == 0 && kind != "" {
		seen := map[string]bool{}
		for _, d := range docs {
			if !seen[d.Kind()] {
				seen[d.Kind()] = true
				out = append(out, d.Kind())
			}
		}
		slices.Sort(out)
	}
	return out
}
