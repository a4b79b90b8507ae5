package fn

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A field path, as upstream's fieldref/fieldrefs accept it, in one of two
// spellings:
//
//   - dotted: spec.template.spec.containers[name=foo].image,
//     spec.containers.0.image, data.key, metadata.annotations[a.b/c]
//     (a bracket holds an index, a key=value filter on list elements, or a
//     literal field name that may contain dots)
//   - JSONPath in braces: {.spec.containers[?(@.name == 'foo')].image},
//     {.data['key.with.dots']}, {.items[*].name}, {.a\.b},
//     {.spec.files[:].content} (slices [start:end:step], as Kubernetes
//     JSONPath reads them)
//
// Both compile to the same steps.

type stepKind int

const (
	stepField stepKind = iota
	stepIndex
	stepFilter
	stepWildcard
	stepSlice
)

type step struct {
	kind  stepKind
	field string   // stepField
	index int      // stepIndex; negative counts from the end
	key   []string // stepFilter: field path inside the element; empty is the element itself
	op    string   // stepFilter: "==", "!=" or "exists"
	value string   // stepFilter: literal compared with
	// stepSlice: [start:end:step] as Kubernetes JSONPath reads it; a
	// bound that is not given is nil.
	slice [3]*int
}

func (s step) String() string {
	switch s.kind {
	case stepField:
		if strings.ContainsAny(s.field, ".[]") {
			return "[" + s.field + "]"
		}
		return "." + s.field
	case stepIndex:
		return "[" + strconv.Itoa(s.index) + "]"
	case stepWildcard:
		return "[*]"
	case stepSlice:
		parts := make([]string, 0, 3)
		for i, b := range s.slice {
			if i == 2 && b == nil {
				break
			}
			if b == nil {
				parts = append(parts, "")
			} else {
				parts = append(parts, strconv.Itoa(*b))
			}
		}
		return "[" + strings.Join(parts, ":") + "]"
	default:
		k := strings.Join(s.key, ".")
		if s.op == "exists" {
			return "[?(" + k + ")]"
		}
		if s.op == "!=" {
			return "[" + k + "!=" + s.value + "]"
		}
		return "[" + k + "=" + s.value + "]"
	}
}

type fieldPath struct {
	raw   string
	steps []step
}

// prefix renders the first n steps, for errors ("spec.containers").
func (p fieldPath) prefix(n int) string {
	var b strings.Builder
	for _, s := range p.steps[:n] {
		b.WriteString(s.String())
	}
	return strings.TrimPrefix(b.String(), ".")
}

// firstField is the first field name of the path ("data" for data.key).
func (p fieldPath) firstField() string {
	if len(p.steps) > 0 && p.steps[0].kind == stepField {
		return p.steps[0].field
	}
	return ""
}

var errEmptyPath = errors.New("empty field path")

// parseFieldPath compiles either spelling.
func parseFieldPath(raw string) (fieldPath, error) {
	s := strings.TrimSpace(raw)
	var steps []step
	var err error
	if strings.HasPrefix(s, "{") {
		steps, err = parseJSONPath(s)
	} else {
		steps, err = parseDotted(s)
	}
	if err != nil {
		return fieldPath{}, fmt.Errorf("invalid field path %q: %w", raw, err)
	}
	if len(steps) == 0 {
		return fieldPath{}, fmt.Errorf("invalid field path %q: %w", raw, errEmptyPath)
	}
	return fieldPath{raw: raw, steps: steps}, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

func parseDotted(s string) ([]step, error) {
	var steps []step
	segment := func(seg string) error {
		st, ok, err := dottedSegment(seg)
		if ok {
			steps = append(steps, st)
		}
		return err
	}
	start, inBracket := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.':
			if !inBracket {
				if err := segment(s[start:i]); err != nil {
					return nil, err
				}
				start = i + 1
			}
		case '[':
			if inBracket {
				return nil, fmt.Errorf("nested [ at offset %d", i)
			}
			if err := segment(s[start:i]); err != nil {
				return nil, err
			}
			start, inBracket = i+1, true
		case ']':
			if !inBracket {
				return nil, fmt.Errorf("] without [ at offset %d", i)
			}
			st, err := bracketStep(s[start:i])
			if err != nil {
				return nil, err
			}
			steps = append(steps, st)
			start, inBracket = i+1, false
		}
	}
	if inBracket {
		return nil, errors.New("unclosed [")
	}
	if err := segment(s[start:]); err != nil {
		return nil, err
	}
	return steps, nil
}

// dottedSegment reads one dot-separated segment; an empty one is no step.
func dottedSegment(seg string) (step, bool, error) {
	switch {
	case seg == "":
		return step{}, false, nil // "a..b" and "a.[x=y]" are tolerated, as upstream
	case seg == "*":
		return step{kind: stepWildcard}, true, nil
	case isDigits(seg):
		i, err := strconv.Atoi(seg)
		if err != nil {
			return step{}, false, err
		}
		return step{kind: stepIndex, index: i}, true, nil
	}
	return step{kind: stepField, field: seg}, true, nil
}

// bracketStep reads what stands between [ and ]: a wildcard, an index
// (negative counts from the end), a filter k=v or k!=v, or a field name.
func bracketStep(c string) (step, error) {
	c = strings.TrimSpace(c)
	switch {
	case c == "":
		return step{}, errors.New("empty []")
	case c == "*":
		return step{kind: stepWildcard}, nil
	case isDigits(c) || (strings.HasPrefix(c, "-") && isDigits(c[1:])):
		i, err := strconv.Atoi(c)
		if err != nil {
			return step{}, err
		}
		return step{kind: stepIndex, index: i}, nil
	case strings.Contains(c, "="):
		k, v, _ := strings.Cut(c, "=")
		op := "=="
		if strings.HasSuffix(k, "!") {
			op, k = "!=", strings.TrimSuffix(k, "!")
		}
		st := step{kind: stepFilter, op: op, value: unquote(v)}
		if k = strings.TrimSpace(k); k != "" {
			st.key = []string{k} // a literal field name, dots and all
		}
		return st, nil
	}
	return step{kind: stepField, field: unquote(c)}, nil
}

// parseJSONPath reads the subset of Kubernetes JSONPath that addresses one
// place in a document: fields, indexes, [*], and [?(@.k == 'v')] filters.
func parseJSONPath(s string) ([]step, error) {
	if !strings.HasSuffix(s, "}") {
		return nil, errors.New("JSONPath must end with }")
	}
	in := strings.TrimSpace(s[1 : len(s)-1])
	var steps []step
	i := 0
	readName := func() string {
		var b strings.Builder
		for i < len(in) {
			c := in[i]
			if c == '\\' && i+1 < len(in) {
				b.WriteByte(in[i+1])
				i += 2
				continue
			}
			if c == '.' || c == '[' {
				break
			}
			b.WriteByte(c)
			i++
		}
		return strings.TrimSpace(b.String())
	}
	for i < len(in) {
		switch in[i] {
		case '.':
			i++
			if i < len(in) && in[i] == '.' {
				return nil, errors.New("recursive descent (..) is not supported")
			}
			if i < len(in) && in[i] == '*' {
				steps = append(steps, step{kind: stepWildcard})
				i++
				continue
			}
			if name := readName(); name != "" {
				steps = append(steps, step{kind: stepField, field: name})
			}
		case '[':
			end, err := closingBracket(in, i)
			if err != nil {
				return nil, err
			}
			st, err := parseJSONPathBracket(in[i+1 : end])
			if err != nil {
				return nil, err
			}
			steps = append(steps, st)
			i = end + 1
		case '$', '@':
			i++
		case ' ':
			i++
		default:
			if name := readName(); name != "" {
				steps = append(steps, step{kind: stepField, field: name})
			} else {
				return nil, fmt.Errorf("unexpected %q at offset %d", in[i], i)
			}
		}
	}
	return steps, nil
}

func closingBracket(s string, open int) (int, error) {
	var quote byte
	depth := 0
	for j := open; j < len(s); j++ {
		c := s[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '[':
			depth++
		case c == ']':
			depth--
			if depth == 0 {
				return j, nil
			}
		}
	}
	return 0, fmt.Errorf("unclosed [ at offset %d", open)
}

func parseJSONPathBracket(c string) (step, error) {
	c = strings.TrimSpace(c)
	switch {
	case c == "*":
		return step{kind: stepWildcard}, nil
	case isDigits(c) || (strings.HasPrefix(c, "-") && isDigits(c[1:])):
		n, err := strconv.Atoi(c)
		return step{kind: stepIndex, index: n}, err
	case strings.HasPrefix(c, "'") || strings.HasPrefix(c, "\""):
		return step{kind: stepField, field: unquote(c)}, nil
	case strings.HasPrefix(c, "?(") && strings.HasSuffix(c, ")"):
		return parseFilter(c[2 : len(c)-1])
	case strings.Contains(c, ":"):
		return parseSlice(c)
	}
	return step{}, fmt.Errorf("unsupported [%s]", c)
}

// parseSlice reads [start:end] or [start:end:step], each part optional
// ([:] is every element), as upstream's Kubernetes JSONPath does.
func parseSlice(c string) (step, error) {
	parts := strings.Split(c, ":")
	if len(parts) > 3 {
		return step{}, fmt.Errorf("slice [%s] has more than three parts", c)
	}
	st := step{kind: stepSlice}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return step{}, fmt.Errorf("slice [%s]: %q is not a number", c, p)
		}
		st.slice[i] = &n
	}
	if st.slice[2] != nil && *st.slice[2] <= 0 {
		return step{}, fmt.Errorf("slice [%s]: step must be greater than 0", c)
	}
	return st, nil
}

// sliceOf is the elements of a list a slice step selects, with Kubernetes
// JSONPath's bounds: negative bounds count from the end, and a bound
// outside the list is an error unless the slice is empty.
func (s step) sliceOf(list []*yaml.Node) ([]*yaml.Node, error) {
	n := len(list)
	start, end, by := 0, n, 1
	if s.slice[0] != nil {
		start = *s.slice[0]
		if start < 0 {
			start += n
		}
	}
	if s.slice[1] != nil {
		end = *s.slice[1]
		if end < 0 {
			end += n
		}
	}
	if s.slice[2] != nil {
		by = *s.slice[2]
	}
	if start == end {
		return nil, nil
	}
	if start < 0 || start >= n {
		return nil, fmt.Errorf("array index out of bounds: index %d, length %d", start, n)
	}
	if end < 0 || end > n {
		return nil, fmt.Errorf("array index out of bounds: index %d, length %d", end-1, n)
	}
	if start > end {
		return nil, fmt.Errorf("starting index %d is greater than ending index %d", start, end)
	}
	var out []*yaml.Node
	for i := start; i < end; i += by {
		out = append(out, list[i])
	}
	return out, nil
}

func parseFilter(expr string) (step, error) {
	expr = strings.TrimSpace(expr)
	op, at := "", -1
	var quote byte
	for j := 0; j+1 < len(expr); j++ {
		c := expr[j]
		if quote != 0 {
			if c == quote {
				quote = 0
			}
			continue
		}
		if c == '\'' || c == '"' {
			quote = c
			continue
		}
		if (c == '=' || c == '!') && expr[j+1] == '=' {
			op, at = expr[j:j+2], j
			break
		}
	}
	left, right := expr, ""
	if at >= 0 {
		left, right = expr[:at], expr[at+2:]
	} else {
		op = "exists"
	}
	left = strings.TrimSpace(left)
	left = strings.TrimPrefix(left, "@")
	var key []string
	for _, k := range splitEscaped(left) {
		if k != "" {
			key = append(key, k)
		}
	}
	if op == "exists" && len(key) == 0 {
		return step{}, fmt.Errorf("filter ?(%s) has no field and no operator", expr)
	}
	return step{kind: stepFilter, key: key, op: op, value: unquote(right)}, nil
}

// splitEscaped splits on dots that are not escaped with a backslash.
func splitEscaped(s string) []string {
	var out []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			b.WriteByte(s[i+1])
			i++
			continue
		}
		if s[i] == '.' {
			out = append(out, b.String())
			b.Reset()
			continue
		}
		b.WriteByte(s[i])
	}
	return append(out, b.String())
}

// kindName names a YAML node kind for errors.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return "a scalar"
	case yaml.AliasNode:
		return "an alias"
	}
	return "an empty node"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || (n.Tag == "" && n.Value == "" && n.Style == 0)))
}

// walk returns the nodes the path addresses in root. With create, missing
// map fields (and null values on the way) become empty maps, as upstream
// creates them; a filter or index that matches nothing yields no nodes.
func (p fieldPath) walk(root *yaml.Node, create bool) ([]*yaml.Node, error) {
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	cur := []*yaml.Node{root}
	for i, st := range p.steps {
		var next []*yaml.Node
		for _, n := range cur {
			if n.Kind == yaml.AliasNode && n.Alias != nil {
				n = n.Alias
			}
			switch st.kind {
			case stepField:
				if create && isNull(n) {
					*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				}
				if n.Kind != yaml.MappingNode {
					return nil, fmt.Errorf("%s is %s, not a map, so it has no field %q", p.where(i), kindName(n), st.field)
				}
				v := mapValue(n, st.field)
				if v == nil && create {
					v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: st.field}, v)
				}
				if v != nil {
					next = append(next, v)
				}
			case stepIndex:
				if n.Kind != yaml.SequenceNode {
					return nil, fmt.Errorf("%s is %s, not a list, so it has no index %d", p.where(i), kindName(n), st.index)
				}
				idx := st.index
				if idx < 0 {
					idx += len(n.Content)
				}
				if idx < 0 || idx >= len(n.Content) {
					return nil, fmt.Errorf("%s: array index out of bounds: index %d, length %d", p.where(i), st.index, len(n.Content))
				}
				next = append(next, n.Content[idx])
			case stepFilter:
				if n.Kind != yaml.SequenceNode {
					return nil, fmt.Errorf("%s is %s, not a list, so the filter %s cannot apply", p.where(i), kindName(n), st)
				}
				for _, el := range n.Content {
					if st.matches(el) {
						next = append(next, el)
					}
				}
			case stepSlice:
				if n.Kind != yaml.SequenceNode {
					return nil, fmt.Errorf("%s is %s, not a list, so it has no slice %s", p.where(i), kindName(n), st)
				}
				els, err := st.sliceOf(n.Content)
				if err != nil {
					return nil, fmt.Errorf("%s, slice %s: %w", p.where(i), st, err)
				}
				next = append(next, els...)
			case stepWildcard:
				switch n.Kind {
				case yaml.SequenceNode:
					next = append(next, n.Content...)
				case yaml.MappingNode:
					for j := 1; j < len(n.Content); j += 2 {
						next = append(next, n.Content[j])
					}
				}
			}
		}
		cur = next
	}
	return cur, nil
}

// where names the place before step i for errors.
func (p fieldPath) where(i int) string {
	if i == 0 {
		return "the document root"
	}
	return p.prefix(i)
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for j := 0; j+1 < len(m.Content); j += 2 {
		if m.Content[j].Value == key {
			return m.Content[j+1]
		}
	}
	return nil
}

func (st step) matches(el *yaml.Node) bool {
	n := el
	for _, k := range st.key {
		if n.Kind != yaml.MappingNode {
			return false
		}
		if n = mapValue(n, k); n == nil {
			return false
		}
	}
	switch st.op {
	case "exists":
		return true
	case "!=":
		return !scalarEqual(n, st.value)
	default:
		return scalarEqual(n, st.value)
	}
}

func scalarEqual(n *yaml.Node, lit string) bool {
	if n.Kind != yaml.ScalarNode {
		return false
	}
	if n.Value == lit {
		return true
	}
	a, errA := strconv.ParseFloat(n.Value, 64)
	b, errB := strconv.ParseFloat(lit, 64)
	return errA == nil && errB == nil && a == b
}

// deepCopy copies a node tree so one source value set into many targets
// does not share (and later co-mutate) nodes.
func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = deepCopy(ch)
		}
	}
	return &c
}
