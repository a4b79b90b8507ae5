package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// Document is one Armada document as read from a file.
type Document struct {
	Schema   string `json:"schema"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Data json.RawMessage `json:"data"`

	// File and Index locate the document for messages (Index counts from 0).
	File  string `json:"-"`
	Index int    `json:"-"`
}

func (d *Document) where() string {
	return fmt.Sprintf("%s: document %d (%s %q)", d.File, d.Index, d.Schema, d.Metadata.Name)
}

// Read splits a multi-document YAML stream into Armada documents.
func Read(file string, r io.Reader) ([]*Document, error) {
	dec := utilyaml.NewYAMLReader(bufioReader(r))
	var out []*Document
	for i := 0; ; i++ {
		raw, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || isComment(raw) {
			i--
			continue
		}
		d := &Document{File: file, Index: i}
		if err := yaml.Unmarshal(raw, d); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, i, err)
		}
		out = append(out, d)
	}
}

func isComment(raw []byte) bool {
	for _, l := range strings.Split(string(raw), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && l != "---" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// kind returns the Armada kind of a schema ("Chart" for "armada/Chart/v2"),
// or "" for documents that are not Armada's.
func kind(schema string) string {
	parts := strings.Split(schema, "/")
	if len(parts) != 3 || parts[0] != "armada" || (parts[2] != "v1" && parts[2] != "v2") {
		return ""
	}
	switch parts[1] {
	case "Chart", "ChartGroup", "Manifest":
		return parts[1]
	}
	return ""
}

// Options tune the conversion.
type Options struct {
	// Namespace is metadata.namespace of every object; empty leaves it unset.
	Namespace string
}

// Result is the converted objects, in input order, and warnings about
// fields that were dropped.
type Result struct {
	Objects  []runtime.Object
	Warnings []string
}

// Convert converts the Armada documents of docs. Errors name the file,
// document and field.
func Convert(docs []*Document, o Options) (*Result, error) {
	res := &Result{}
	inGroup := map[string]bool{}
	inManifest := map[string]bool{}
	for _, d := range docs {
		switch kind(d.Schema) {
		case "ChartGroup":
			var data struct {
				ChartGroup []string `json:"chart_group"`
			}
			_ = json.Unmarshal(d.Data, &data)
			for _, c := range data.ChartGroup {
				inGroup[c] = true
			}
		case "Manifest":
			var data struct {
				ChartGroups []string `json:"chart_groups"`
			}
			_ = json.Unmarshal(d.Data, &data)
			for _, g := range data.ChartGroups {
				inManifest[g] = true
			}
		}
	}
	for _, d := range docs {
		k := kind(d.Schema)
		if k == "" {
			continue
		}
		if d.Metadata.Name == "" {
			return nil, fmt.Errorf("%s: metadata.name is required", d.where())
		}
		meta := metav1.ObjectMeta{Name: d.Metadata.Name, Namespace: o.Namespace}
		switch k {
		case "Chart":
			data, err := normalizeChart(d)
			if err != nil {
				return nil, err
			}
			var spec armadav1.ArmadaChartSpec
			res.Warnings = append(res.Warnings, decode(d, data, &spec)...)
			if spec.Release == "" {
				return nil, fmt.Errorf("%s: data.release is required", d.where())
			}
			if inGroup[d.Metadata.Name] && spec.TargetState == "" {
				spec.TargetState = armadav1.TargetStateUninitialized
			}
			res.Objects = append(res.Objects, &armadav1.ArmadaChart{
				TypeMeta:   metav1.TypeMeta{APIVersion: armadav1.GroupVersion.String(), Kind: "ArmadaChart"},
				ObjectMeta: meta, Spec: spec,
			})
		case "ChartGroup":
			var spec armadav1.ArmadaChartGroupSpec
			res.Warnings = append(res.Warnings, decode(d, d.Data, &spec)...)
			if len(spec.ChartGroup) == 0 {
				return nil, fmt.Errorf("%s: data.chart_group must list at least one chart", d.where())
			}
			if inManifest[d.Metadata.Name] && spec.TargetState == "" {
				spec.TargetState = armadav1.TargetStateUninitialized
			}
			res.Objects = append(res.Objects, &armadav1.ArmadaChartGroup{
				TypeMeta:   metav1.TypeMeta{APIVersion: armadav1.GroupVersion.String(), Kind: "ArmadaChartGroup"},
				ObjectMeta: meta, Spec: spec,
			})
		case "Manifest":
			var spec armadav1.ArmadaManifestSpec
			res.Warnings = append(res.Warnings, decode(d, d.Data, &spec)...)
			if spec.ReleasePrefix == "" {
				return nil, fmt.Errorf("%s: data.release_prefix is required", d.where())
			}
			res.Objects = append(res.Objects, &armadav1.ArmadaManifest{
				TypeMeta:   metav1.TypeMeta{APIVersion: armadav1.GroupVersion.String(), Kind: "ArmadaManifest"},
				ObjectMeta: meta, Spec: spec,
			})
		}
	}
	return res, nil
}

// decode fills spec from data, leniently: fields the CRD does not have are
// reported as warnings rather than failing the whole conversion.
func decode(d *Document, data []byte, spec any) []string {
	if len(data) == 0 {
		return nil
	}
	var warnings []string
	if err := yaml.UnmarshalStrict(data, spec); err != nil {
		warnings = append(warnings, fmt.Sprintf("%s: data: %v (dropped)", d.where(), err))
	}
	if err := yaml.Unmarshal(data, spec); err != nil {
		warnings = append(warnings, fmt.Sprintf("%s: data: %v", d.where(), err))
	}
	return warnings
}

// normalizeChart rewrites the Armada spellings the CRD has no field for:
// test as a bare boolean (v1), and wait.resources as a map keyed by type.
func normalizeChart(d *Document) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(d.Data, &m); err != nil {
		return nil, fmt.Errorf("%s: data: %w", d.where(), err)
	}
	if b, ok := m["test"].(bool); ok {
		m["test"] = map[string]any{"enabled": b}
	}
	if w, ok := m["wait"].(map[string]any); ok {
		if rm, ok := w["resources"].(map[string]any); ok {
			var list []any
			for _, t := range []string{"job", "pod", "deployment", "daemonset", "statefulset"} {
				v, ok := rm[t]
				if !ok {
					continue
				}
				entry := map[string]any{"type": t}
				switch vv := v.(type) {
				case map[string]any:
					for k, x := range vv {
						entry[k] = x
					}
				case bool:
					if !vv {
						continue
					}
				case nil:
				default:
					return nil, fmt.Errorf("%s: data.wait.resources.%s: want an object, got %T", d.where(), t, v)
				}
				list = append(list, entry)
			}
			for k := range rm {
				if !strings.Contains("job pod deployment daemonset statefulset", k) {
					return nil, fmt.Errorf("%s: data.wait.resources.%s: unknown resource type", d.where(), k)
				}
			}
			w["resources"] = list
		}
	}
	return json.Marshal(m)
}

// Marshal writes objects as a YAML stream ("yaml") or a JSON list ("json").
func Marshal(objs []runtime.Object, format string) ([]byte, error) {
	switch format {
	case "json":
		items := make([]any, 0, len(objs))
		for _, o := range objs {
			b, err := yaml.Marshal(o)
			if err != nil {
				return nil, err
			}
			var m map[string]any
			if err := yaml.Unmarshal(stripStatus(b), &m); err != nil {
				return nil, err
			}
			items = append(items, m)
		}
		out, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
		return append(out, '\n'), err
	case "yaml", "":
		var buf bytes.Buffer
		for i, o := range objs {
			b, err := yaml.Marshal(o)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				buf.WriteString("---\n")
			}
			buf.Write(stripStatus(b))
		}
		return buf.Bytes(), nil
	default:
		return nil, fmt.Errorf("unknown output format %q (want yaml or json)", format)
	}
}

// stripStatus drops the empty status and creationTimestamp the API types
// always serialise.
func stripStatus(b []byte) []byte {
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return b
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return b
	}
	return out
}
