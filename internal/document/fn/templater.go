package fn

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airshipit/airship-go/internal/pki"
)

// Entropy is where generated material takes its randomness and time from.
// The zero value uses crypto/rand and the wall clock.
//
// Since Go 1.26 crypto/rsa and crypto/ecdsa ignore a caller's reader and
// always use the secure source; tests that need identical keys across runs
// also call testing/cryptotest.SetGlobalRandom. Rand still drives what this
// package draws itself: certificate serial numbers and regexGen output.
type Entropy = pki.Env

// TemplaterFunction runs one Templater config.
type TemplaterFunction struct {
	Config  *Templater
	name    string
	Entropy Entropy
}

// NewTemplater decodes a Templater config.
func NewTemplater(config *yaml.RNode, e Entropy) (*TemplaterFunction, error) {
	t := &Templater{}
	if err := decodeStrict(config, t); err != nil {
		return nil, fmt.Errorf("%s: decoding config: %w", docID(config), err)
	}
	name := config.GetName()
	if name == "" {
		name = "templater"
	}
	return &TemplaterFunction{Config: t, name: name, Entropy: e}, nil
}

// Filter renders the template and appends the documents it produces to
// items. The template may also read the input with getItems and replace it
// with setItems (upstream's transformer mode), and may call the named
// templates ({{ define }}) of any Templater document among the items
// (upstream's template modules) through template or include.
func (t *TemplaterFunction) Filter(items []*yaml.RNode) ([]*yaml.RNode, error) {
	state := &templaterState{items: items}
	root := template.New(t.name)
	funcs := t.funcMap(root, state)
	root.Funcs(funcs)
	for _, it := range items {
		if it.GetApiVersion() != APIVersion || it.GetKind() != KindTemplater || it.GetName() == t.name {
			// kustomize passes a generator its own config as input; it is
			// the template, not a module.
			continue
		}
		mod := &Templater{}
		if err := decodeStrict(it, mod); err != nil {
			return nil, fmt.Errorf("template module %s: %w", docID(it), err)
		}
		if _, err := root.New(it.GetName()).Parse(mod.Template); err != nil {
			return nil, fmt.Errorf("template module %s: %w", docID(it), err)
		}
	}
	if _, err := root.Parse(t.Config.Template); err != nil {
		return nil, redactError(err)
	}
	var out bytes.Buffer
	if err := root.Execute(&out, t.Config.Values); err != nil {
		return nil, redactError(err)
	}
	rendered, err := (&kio.ByteReader{Reader: &out, OmitReaderAnnotations: true}).Read()
	if err != nil {
		// The rendered text may hold generated keys: say where, never what.
		return nil, fmt.Errorf("template output is not valid YAML: %w", redactError(err))
	}
	result := state.items
	for _, r := range rendered {
		if r.IsNilOrEmpty() {
			continue
		}
		result = append(result, r)
	}
	return result, nil
}

type templaterState struct {
	items []*yaml.RNode
}

func (t *TemplaterFunction) funcMap(root *template.Template, state *templaterState) template.FuncMap {
	fm := sprig.TxtFuncMap()
	g := &generator{e: t.Entropy}
	for k, v := range map[string]any{
		"genCAEx":                g.genCAEx,
		"genCAWithKeyEx":         g.genCAWithKeyEx,
		"genSignedCertEx":        g.genSignedCertEx,
		"genSignedCertWithKeyEx": g.genSignedCertWithKeyEx,
		"genSSHKeyPair":          g.genSSHKeyPair,
		"regexGen":               g.regexGen,
		"toYaml":                 toYaml,
		"toUint32":               toUint32,
		"include": func(name string, data any) (string, error) {
			var b strings.Builder
			if err := root.ExecuteTemplate(&b, name, data); err != nil {
				return "", err
			}
			return b.String(), nil
		},
		"getItems": func() []*yaml.RNode { return state.items },
		"setItems": func(v any) (string, error) {
			items, err := toRNodes(v)
			if err != nil {
				return "", err
			}
			state.items = items
			return "", nil
		},
	} {
		fm[k] = v
	}
	for k, v := range kyamlFuncs() {
		fm[k] = v
	}
	return fm
}

func toRNodes(v any) ([]*yaml.RNode, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []*yaml.RNode:
		return x, nil
	case []any:
		out := make([]*yaml.RNode, 0, len(x))
		for i, e := range x {
			rn, ok := e.(*yaml.RNode)
			if !ok {
				return nil, fmt.Errorf("setItems: element %d is %T, not a document", i, e)
			}
			out = append(out, rn)
		}
		return out, nil
	}
	return nil, fmt.Errorf("setItems: %T is not a list of documents", v)
}
