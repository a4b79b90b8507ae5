package fn

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kfilters "sigs.k8s.io/kustomize/kyaml/kio/filters"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
)

// The kyaml functions of upstream's templater: they let a template select
// and edit input documents (getItems) with kyaml filters written as YAML,
// e.g. {{ KPipe getItems (list (KFilter .grepConfig)) }}. Upstream logs and
// swallows their errors, yielding nil; here an error fails the template,
// naming the filter config's problem.

func kyamlFuncs() map[string]any {
	return map[string]any{
		"KFilter":     kFilter,
		"KPipe":       kPipe,
		"KOneFilter":  kOneFilter,
		"KYFilter":    kyFilter,
		"YFilter":     yFilter,
		"YPipe":       yPipe,
		"YOneFilter":  yOneFilter,
		"YValue":      yValue,
		"YMerge":      yMerge,
		"YListAppend": yListAppend,
		"StrToY":      strToY,
		"fileExists":  fileExists,
	}
}

// kFilter builds a kio filter (GrepFilter, Modifier, ...) from its YAML.
// GrepFilter compares with Kubernetes quantities, as upstream.
func kFilter(cfg string) (kio.Filter, error) {
	var meta yaml.ResourceMeta
	if err := yaml.Unmarshal([]byte(cfg), &meta); err != nil {
		return nil, fmt.Errorf("KFilter: %w", err)
	}
	if meta.Kind == "GrepFilter" {
		g := kfilters.GrepFilter{}
		if err := yaml.Unmarshal([]byte(cfg), &g); err != nil {
			return nil, fmt.Errorf("KFilter GrepFilter: %w", err)
		}
		g.Compare = func(a, b string) (int, error) {
			qa, err := resource.ParseQuantity(a)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", a, err)
			}
			qb, err := resource.ParseQuantity(b)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", b, err)
			}
			return qa.Cmp(qb), nil
		}
		return g, nil
	}
	k := kfilters.KFilter{}
	if err := yaml.Unmarshal([]byte(cfg), &k); err != nil {
		return nil, fmt.Errorf("KFilter: %w", err)
	}
	return k.Filter, nil
}

// yFilter builds a yaml filter (PathGetter, FieldSetter, ...) from its YAML.
func yFilter(cfg string) (yaml.Filter, error) {
	y := yaml.YFilter{}
	if err := yaml.Unmarshal([]byte(cfg), &y); err != nil {
		return nil, fmt.Errorf("YFilter: %w", err)
	}
	return y.Filter, nil
}

func asKFilters(fs []any) ([]kio.Filter, error) {
	out := make([]kio.Filter, 0, len(fs))
	for i, f := range fs {
		kf, ok := f.(kio.Filter)
		if !ok {
			return nil, fmt.Errorf("element %d is %T, not a KFilter", i, f)
		}
		out = append(out, kf)
	}
	return out, nil
}

func asYFilters(fs []any) ([]yaml.Filter, error) {
	out := make([]yaml.Filter, 0, len(fs))
	for i, f := range fs {
		yf, ok := f.(yaml.Filter)
		if !ok {
			return nil, fmt.Errorf("element %d is %T, not a YFilter", i, f)
		}
		out = append(out, yf)
	}
	return out, nil
}

// kPipe runs documents through kio filters in order.
func kPipe(input []*yaml.RNode, filters []any) ([]*yaml.RNode, error) {
	kfs, err := asKFilters(filters)
	if err != nil {
		return nil, fmt.Errorf("KPipe: %w", err)
	}
	out := input
	for _, f := range kfs {
		if out, err = f.Filter(out); err != nil {
			return nil, fmt.Errorf("KPipe: %w", err)
		}
	}
	return out, nil
}

func kOneFilter(input []*yaml.RNode, cfg string) ([]*yaml.RNode, error) {
	f, err := kFilter(cfg)
	if err != nil {
		return nil, err
	}
	return kPipe(input, []any{f})
}

// yPipe runs one document through yaml filters in order.
func yPipe(input *yaml.RNode, filters []any) (*yaml.RNode, error) {
	yfs, err := asYFilters(filters)
	if err != nil {
		return nil, fmt.Errorf("YPipe: %w", err)
	}
	out, err := input.Pipe(yfs...)
	if err != nil {
		return nil, fmt.Errorf("YPipe: %w", err)
	}
	return out, nil
}

func yOneFilter(input *yaml.RNode, cfg string) (*yaml.RNode, error) {
	f, err := yFilter(cfg)
	if err != nil {
		return nil, err
	}
	return yPipe(input, []any{f})
}

// yValue turns a node into plain template data (maps, lists, scalars).
func yValue(input *yaml.RNode) (any, error) {
	if input == nil {
		return nil, nil
	}
	var v any
	if err := input.YNode().Decode(&v); err != nil {
		return nil, fmt.Errorf("YValue: %w", err)
	}
	return v, nil
}

// kyFilter is a kio filter applying yaml filters to every document.
type kyFilterT struct{ filters []yaml.Filter }

func (k kyFilterT) Filter(input []*yaml.RNode) ([]*yaml.RNode, error) {
	for _, n := range input {
		if err := n.PipeE(k.filters...); err != nil {
			return nil, err
		}
	}
	return input, nil
}

func kyFilter(filters []any) (kio.Filter, error) {
	yfs, err := asYFilters(filters)
	if err != nil {
		return nil, fmt.Errorf("KYFilter: %w", err)
	}
	return kyFilterT{filters: yfs}, nil
}

// yMerge merges src into dest (kyaml merge2, lists prepended as upstream).
func yMerge(src, dest *yaml.RNode) (*yaml.RNode, error) {
	out, err := merge2.Merge(src, dest, yaml.MergeOptions{ListIncreaseDirection: yaml.MergeOptionsListPrepend})
	if err != nil {
		return nil, fmt.Errorf("YMerge: %w", err)
	}
	return out, nil
}

func yListAppend(list, el *yaml.RNode) (*yaml.RNode, error) {
	out, err := list.Pipe(&yaml.ElementAppender{Elements: []*yaml.Node{el.YNode()}})
	if err != nil {
		return nil, fmt.Errorf("YListAppend: %w", err)
	}
	return out, nil
}

func strToY(s string) (*yaml.RNode, error) {
	n, err := yaml.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("StrToY: %w", err)
	}
	return n, nil
}

// fileExists reports whether path exists, relative to the directory the
// function runs in (the kustomization's, under kustomize).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
