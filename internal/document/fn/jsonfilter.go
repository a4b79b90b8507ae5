package fn

import (
	"fmt"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// jsonFilter is the JSONPath subset upstream's sops function accepts as
// cmd-json-path-filter and cmd-extra-params-json-path-filter, evaluated on
// the one-element list [document] as upstream does:
//
//	$[?(@.metadata.name=="x" && @.kind=="Secret")]
//	$[?(@.metadata.labels['a/b'] != 'y' || !@.metadata.annotations.z)]
//	$[*]   $
//
// Comparisons are == and != (=== and !== alike) between a field of the
// document (@.path, with .name or ['name'] steps) and a literal (a quoted
// string, a number, true, false or null); a bare @.path is true when the
// field exists and is not null, false, 0 or "". &&, ||, ! and parentheses
// combine them.
type jsonFilter struct {
	src  string
	expr jsonExpr // nil matches every document
}

type jsonExpr interface {
	eval(doc *yaml.Node) bool
}

type (
	jsonOr      struct{ a, b jsonExpr }
	jsonAnd     struct{ a, b jsonExpr }
	jsonNot     struct{ a jsonExpr }
	jsonExists  struct{ path []string }
	jsonCompare struct {
		path  []string
		neg   bool
		lit   string
		isStr bool
		null  bool
	}
)

func (e jsonOr) eval(d *yaml.Node) bool  { return e.a.eval(d) || e.b.eval(d) }
func (e jsonAnd) eval(d *yaml.Node) bool { return e.a.eval(d) && e.b.eval(d) }
func (e jsonNot) eval(d *yaml.Node) bool { return !e.a.eval(d) }

func lookupPath(d *yaml.Node, path []string) *yaml.Node {
	n := d
	for _, p := range path {
		if n == nil {
			return nil
		}
		switch n.Kind {
		case yaml.MappingNode:
			n = mapValue(n, p)
		case yaml.SequenceNode:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
	}
	return n
}

func (e jsonExists) eval(d *yaml.Node) bool {
	n := lookupPath(d, e.path)
	if n == nil || isNull(n) {
		return false
	}
	if n.Kind != yaml.ScalarNode {
		return true
	}
	switch n.ShortTag() {
	case "!!bool":
		return n.Value == "true"
	case "!!int", "!!float":
		f, err := strconv.ParseFloat(n.Value, 64)
		return err != nil || f != 0
	}
	return n.Value != ""
}

func (e jsonCompare) eval(d *yaml.Node) bool {
	n := lookupPath(d, e.path)
	var eq bool
	switch {
	case e.null:
		eq = n == nil || isNull(n)
	case n == nil || n.Kind != yaml.ScalarNode || isNull(n):
		eq = false
	case e.isStr:
		eq = n.Value == e.lit
	default:
		// A number or boolean literal: compare as numbers when both are.
		a, errA := strconv.ParseFloat(n.Value, 64)
		b, errB := strconv.ParseFloat(e.lit, 64)
		if errA == nil && errB == nil {
			eq = a == b
		} else {
			eq = n.Value == e.lit
		}
	}
	return eq != e.neg
}

// matches reports whether the filter selects doc.
func (f *jsonFilter) matches(doc *yaml.RNode) bool {
	if f == nil || f.expr == nil {
		return true
	}
	return f.expr.eval(doc.YNode())
}

func parseJSONFilter(src string) (*jsonFilter, error) {
	s := strings.TrimSpace(src)
	switch s {
	case "", "$", "$[*]", "$.*", "$..*":
		return &jsonFilter{src: src}, nil
	}
	if !strings.HasPrefix(s, "$[?(") || !strings.HasSuffix(s, ")]") {
		return nil, fmt.Errorf("JSONPath filter %q: want $[?(expression)]", src)
	}
	p := &jsonParser{s: s[len("$[?(") : len(s)-len(")]")]}
	e, err := p.or()
	if err != nil {
		return nil, fmt.Errorf("JSONPath filter %q: %w", src, err)
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("JSONPath filter %q: unexpected %q", src, p.s[p.i:])
	}
	return &jsonFilter{src: src, expr: e}, nil
}

type jsonParser struct {
	s string
	i int
}

func (p *jsonParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *jsonParser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.s[p.i:], tok) {
		p.i += len(tok)
		return true
	}
	return false
}

func (p *jsonParser) or() (jsonExpr, error) {
	a, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.eat("||") {
		b, err := p.and()
		if err != nil {
			return nil, err
		}
		a = jsonOr{a, b}
	}
	return a, nil
}

func (p *jsonParser) and() (jsonExpr, error) {
	a, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.eat("&&") {
		b, err := p.unary()
		if err != nil {
			return nil, err
		}
		a = jsonAnd{a, b}
	}
	return a, nil
}

func (p *jsonParser) unary() (jsonExpr, error) {
	p.space()
	if strings.HasPrefix(p.s[p.i:], "!") && !strings.HasPrefix(p.s[p.i:], "!=") {
		p.i++
		a, err := p.unary()
		if err != nil {
			return nil, err
		}
		return jsonNot{a}, nil
	}
	if p.eat("(") {
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("missing ) at offset %d", p.i)
		}
		return e, nil
	}
	return p.comparison()
}

func (p *jsonParser) comparison() (jsonExpr, error) {
	p.space()
	if !strings.HasPrefix(p.s[p.i:], "@") {
		return nil, fmt.Errorf("want @.field at offset %d", p.i)
	}
	p.i++
	path, err := p.path()
	if err != nil {
		return nil, err
	}
	var neg bool
	switch {
	case p.eat("==="), p.eat("=="):
	case p.eat("!=="), p.eat("!="):
		neg = true
	default:
		return jsonExists{path}, nil
	}
	c := jsonCompare{path: path, neg: neg}
	p.space()
	switch {
	case p.i < len(p.s) && (p.s[p.i] == '"' || p.s[p.i] == '\''):
		lit, err := p.quoted()
		if err != nil {
			return nil, err
		}
		c.lit, c.isStr = lit, true
	default:
		start := p.i
		for p.i < len(p.s) && strings.IndexByte(" \t\n)&|", p.s[p.i]) < 0 {
			p.i++
		}
		c.lit = p.s[start:p.i]
		switch c.lit {
		case "null":
			c.null = true
		case "true", "false":
		default:
			if _, err := strconv.ParseFloat(c.lit, 64); err != nil {
				return nil, fmt.Errorf("literal %q is not a quoted string, number, true, false or null", c.lit)
			}
		}
	}
	return c, nil
}

// path reads .name and ['name'] / [0] steps after @.
func (p *jsonParser) path() ([]string, error) {
	var path []string
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '.':
			p.i++
			start := p.i
			for p.i < len(p.s) && (isIdentByte(p.s[p.i])) {
				p.i++
			}
			if p.i == start {
				return nil, fmt.Errorf("empty field name at offset %d", start)
			}
			path = append(path, p.s[start:p.i])
		case '[':
			p.i++
			p.space()
			var name string
			if p.i < len(p.s) && (p.s[p.i] == '"' || p.s[p.i] == '\'') {
				q, err := p.quoted()
				if err != nil {
					return nil, err
				}
				name = q
			} else {
				start := p.i
				for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
					p.i++
				}
				if p.i == start {
					return nil, fmt.Errorf("want a quoted name or an index at offset %d", start)
				}
				name = p.s[start:p.i]
			}
			if !p.eat("]") {
				return nil, fmt.Errorf("missing ] at offset %d", p.i)
			}
			path = append(path, name)
		default:
			return path, nil
		}
	}
	return path, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '-' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func (p *jsonParser) quoted() (string, error) {
	q := p.s[p.i]
	var b strings.Builder
	for j := p.i + 1; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '\\' && j+1 < len(p.s):
			j++
			b.WriteByte(p.s[j])
		case c == q:
			p.i = j + 1
			return b.String(), nil
		default:
			b.WriteByte(c)
		}
	}
	return "", fmt.Errorf("unterminated string at offset %d", p.i)
}
