package installchart

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Rendered is a chart rendered as `helm template --include-crds` would.
type Rendered struct {
	// Objects are the templates' objects, in Helm's install order.
	Objects []*unstructured.Unstructured
	// CRDs are the objects of crds/.
	CRDs []*unstructured.Unstructured
	// Manifest is the templates' YAML as Helm would apply it.
	Manifest string
	// Notes is the rendered NOTES.txt.
	Notes string
}

// Render renders the chart at dir through the Helm SDK for a release
// named release in namespace, with vals over the chart's values (checked
// against its schema), without a cluster.
func Render(dir, release, namespace string, vals map[string]any) (*Rendered, error) {
	ch, err := loader.LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", dir, err)
	}
	install := action.NewInstall(action.NewConfiguration())
	install.DryRunStrategy = action.DryRunClient
	install.ReleaseName = release
	install.Namespace = namespace
	install.Replace = true
	rel, err := install.Run(ch, vals)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", dir, err)
	}
	r, ok := rel.(*releasev1.Release)
	if !ok {
		return nil, fmt.Errorf("rendering chart %s: unexpected release type %T", dir, rel)
	}
	out := &Rendered{Manifest: r.Manifest}
	if r.Info != nil {
		out.Notes = r.Info.Notes
	}
	if out.Objects, err = Decode([]byte(r.Manifest)); err != nil {
		return nil, fmt.Errorf("chart %s: %w", dir, err)
	}
	for _, f := range ch.CRDObjects() {
		objs, err := Decode(f.File.Data)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %s: %w", dir, f.Name, err)
		}
		out.CRDs = append(out.CRDs, objs...)
	}
	return out, nil
}

// Decode reads a multi-document YAML stream; empty documents are skipped.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", len(out)+1, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}
