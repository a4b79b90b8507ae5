package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// Document is one Armada document as read from a file.
type Document struct {
	Schema   string
	Metadata struct {
		Name string
	}
	Data json.RawMessage

	// File and Index locate the document for messages (Index counts from 0).
	File  string
	Index int
}

func (d *Document) where() string {
	return fmt.Sprintf("%s: document %d (%s %q)", d.File, d.Index, d.Schema, d.Metadata.Name)
}

// Problems is every problem found in a set of documents, in input order.
// Its message lists them all, one per line.
type Problems []string

func (p Problems) Error() string {
	if len(p) == 1 {
		return p[0]
	}
	return fmt.Sprintf("%d problems:\n  - %s", len(p), strings.Join(p, "\n  - "))
}

// orNil returns p as an error, or nil when it is empty.
func (p Problems) orNil() error {
	if len(p) == 0 {
		return nil
	}
	return p
}

// Read splits a multi-document YAML stream into documents. A document that
// cannot be read is a problem; the others are still returned, so that every
// problem of a file is reported at once (the error is then Problems).
func Read(file string, r io.Reader) ([]*Document, error) {
	dec := utilyaml.NewYAMLReader(bufioReader(r))
	var out []*Document
	var probs Problems
	for i := 0; ; i++ {
		raw, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return out, probs.orNil()
		}
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s: document %d: %v", file, i, err))
			return out, probs
		}
		if len(bytes.TrimSpace(raw)) == 0 || isComment(raw) {
			i--
			continue
		}
		d, err := readDocument(file, i, raw)
		if err != nil {
			probs = append(probs, err.Error())
			continue
		}
		if d != nil {
			out = append(out, d)
		}
	}
}

// readDocument decodes one document. Documents of other schemas are kept
// (Convert skips them) as long as they are YAML objects; an armada/
// document must have exactly schema, metadata (with a string name) and
// data.
func readDocument(file string, i int, raw []byte) (*Document, error) {
	var top map[string]any
	if err := yaml.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%s: document %d: not valid YAML: %v", file, i, cleanYAMLError(err))
	}
	if top == nil {
		return nil, nil
	}
	d := &Document{File: file, Index: i}
	schema, ok := top["schema"].(string)
	if !ok {
		if _, isArmada := top["schema"]; !isArmada {
			// Not a schema/metadata/data document at all (a Kubernetes
			// object, say): not Armada's, skipped.
			return d, nil
		}
		return nil, fmt.Errorf("%s: document %d: schema: must be a string", file, i)
	}
	d.Schema = schema
	if md, ok := top["metadata"].(map[string]any); ok {
		if n, ok := md["name"].(string); ok {
			d.Metadata.Name = n
		} else if _, has := md["name"]; has && strings.HasPrefix(schema, "armada/") {
			return nil, fmt.Errorf("%s: metadata.name: must be a string", d.where())
		}
	}
	if !strings.HasPrefix(schema, "armada/") {
		return d, nil
	}
	var probs []string
	for k := range top {
		if k != "schema" && k != "metadata" && k != "data" {
			probs = append(probs, fmt.Sprintf("unknown field %q", k))
		}
	}
	if _, ok := top["metadata"].(map[string]any); !ok {
		probs = append(probs, "metadata: must be an object with a name")
	}
	data, ok := top["data"].(map[string]any)
	if !ok {
		probs = append(probs, "data: must be an object")
	}
	if len(probs) > 0 {
		sortStrings(probs)
		return nil, fmt.Errorf("%s: %s", d.where(), strings.Join(probs, "; "))
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("%s: data: %w", d.where(), err)
	}
	d.Data = b
	return d, nil
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
// or "" for a schema that is not armada/<Chart|ChartGroup|Manifest>/<v1|v2>.
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
	// AllowDangling accepts references to charts and groups that are not
	// among the documents (a partial tree converted piece by piece).
	AllowDangling bool
}

// Result is the converted objects, in input order, and warnings about
// fields of older Armada versions that have no place in the objects.
type Result struct {
	Objects  []runtime.Object
	Warnings []string
}

// deprecated lists, per kind, data fields of older Armada versions that
// the objects have no place for: dropped with a warning, not an error.
var deprecated = map[string]map[string]string{
	"Chart": {"timeout": "the v1 chart timeout; use data.wait.timeout"},
}

// Convert converts the Armada documents of docs. Every problem is reported
// at once, as Problems, each naming the file, the document and the field;
// there is no result then.
func Convert(docs []*Document, o Options) (*Result, error) {
	c := &converter{
		o:          o,
		res:        &Result{},
		names:      map[string]map[string]*Document{"Chart": {}, "ChartGroup": {}, "Manifest": {}},
		inGroup:    map[string]bool{},
		inManifest: map[string]bool{},
	}
	for _, d := range c.index(docs) {
		switch kind(d.Schema) {
		case "Chart":
			c.chart(d)
		case "ChartGroup":
			c.chartGroup(d)
		case "Manifest":
			c.manifest(d)
		}
	}
	if !o.AllowDangling {
		c.checkRefs()
	}
	if len(c.probs) > 0 {
		return nil, c.probs
	}
	c.markMembers()
	return c.res, nil
}

// converter is one Convert call: what it has converted, the problems found
// and what the references are checked against afterwards.
type converter struct {
	o     Options
	res   *Result
	probs Problems
	refs  []ref
	// names: kind → metadata.name → its document.
	names map[string]map[string]*Document
	// inGroup and inManifest are the charts named by a group and the groups
	// named by a manifest.
	inGroup, inManifest map[string]bool
}

// ref is a document's list of names of other documents, checked once every
// document is known.
type ref struct {
	doc   *Document
	field string
	names []string
}

// bad records a problem of document d.
func (c *converter) bad(d *Document, format string, args ...any) {
	c.probs = append(c.probs, d.where()+": "+fmt.Sprintf(format, args...))
}

// index returns the Armada documents among docs, in order, and records
// their names; a document with an unknown schema, no name or a name its kind
// already has is a problem and left out.
func (c *converter) index(docs []*Document) []*Document {
	var armadaDocs []*Document
	for _, d := range docs {
		if !strings.HasPrefix(d.Schema, "armada/") {
			continue
		}
		k := kind(d.Schema)
		if k == "" {
			c.probs = append(c.probs, fmt.Sprintf("%s: schema: unknown Armada schema (want armada/Chart, armada/ChartGroup or armada/Manifest, version v1 or v2)", d.where()))
			continue
		}
		if d.Metadata.Name == "" {
			c.probs = append(c.probs, fmt.Sprintf("%s: metadata.name is required", d.where()))
			continue
		}
		if first, dup := c.names[k][d.Metadata.Name]; dup {
			c.probs = append(c.probs, fmt.Sprintf("%s: metadata.name: a %s named %q is already defined in %s document %d", d.where(), d.Schema, d.Metadata.Name, first.File, first.Index))
			continue
		}
		c.names[k][d.Metadata.Name] = d
		armadaDocs = append(armadaDocs, d)
	}
	return armadaDocs
}

// meta is the object metadata of document d.
func (c *converter) meta(d *Document) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: d.Metadata.Name, Namespace: c.o.Namespace}
}

// decode fills spec from data; when it cannot, that is a problem.
func (c *converter) decode(d *Document, data []byte, spec any) bool {
	if err := decodeStrict(d, data, spec); err != nil {
		c.probs = append(c.probs, err.Error())
		return false
	}
	return true
}

// add keeps the object converted from d, and the names its field refers
// to for checkRefs.
func (c *converter) add(d *Document, obj runtime.Object, field string, names []string) {
	c.refs = append(c.refs, ref{d, field, names})
	c.res.Objects = append(c.res.Objects, obj)
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: armadav1.GroupVersion.String(), Kind: kind}
}

// chart converts an armada/Chart into an ArmadaChart.
func (c *converter) chart(d *Document) {
	data, warnings, err := normalizeChart(d)
	if err != nil {
		c.probs = append(c.probs, err.Error())
		return
	}
	c.res.Warnings = append(c.res.Warnings, warnings...)
	var spec armadav1.ArmadaChartSpec
	if !c.decode(d, data, &spec) {
		return
	}
	if spec.Release == "" {
		c.bad(d, "data.release is required")
	}
	if spec.Namespace == "" {
		c.bad(d, "data.namespace is required")
	}
	if spec.Source.Location == "" {
		c.bad(d, "data.source.location is required")
	}
	if spec.Source.Type == "" {
		c.bad(d, "data.source.type is required")
	}
	if spec.Values != nil && len(spec.Values.Raw) > 0 && string(spec.Values.Raw) != "null" && !bytes.HasPrefix(bytes.TrimSpace(spec.Values.Raw), []byte("{")) {
		c.bad(d, "data.values: must be a map of values, got %s", jsonKind(spec.Values.Raw))
	}
	c.add(d, &armadav1.ArmadaChart{TypeMeta: typeMeta("ArmadaChart"), ObjectMeta: c.meta(d), Spec: spec}, "data.dependencies", spec.Dependencies)
}

// chartGroup converts an armada/ChartGroup into an ArmadaChartGroup.
func (c *converter) chartGroup(d *Document) {
	var spec armadav1.ArmadaChartGroupSpec
	if !c.decode(d, d.Data, &spec) {
		return
	}
	if len(spec.ChartGroup) == 0 {
		c.bad(d, "data.chart_group must list at least one chart")
	}
	for _, name := range spec.ChartGroup {
		c.inGroup[name] = true
	}
	c.add(d, &armadav1.ArmadaChartGroup{TypeMeta: typeMeta("ArmadaChartGroup"), ObjectMeta: c.meta(d), Spec: spec}, "data.chart_group", spec.ChartGroup)
}

// manifest converts an armada/Manifest into an ArmadaManifest.
func (c *converter) manifest(d *Document) {
	var spec armadav1.ArmadaManifestSpec
	if !c.decode(d, d.Data, &spec) {
		return
	}
	if spec.ReleasePrefix == "" {
		c.bad(d, "data.release_prefix is required")
	}
	if len(spec.ChartGroups) == 0 {
		c.bad(d, "data.chart_groups must list at least one chart group")
	}
	for _, g := range spec.ChartGroups {
		c.inManifest[g] = true
	}
	c.add(d, &armadav1.ArmadaManifest{TypeMeta: typeMeta("ArmadaManifest"), ObjectMeta: c.meta(d), Spec: spec}, "data.chart_groups", spec.ChartGroups)
}

// checkRefs makes a problem of every reference to a chart or group that is
// not among the documents.
func (c *converter) checkRefs() {
	target := map[string]string{"data.dependencies": "Chart", "data.chart_group": "Chart", "data.chart_groups": "ChartGroup"}
	for _, r := range c.refs {
		for i, n := range r.names {
			if _, ok := c.names[target[r.field]][n]; !ok {
				c.probs = append(c.probs, fmt.Sprintf("%s: %s[%d]: no armada/%s document named %q (--allow-dangling accepts references outside the given files)", r.doc.where(), r.field, i, target[r.field], n))
			}
		}
	}
}

// markMembers leaves members of a group (or manifest) uninitialized unless
// they say otherwise: they wait for the group to enable them.
func (c *converter) markMembers() {
	for _, obj := range c.res.Objects {
		switch x := obj.(type) {
		case *armadav1.ArmadaChart:
			if c.inGroup[x.Name] && x.Spec.TargetState == "" {
				x.Spec.TargetState = armadav1.TargetStateUninitialized
			}
		case *armadav1.ArmadaChartGroup:
			if c.inManifest[x.Name] && x.Spec.TargetState == "" {
				x.Spec.TargetState = armadav1.TargetStateUninitialized
			}
		}
	}
}

// decodeStrict fills spec from data; an unknown field or a value of the
// wrong type is a problem naming the field.
func decodeStrict(d *Document, data []byte, spec any) error {
	if len(data) == 0 {
		return nil
	}
	// sigs.k8s.io/json names an unknown field by its whole path
	// ("wait.timout"), which encoding/json does not.
	strict, err := kjson.UnmarshalStrict(data, spec)
	if err != nil {
		return fmt.Errorf("%s: data: %s", d.where(), cleanYAMLError(err))
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = cleanYAMLError(e)
		}
		sortStrings(msgs)
		return fmt.Errorf("%s: data: %s", d.where(), strings.Join(msgs, "; "))
	}
	return nil
}

// cleanYAMLError drops the layers of prefixes the YAML and JSON decoders put
// before the message, and says where a wrongly typed value is.
func cleanYAMLError(err error) string {
	msg := err.Error()
	for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		msg = strings.ReplaceAll(msg, p, "")
	}
	// "cannot unmarshal string into Go struct field ArmadaChartWait.wait.timeout of type int"
	if i := strings.Index(msg, "Go struct field "); i >= 0 {
		rest := msg[i+len("Go struct field "):]
		if j := strings.Index(rest, " of type "); j >= 0 {
			field := rest[:j]
			if k := strings.Index(field, "."); k >= 0 {
				field = field[k+1:]
			}
			msg = fmt.Sprintf("%s: %s, want %s", field, strings.TrimSuffix(msg[:i], " into "), rest[j+len(" of type "):])
		}
	}
	return msg
}

func jsonKind(raw []byte) string {
	switch b := bytes.TrimSpace(raw); {
	case len(b) == 0:
		return "nothing"
	case b[0] == '[':
		return "a list"
	case b[0] == '"':
		return "a string"
	case b[0] == 't' || b[0] == 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

func sortStrings(s []string) { sort.Strings(s) }

// normalizeChart rewrites the Armada spellings the CRD has no field for:
// test as a bare boolean (v1), and wait.resources as a map keyed by type.
func normalizeChart(d *Document) ([]byte, []string, error) {
	var m map[string]any
	if err := json.Unmarshal(d.Data, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: data: %w", d.where(), err)
	}
	var warnings []string
	for _, f := range sortedKeys(deprecated["Chart"]) {
		if _, ok := m[f]; ok {
			warnings = append(warnings, fmt.Sprintf("%s: data.%s dropped: %s", d.where(), f, deprecated["Chart"][f]))
			delete(m, f)
		}
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
					return nil, nil, fmt.Errorf("%s: data.wait.resources.%s: want an object, got %T", d.where(), t, v)
				}
				list = append(list, entry)
			}
			for k := range rm {
				if !strings.Contains("job pod deployment daemonset statefulset", k) {
					return nil, nil, fmt.Errorf("%s: data.wait.resources.%s: unknown resource type", d.where(), k)
				}
			}
			w["resources"] = list
		}
	}
	b, err := json.Marshal(m)
	return b, warnings, err
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
