package fn

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// matcher is an ObjRef compiled once per replacement.
type matcher struct {
	ref                  ObjRef
	apiVersion           *regexp.Regexp
	group, version, kind *regexp.Regexp
	name, namespace      *regexp.Regexp
	labels, annotations  labels.Selector
}

// anchored compiles an upstream-style value: an anchored regular
// expression. A value that is not a valid expression matches itself.
func anchored(v string) *regexp.Regexp {
	if v == "" {
		return nil
	}
	re, err := regexp.Compile("^(?:" + v + ")$")
	if err != nil {
		return regexp.MustCompile("^" + regexp.QuoteMeta(v) + "$")
	}
	return re
}

func newMatcher(ref ObjRef) (*matcher, error) {
	m := &matcher{
		ref:        ref,
		apiVersion: anchored(ref.APIVersion),
		group:      anchored(ref.Group),
		version:    anchored(ref.Version),
		kind:       anchored(ref.Kind),
		name:       anchored(ref.Name),
		namespace:  anchored(ref.Namespace),
	}
	var err error
	if ref.LabelSelector != "" {
		if m.labels, err = labels.Parse(ref.LabelSelector); err != nil {
			return nil, fmt.Errorf("objref labelSelector %q: %w", ref.LabelSelector, err)
		}
	}
	if ref.AnnotationSelector != "" {
		if m.annotations, err = labels.Parse(ref.AnnotationSelector); err != nil {
			return nil, fmt.Errorf("objref annotationSelector %q: %w", ref.AnnotationSelector, err)
		}
	}
	return m, nil
}

func splitAPIVersion(av string) (group, version string) {
	if g, v, ok := strings.Cut(av, "/"); ok {
		return g, v
	}
	return "", av
}

func matchRe(re *regexp.Regexp, v string) bool { return re == nil || re.MatchString(v) }

func (m *matcher) matches(n *yaml.RNode) bool {
	av := n.GetApiVersion()
	g, v := splitAPIVersion(av)
	if !matchRe(m.apiVersion, av) || !matchRe(m.group, g) || !matchRe(m.version, v) ||
		!matchRe(m.kind, n.GetKind()) || !matchRe(m.name, n.GetName()) || !matchRe(m.namespace, n.GetNamespace()) {
		return false
	}
	if m.labels != nil && !m.labels.Matches(labels.Set(n.GetLabels())) {
		return false
	}
	if m.annotations != nil && !m.annotations.Matches(labels.Set(n.GetAnnotations())) {
		return false
	}
	return true
}

func (m *matcher) filter(items []*yaml.RNode) []*yaml.RNode {
	var out []*yaml.RNode
	for _, it := range items {
		if m.matches(it) {
			out = append(out, it)
		}
	}
	return out
}

// describeCandidates lists what exists, for a not-found error: documents of
// the asked kind if there are any, else every document (at most 10 named).
func describeCandidates(ref ObjRef, items []*yaml.RNode) string {
	pool := items
	if ref.Kind != "" {
		km := &matcher{kind: anchored(ref.Kind)}
		if same := km.filter(items); len(same) > 0 {
			pool = same
		} else {
			pool = items
		}
	}
	if len(pool) == 0 {
		return "there are no documents"
	}
	const limit = 10
	var names []string
	for i, it := range pool {
		if i == limit {
			names = append(names, fmt.Sprintf("and %d more", len(pool)-limit))
			break
		}
		id := it.GetApiVersion() + " " + it.GetKind() + "/" + it.GetName()
		if ns := it.GetNamespace(); ns != "" {
			id += " (namespace " + ns + ")"
		}
		names = append(names, id)
	}
	return "documents present: " + strings.Join(names, ", ")
}
