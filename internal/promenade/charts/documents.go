package charts

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// Documents writes the Armada objects of Manifest as Armada's own v2
// documents (armada/Manifest/v2, armada/ChartGroup/v2, armada/Chart/v2,
// data = spec), the form `airshipctl armada convert` and build-all's
// bootstrap Armada step read.
func Documents(objs []client.Object) ([]byte, error) {
	var b strings.Builder
	for _, o := range objs {
		var spec any
		switch t := o.(type) {
		case *armadav1.ArmadaManifest:
			spec = t.Spec
		case *armadav1.ArmadaChartGroup:
			spec = t.Spec
		case *armadav1.ArmadaChart:
			spec = t.Spec
		default:
			return nil, fmt.Errorf("%T %s is not an Armada object", o, o.GetName())
		}
		raw, err := json.Marshal(spec)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		var data map[string]any
		if err := json.Unmarshal(raw, &data); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
		doc := map[string]any{
			"schema":   "armada/" + strings.TrimPrefix(o.GetObjectKind().GroupVersionKind().Kind, "Armada") + "/v2",
			"metadata": map[string]any{"schema": "metadata/Document/v1", "name": o.GetName()},
			"data":     data,
		}
		y, err := yaml.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.GetName(), err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return []byte(b.String()), nil
}
