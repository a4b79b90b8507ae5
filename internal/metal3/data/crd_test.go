package data_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
)

// TestUpstreamManifestsApply creates documents of the shapes upstream's
// examples use through the generated CRDs with strict field validation (no
// controller runs), and reads them back typed: every upstream field is
// known, and the server fills upstream's defaults.
func TestUpstreamManifestsApply(t *testing.T) {
	s := newSite(t, "manifests")
	raw, err := os.ReadFile("testdata/manifests/upstream.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(s.ns)
		if err := env.Client.Create(ctx, u, client.FieldValidation("Strict")); err != nil {
			t.Errorf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}

	tmpl := &infrav1.Metal3DataTemplate{}
	if err := s.get("test1-controlplane-template", tmpl); err != nil {
		t.Fatal(err)
	}
	nd := tmpl.Spec.NetworkData
	if nd.Links.Ethernets[0].MTU != 1500 || nd.Links.Ethernets[1].MTU != 9000 || nd.Links.Bonds[0].MTU != 1500 || nd.Links.Vlans[0].MTU != 1500 {
		t.Errorf("link MTUs not defaulted to 1500: %+v", nd.Links)
	}
	if string(nd.Links.Bonds[0].Parameters["miimon"].Raw) != "100" {
		t.Errorf("bond parameters %v", nd.Links.Bonds[0].Parameters)
	}
	if tmpl.Spec.MetaData.Indexes[0].Step != 2 || tmpl.Spec.MetaData.Indexes[0].Offset != 1 {
		t.Errorf("indexes %+v", tmpl.Spec.MetaData.Indexes)
	}
	pool := &ipamv1.IPPool{}
	if err := s.get("provisioning-pool", pool); err != nil {
		t.Fatal(err)
	}
	if pool.Spec.AllocationStrategy != ipamv1.AllocationStrategySequential || ptr.Deref(pool.Spec.ClusterName, "") != "test1" {
		t.Errorf("IPPool spec %+v", pool.Spec)
	}

	// The schema rejects what upstream's does, naming the field.
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": ipamv1.GroupVersion.String(), "kind": "IPPool",
		"metadata": map[string]any{"name": "bad", "namespace": s.ns},
		"spec":     map[string]any{"pools": []any{map[string]any{"start": "192.168.0.300"}}},
	}}
	if err := env.Client.Create(ctx, bad); err == nil || !bytes.Contains([]byte(err.Error()), []byte("spec.pools[0].start")) {
		t.Errorf("IPPool with start 192.168.0.300: %v, want an error naming spec.pools[0].start", err)
	}
}
