package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// TestAPIModeInstallsCRDsFromConfig is the envtest smoke test: the CRDs under
// config/ install into a real kube-apiserver, and a custom resource is
// stored, defaulted and validated by it.
func TestAPIModeInstallsCRDsFromConfig(t *testing.T) {
	env := StartAPI(t, Options{
		CRDDirs:     []string{"config/armada/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{armadav1.AddToScheme},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var crd apiextensionsv1.CustomResourceDefinition
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "armadacharts.armada.airshipit.org"}, &crd); err != nil {
		t.Fatalf("CRD from config/ not installed: %v", err)
	}
	if got := crd.Spec.Names.ShortNames; len(got) == 0 || got[0] != "act" {
		t.Errorf("short names = %v, want act", got)
	}

	chart := &armadav1.ArmadaChart{
		ObjectMeta: metav1.ObjectMeta{Name: "blog-1", Namespace: "default"},
		Spec: armadav1.ArmadaChartSpec{
			ChartName: "blog-1",
			Release:   "blog-1",
			Namespace: "default",
			Source:    armadav1.ArmadaChartSource{Type: "local", Location: "/charts/testchart"},
			Values:    &apiextensionsv1.JSON{Raw: []byte(`{"conf":{"foo":"bar"}}`)},
		},
	}
	if err := env.Client.Create(ctx, chart); err != nil {
		t.Fatalf("creating ArmadaChart: %v", err)
	}
	var got armadav1.ArmadaChart
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(chart), &got); err != nil {
		t.Fatalf("reading ArmadaChart back: %v", err)
	}
	if got.Spec.Release != "blog-1" || got.Spec.Source.Location != "/charts/testchart" {
		t.Errorf("read back %+v", got.Spec)
	}
	if string(got.Spec.Values.Raw) != `{"conf":{"foo":"bar"}}` {
		t.Errorf("values = %s", got.Spec.Values.Raw)
	}
	if got.Spec.TargetState != armadav1.TargetStateDeployed {
		t.Errorf("target_state defaulted to %q by the API server, want %q", got.Spec.TargetState, armadav1.TargetStateDeployed)
	}

	// The server's schema rejects a bad enum value and names the field.
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "armada.airshipit.org/v1alpha1",
		"kind":       "ArmadaChart",
		"metadata":   map[string]any{"name": "bad", "namespace": "default"},
		"spec": map[string]any{
			"release": "x", "namespace": "default",
			"source": map[string]any{"type": "ftp", "location": "x"},
		},
	}}
	err := env.Client.Create(ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "spec.source.type") {
		t.Fatalf("bad source type: got %v, want a validation error naming spec.source.type", err)
	}
}
