package fn

import (
	"encoding/base64"
	"fmt"
	"regexp"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// substringPattern splits "path%PATTERN%" as upstream does: the pattern is
// the non-space run between the last pair of percent signs at the end.
var substringPattern = regexp.MustCompile(`^(.+)%(\S+)%$`)

const (
	kindSecret      = "Secret"
	secretDataField = "data"
)

// NewReplacementTransformer decodes and checks a ReplacementTransformer
// config.
func NewReplacementTransformer(config *yaml.RNode) (*ReplacementTransformer, error) {
	rt := &ReplacementTransformer{}
	if err := decodeStrict(config, rt); err != nil {
		return nil, fmt.Errorf("%s: decoding config: %w", docID(config), err)
	}
	for i, r := range rt.Replacements {
		switch {
		case r.Source == nil:
			return nil, fmt.Errorf("%s: replacements[%d]: source is required", docID(config), i)
		case r.Target == nil && len(r.Targets) == 0:
			return nil, fmt.Errorf("%s: replacements[%d]: target is required", docID(config), i)
		case r.Source.ObjRef != nil && r.Source.Value != "":
			return nil, fmt.Errorf("%s: replacements[%d].source: only one of objref and value is allowed", docID(config), i)
		case r.Source.ObjRef == nil && r.Source.Value == "":
			return nil, fmt.Errorf("%s: replacements[%d].source: one of objref and value is required", docID(config), i)
		}
		for j, t := range r.allTargets() {
			if t == nil || t.ObjRef == nil {
				return nil, fmt.Errorf("%s: replacements[%d].target[%d]: objref is required", docID(config), i, j)
			}
		}
	}
	return rt, nil
}

func (r Replacement) allTargets() []*ReplTarget {
	var out []*ReplTarget
	if r.Target != nil {
		out = append(out, r.Target)
	}
	return append(out, r.Targets...)
}

// Filter applies the replacements in order to items, in place, and returns
// them. It is a kio.Filter.
func (rt *ReplacementTransformer) Filter(items []*yaml.RNode) ([]*yaml.RNode, error) {
	for i, r := range rt.Replacements {
		val, err := sourceValue(items, r.Source)
		if err != nil {
			return nil, fmt.Errorf("replacements[%d].source: %w", i, err)
		}
		for j, t := range r.allTargets() {
			if err := replaceTarget(items, t, val); err != nil {
				name := "target"
				if r.Target == nil || j > 0 {
					name = fmt.Sprintf("targets[%d]", j)
				}
				return nil, fmt.Errorf("replacements[%d].%s: %w", i, name, err)
			}
		}
	}
	return items, nil
}

func sourceValue(items []*yaml.RNode, src *ReplSource) (*yaml.Node, error) {
	if src.ObjRef == nil {
		return yaml.NewScalarRNode(src.Value).YNode(), nil
	}
	m, err := newMatcher(*src.ObjRef)
	if err != nil {
		return nil, err
	}
	found := m.filter(items)
	switch {
	case len(found) == 0:
		return nil, fmt.Errorf("no document matches objref %s; %s", src.ObjRef, describeCandidates(*src.ObjRef, items))
	case len(found) > 1:
		ids := make([]string, len(found))
		for i, f := range found {
			ids[i] = f.GetKind() + "/" + f.GetName()
		}
		return nil, fmt.Errorf("objref %s matches %d documents, a source must match one: %v", src.ObjRef, len(found), ids)
	}
	doc := found[0]
	ref := src.FieldRef
	if ref == "" {
		ref = "metadata.name"
	}
	p, err := parseFieldPath(ref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", docID(doc), err)
	}
	nodes, err := p.walk(doc.YNode(), false)
	if err != nil {
		return nil, fmt.Errorf("%s fieldref %q: %w", docID(doc), ref, err)
	}
	if len(nodes) == 0 {
		// Upstream's transformer carries on without a value (its
		// JSONPath lookup yields nil, not an error), and its sites rely
		// on it: ironic-deployment reads spec.ironic.provisioningCidr,
		// which no NetworkCatalogue of upstream's has. See
		// replaceTarget for what a missing value does to the targets.
		if doc.GetKind() == kindSecret && p.firstField() == secretDataField {
			return emptyString(), nil // upstream decodes "" from nothing
		}
		return nil, nil
	}
	val := nodes[0]
	if len(nodes) > 1 {
		val = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: nodes}
	}
	// A Secret's data is base64; the value carried is the decoded text and
	// a Secret target re-encodes it, as upstream does.
	if doc.GetKind() == kindSecret && p.firstField() == secretDataField {
		if val.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s fieldref %q: Secret data value is %s, not a string", docID(doc), ref, kindName(val))
		}
		b, err := base64.StdEncoding.DecodeString(val.Value)
		if err != nil {
			// The error from base64 names an offset, never the content.
			return nil, fmt.Errorf("%s fieldref %q: decoding base64: %w", docID(doc), ref, err)
		}
		return yaml.NewScalarRNode(string(b)).YNode(), nil
	}
	return deepCopy(val), nil
}

// replaceTarget sets the target fields to val. A nil val (a source field
// that does not exist) does what upstream's transformer does with one: a
// plain fieldref's missing fields are created as empty maps and existing
// values are left alone, a %PATTERN% is replaced with the empty string,
// and a Secret's data field is set to the encoding of the empty string.
func replaceTarget(items []*yaml.RNode, t *ReplTarget, val *yaml.Node) error {
	m, err := newMatcher(*t.ObjRef)
	if err != nil {
		return err
	}
	docs := m.filter(items)
	if len(docs) == 0 {
		return fmt.Errorf("no document matches objref %s; %s", t.ObjRef, describeCandidates(*t.ObjRef, items))
	}
	type compiled struct {
		raw     string
		path    fieldPath
		pattern *regexp.Regexp
	}
	refs := make([]compiled, 0, len(t.FieldRefs))
	for _, raw := range t.FieldRefs {
		c := compiled{raw: raw}
		pathPart := raw
		if g := substringPattern.FindStringSubmatch(raw); g != nil {
			pathPart = g[1]
			if c.pattern, err = regexp.Compile(g[2]); err != nil {
				return fmt.Errorf("fieldref %q: pattern %q: %w", raw, g[2], err)
			}
		}
		if c.path, err = parseFieldPath(pathPart); err != nil {
			return fmt.Errorf("fieldref %q: %w", raw, err)
		}
		refs = append(refs, c)
	}
	for _, doc := range docs {
		for _, c := range refs {
			v := val
			if doc.GetKind() == kindSecret && c.path.firstField() == secretDataField {
				if v == nil {
					v = emptyString()
				}
				if v.Kind != yaml.ScalarNode {
					return fmt.Errorf("%s fieldref %q: Secret data takes a string, the value is %s", docID(doc), c.raw, kindName(v))
				}
				if v.Value == "" {
					v = emptyString()
				} else {
					v = yaml.NewScalarRNode(base64.StdEncoding.EncodeToString([]byte(v.Value))).YNode()
				}
			}
			if c.pattern == nil {
				err = setField(doc, c.path, v)
			} else {
				err = substitute(doc, c.path, c.pattern, v)
			}
			if err != nil {
				return fmt.Errorf("%s fieldref %q: %w", docID(doc), c.raw, err)
			}
		}
	}
	return nil
}

// emptyString is the string "", written as such rather than as null.
func emptyString() *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle}
}

func setField(doc *yaml.RNode, p fieldPath, v *yaml.Node) error {
	nodes, err := p.walk(doc.YNode(), true)
	if err != nil {
		return err
	}
	if v == nil {
		return nil // the path is created, its value kept: see replaceTarget
	}
	for _, n := range nodes {
		*n = *deepCopy(v)
	}
	return nil
}

// substitute replaces the matches of pattern in the string, or in each
// string of the list, at p. A path that does not exist is left alone, as
// upstream does.
func substitute(doc *yaml.RNode, p fieldPath, pattern *regexp.Regexp, v *yaml.Node) error {
	if v == nil {
		v = emptyString()
	}
	if v.Kind != yaml.ScalarNode {
		return fmt.Errorf("a %%PATTERN%% substitution needs a string or number value, the source is %s", kindName(v))
	}
	nodes, err := p.walk(doc.YNode(), false)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		switch n.Kind {
		case yaml.ScalarNode:
			n.Value = pattern.ReplaceAllLiteralString(n.Value, v.Value)
		case yaml.SequenceNode:
			for k, el := range n.Content {
				if el.Kind != yaml.ScalarNode {
					return fmt.Errorf("%s[%d] is %s; a %%PATTERN%% substitution needs strings", p.prefix(len(p.steps)), k, kindName(el))
				}
				el.Value = pattern.ReplaceAllLiteralString(el.Value, v.Value)
			}
		default:
			return fmt.Errorf("%s is %s; a %%PATTERN%% substitution needs a string or a list of strings", p.prefix(len(p.steps)), kindName(n))
		}
	}
	return nil
}
