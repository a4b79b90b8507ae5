package charts

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/airshipit/airship-go/internal/armada/convert"
)

// TestDocumentsConvertBack: the Armada v2 documents convert (as
// `airshipctl armada convert` and build-all do) to the same objects.
func TestDocumentsConvertBack(t *testing.T) {
	vals, err := Values(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Manifest(vals, ManifestOptions{Name: "cluster-bootstrap", Namespace: "kube-system", ChartsDir: "/charts"})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Documents(objs)
	if err != nil {
		t.Fatal(err)
	}
	read, err := convert.Read("armada.yaml", bytes.NewReader(docs))
	if err != nil {
		t.Fatal(err)
	}
	res, err := convert.Convert(read, convert.Options{Namespace: "kube-system"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) > 0 {
		t.Errorf("warnings: %v", res.Warnings)
	}
	specs := func(in []runtime.Object) map[string]any {
		out := map[string]any{}
		for _, o := range in {
			b, err := json.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			var u unstructured.Unstructured
			if err := json.Unmarshal(b, &u.Object); err != nil {
				t.Fatal(err)
			}
			out[u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName()] = u.Object["spec"]
		}
		return out
	}
	var want []runtime.Object
	for _, o := range objs {
		want = append(want, o)
	}
	if d := cmp.Diff(specs(want), specs(res.Objects)); d != "" {
		t.Errorf("Manifest (-) and its documents converted back (+) differ:\n%s", d)
	}
}
