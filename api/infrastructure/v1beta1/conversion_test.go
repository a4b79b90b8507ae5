/*
Copyright The Airship-Go Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1beta1

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta2"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the conversions' output")

// convertible is a v1beta1 object.
type convertible interface {
	conversion.Convertible
	metav1.Object
}

// TestFuzzRoundTrips converts fuzzed objects of every kind to the other
// version and back, both ways, and wants the object it started from.
func TestFuzzRoundTrips(t *testing.T) {
	t.Run("Metal3Cluster", func(t *testing.T) {
		fuzzRoundTrips(t, func() *Metal3Cluster { return &Metal3Cluster{} }, func() *infrav1.Metal3Cluster { return &infrav1.Metal3Cluster{} })
	})
	t.Run("Metal3ClusterTemplate", func(t *testing.T) {
		fuzzRoundTrips(t, func() *Metal3ClusterTemplate { return &Metal3ClusterTemplate{} },
			func() *infrav1.Metal3ClusterTemplate { return &infrav1.Metal3ClusterTemplate{} })
	})
	t.Run("Metal3Machine", func(t *testing.T) {
		fuzzRoundTrips(t, func() *Metal3Machine { return &Metal3Machine{} }, func() *infrav1.Metal3Machine { return &infrav1.Metal3Machine{} })
	})
	t.Run("Metal3MachineTemplate", func(t *testing.T) {
		fuzzRoundTrips(t, func() *Metal3MachineTemplate { return &Metal3MachineTemplate{} },
			func() *infrav1.Metal3MachineTemplate { return &infrav1.Metal3MachineTemplate{} })
	})
	t.Run("Metal3DataTemplate", func(t *testing.T) {
		fuzzRoundTrips(t, func() *Metal3DataTemplate { return &Metal3DataTemplate{} },
			func() *infrav1.Metal3DataTemplate { return &infrav1.Metal3DataTemplate{} })
	})
	t.Run("Metal3Data", func(t *testing.T) {
		fuzzRoundTrips(t, func() *Metal3Data { return &Metal3Data{} }, func() *infrav1.Metal3Data { return &infrav1.Metal3Data{} })
	})
	t.Run("Metal3DataClaim", func(t *testing.T) {
		fuzzRoundTrips(t, func() *Metal3DataClaim { return &Metal3DataClaim{} }, func() *infrav1.Metal3DataClaim { return &infrav1.Metal3DataClaim{} })
	})
	t.Run("Metal3Remediation", func(t *testing.T) {
		fuzzRoundTrips(t, func() *Metal3Remediation { return &Metal3Remediation{} }, func() *infrav1.Metal3Remediation { return &infrav1.Metal3Remediation{} })
	})
	t.Run("Metal3RemediationTemplate", func(t *testing.T) {
		fuzzRoundTrips(t, func() *Metal3RemediationTemplate { return &Metal3RemediationTemplate{} },
			func() *infrav1.Metal3RemediationTemplate { return &infrav1.Metal3RemediationTemplate{} })
	})
}

// fuzzRoundTrips runs the two round trips of Cluster API's
// util/conversion.FuzzTestFunc with its fuzzer (GetFuzzer): a fuzzed
// v1beta1 object converted to v1beta2 and back must come back equal,
// ConversionDataAnnotation aside, and a fuzzed v1beta2 object converted to
// v1beta1 and back too; the conversion-data annotation must not reach the
// v1beta2 object, V1Beta1DataAnnotation not the v1beta1 one, and neither
// conversion may change its source.
//
// No fuzzed value is kept valid for a lossy conversion: every loss is
// recorded in an annotation and undone, so any value must survive. What
// normalize does to a fuzzed object is make it one an API server can hold:
// conversion webhooks get and give JSON. FuzzTestFunc has no hook between
// filling and converting except fuzzer functions, which take the fuzzer's
// own type, and this module does not import the fuzzer directly; hence
// this copy of its loop.
func fuzzRoundTrips[S convertible, H conversion.Hub](t *testing.T, newSpoke func() S, newHub func() H) {
	t.Helper()
	runs := 10000
	if testing.Short() {
		runs = 500
	}
	filler := utilconversion.GetFuzzer(testScheme(t))
	t.Run("spoke-hub-spoke", func(t *testing.T) {
		for range runs {
			before := newSpoke()
			filler.Fill(before)
			normalize(t, before)
			source := before.DeepCopyObject()
			hub := newHub()
			if err := before.ConvertTo(hub); err != nil {
				t.Fatalf("ConvertTo: %v", err)
			}
			if !apiequality.Semantic.DeepEqual(source, before) {
				t.Fatalf("ConvertTo changed its source:\n%s", cmp.Diff(source, before))
			}
			if _, ok := any(hub).(metav1.Object).GetAnnotations()[ConversionDataAnnotation]; ok {
				t.Fatalf("%s reached the v1beta2 object", ConversionDataAnnotation)
			}
			after := newSpoke()
			if err := after.ConvertFrom(hub); err != nil {
				t.Fatalf("ConvertFrom: %v", err)
			}
			delete(after.GetAnnotations(), ConversionDataAnnotation)
			if !apiequality.Semantic.DeepEqual(before, after) {
				t.Fatalf("v1beta1 -> v1beta2 -> v1beta1 differs:\n%s", cmp.Diff(before, after))
			}
		}
	})
	t.Run("hub-spoke-hub", func(t *testing.T) {
		for range runs {
			before := newHub()
			filler.Fill(before)
			normalize(t, before)
			source := before.DeepCopyObject()
			spoke := newSpoke()
			if err := spoke.ConvertFrom(before); err != nil {
				t.Fatalf("ConvertFrom: %v", err)
			}
			if !apiequality.Semantic.DeepEqual(source, before) {
				t.Fatalf("ConvertFrom changed its source:\n%s", cmp.Diff(source, before))
			}
			if _, ok := spoke.GetAnnotations()[V1Beta1DataAnnotation]; ok {
				t.Fatalf("%s reached the v1beta1 object", V1Beta1DataAnnotation)
			}
			// A v1beta1 object holding only the annotations converts too
			// (its record no longer holds, and is left).
			bare := newSpoke()
			bare.SetLabels(maps.Clone(spoke.GetLabels()))
			bare.SetAnnotations(maps.Clone(spoke.GetAnnotations()))
			if err := bare.ConvertTo(newHub()); err != nil {
				t.Fatalf("ConvertTo of a bare object: %v", err)
			}
			after := newHub()
			if err := spoke.ConvertTo(after); err != nil {
				t.Fatalf("ConvertTo: %v", err)
			}
			if !apiequality.Semantic.DeepEqual(before, after) {
				t.Fatalf("v1beta2 -> v1beta1 -> v1beta2 differs:\n%s", cmp.Diff(before, after))
			}
		}
	})
}

// normalize makes a fuzzed object one an API server could hold: its raw
// JSON values JSON (the fuzzer fills them with random bytes), then the
// object itself what its JSON form decodes to (a pointer to the zero time,
// for one, is null in JSON, hence none).
func normalize(t *testing.T, obj runtime.Object) {
	t.Helper()
	validJSON(obj)
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	fresh := reflect.New(reflect.TypeOf(obj).Elem())
	if err := json.Unmarshal(data, fresh.Interface()); err != nil {
		t.Fatal(err)
	}
	reflect.ValueOf(obj).Elem().Set(fresh.Elem())
}

// validJSON makes the raw JSON values of a fuzzed data template JSON: a
// string holding the random bytes.
func validJSON(obj any) {
	fix := func(j apiextensionsv1.JSON) apiextensionsv1.JSON {
		if len(j.Raw) == 0 {
			return j
		}
		raw, _ := json.Marshal(string(j.Raw))
		return apiextensionsv1.JSON{Raw: raw}
	}
	switch o := obj.(type) {
	case *Metal3DataTemplate:
		if o.Spec.NetworkData == nil {
			return
		}
		for _, bond := range o.Spec.NetworkData.Links.Bonds {
			for name, value := range bond.Parameters {
				bond.Parameters[name] = fix(value)
			}
		}
	case *infrav1.Metal3DataTemplate:
		if o.Spec.NetworkData == nil || o.Spec.NetworkData.Links == nil {
			return
		}
		for _, bond := range o.Spec.NetworkData.Links.Bonds {
			for i := range bond.Parameters {
				bond.Parameters[i].Value = fix(bond.Parameters[i].Value)
			}
		}
	}
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := infrav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEveryKindConverts: each kind of this package converts, and has a
// v1beta2 hub; the fuzz test above must list it too.
func TestEveryKindConverts(t *testing.T) {
	s := testScheme(t)
	for gvk := range s.AllKnownTypes() {
		if gvk.GroupVersion() != GroupVersion || strings.HasSuffix(gvk.Kind, "List") || !strings.HasPrefix(gvk.Kind, "Metal3") {
			continue
		}
		obj, err := s.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := obj.(conversion.Convertible); !ok {
			t.Errorf("%s is not convertible", gvk.Kind)
		}
		hub, err := s.New(infrav1.GroupVersion.WithKind(gvk.Kind))
		if err != nil {
			t.Errorf("%s: %v", gvk.Kind, err)
			continue
		}
		if _, ok := hub.(conversion.Hub); !ok {
			t.Errorf("v1beta2 %s is not a conversion hub", gvk.Kind)
		}
	}
}

// TestDataAnnotationIsClusterAPIs: Cluster API's tools know the annotation
// by this name.
func TestDataAnnotationIsClusterAPIs(t *testing.T) {
	if ConversionDataAnnotation != utilconversion.DataAnnotation {
		t.Errorf("ConversionDataAnnotation is %q, Cluster API's is %q", ConversionDataAnnotation, utilconversion.DataAnnotation)
	}
}

// manifestVariables are the clusterctl variables of upstream's examples,
// with example values.
var manifestVariables = map[string]string{
	"CLUSTER_NAME":             "test1",
	"NAMESPACE":                "metal3",
	"CLUSTER_APIENDPOINT_HOST": "192.168.111.249",
	"CLUSTER_APIENDPOINT_PORT": "6443",
	"IMAGE_URL":                "http://172.22.0.1/images/ubuntu.qcow2",
	"IMAGE_CHECKSUM":           "http://172.22.0.1/images/ubuntu.qcow2.sha256sum",
	"IMAGE_CHECKSUM_TYPE":      "sha256",
	"IMAGE_FORMAT":             "qcow2",
}

// TestConvertManifests converts the v1beta1 objects of upstream's example
// manifests (testdata/<name>.yaml, clusterctl variables filled in) and of
// testdata/objects.yaml to v1beta2, compares them with
// testdata/<name>.golden.yaml (go test -update rewrites those), and
// converts each back to the object it was.
func TestConvertManifests(t *testing.T) {
	for _, name := range []string{
		"templates-cluster", "templates-clusterclass", "cluster", "controlplane",
		"machinedeployment", "clusterctl-cluster", "objects",
	} {
		t.Run(name, func(t *testing.T) {
			var got bytes.Buffer
			for i, doc := range readManifest(t, filepath.Join("testdata", name+".yaml")) {
				spoke := decodeV1Beta1(t, doc)
				hub := hubFor(t, spoke)
				if err := spoke.ConvertTo(hub); err != nil {
					t.Fatalf("object %d: ConvertTo: %v", i, err)
				}
				back := spoke.DeepCopyObject().(convertible)
				if err := back.ConvertFrom(hub); err != nil {
					t.Fatalf("object %d: ConvertFrom: %v", i, err)
				}
				delete(back.GetAnnotations(), ConversionDataAnnotation)
				back.GetObjectKind().SetGroupVersionKind(spoke.GetObjectKind().GroupVersionKind())
				if !apiequality.Semantic.DeepEqual(spoke, back) {
					t.Errorf("object %d does not convert back:\n%s", i, cmp.Diff(spoke, back))
				}
				out, err := yaml.Marshal(hub)
				if err != nil {
					t.Fatal(err)
				}
				if i > 0 {
					got.WriteString("---\n")
				}
				got.Write(out)
			}
			golden := filepath.Join("testdata", name+".golden.yaml")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("%s differs (-want +got):\n%s", golden, diff)
			}
		})
	}
}

var variable = regexp.MustCompile(`\$\{([A-Z0-9_]+)\}`)

// readManifest splits a file into its YAML documents, clusterctl
// variables filled in.
func readManifest(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = variable.ReplaceAllFunc(data, func(m []byte) []byte {
		name := string(variable.FindSubmatch(m)[1])
		v, ok := manifestVariables[name]
		if !ok {
			t.Fatalf("%s: no example value for ${%s}", path, name)
		}
		return []byte(v)
	})
	var docs [][]byte
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(doc, "")) != "" {
			docs = append(docs, []byte(doc))
		}
	}
	return docs
}

// decodeV1Beta1 reads one v1beta1 object of this package's kinds, as an
// API server would: unknown fields dropped.
func decodeV1Beta1(t *testing.T, doc []byte) convertible {
	t.Helper()
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		t.Fatal(err)
	}
	if tm.GroupVersionKind().GroupVersion() != GroupVersion {
		t.Fatalf("not a %s object: %s", GroupVersion, tm.GroupVersionKind())
	}
	obj, err := testScheme(t).New(tm.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(doc, obj); err != nil {
		t.Fatalf("%s: %v", tm.Kind, err)
	}
	return obj.(convertible)
}

// hubFor is an empty v1beta2 object of the kind of spoke, its type set.
func hubFor(t *testing.T, spoke convertible) conversion.Hub {
	t.Helper()
	s := testScheme(t)
	kinds, _, err := s.ObjectKinds(spoke)
	if err != nil {
		t.Fatal(err)
	}
	gvk := infrav1.GroupVersion.WithKind(kinds[0].Kind)
	obj, err := s.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return obj.(conversion.Hub)
}

// TestFieldMoves checks, field by field, where the v1beta1 fields that
// changed land in v1beta2.
func TestFieldMoves(t *testing.T) {
	ref := func(name string) *infrav1.Metal3ObjectRef { return &infrav1.Metal3ObjectRef{Name: name} }
	tests := []struct {
		name  string
		spoke convertible
		check func(t *testing.T, hub conversion.Hub)
	}{{
		name: "failureDomains map becomes a list sorted by name",
		spoke: &Metal3Cluster{Spec: Metal3ClusterSpec{FailureDomains: FailureDomains{
			"rack-b": {ControlPlane: true, Attributes: map[string]string{"row": "2"}}, "rack-a": {}, "rack-c": {},
		}}},
		check: func(t *testing.T, hub conversion.Hub) {
			want := []clusterv1.FailureDomain{
				{Name: "rack-a"}, {Name: "rack-b", ControlPlane: ptr.To(true), Attributes: map[string]string{"row": "2"}}, {Name: "rack-c"},
			}
			equal(t, "spec.failureDomains", want, hub.(*infrav1.Metal3Cluster).Spec.FailureDomains)
		},
	}, {
		name:  "noCloudProvider becomes cloudProviderEnabled, negated",
		spoke: &Metal3Cluster{Spec: Metal3ClusterSpec{NoCloudProvider: ptr.To(true)}},
		check: func(t *testing.T, hub conversion.Hub) {
			equal(t, "spec.cloudProviderEnabled", ptr.To(false), hub.(*infrav1.Metal3Cluster).Spec.CloudProviderEnabled)
		},
	}, {
		name:  "cloudProviderEnabled wins over noCloudProvider",
		spoke: &Metal3Cluster{Spec: Metal3ClusterSpec{NoCloudProvider: ptr.To(true), CloudProviderEnabled: ptr.To(true)}},
		check: func(t *testing.T, hub conversion.Hub) {
			equal(t, "spec.cloudProviderEnabled", ptr.To(true), hub.(*infrav1.Metal3Cluster).Spec.CloudProviderEnabled)
		},
	}, {
		name:  "apiEndpoint fills an empty controlPlaneEndpoint",
		spoke: &Metal3Cluster{Spec: Metal3ClusterSpec{APIEndpoint: "https://10.0.0.1"}},
		check: func(t *testing.T, hub conversion.Hub) {
			equal(t, "spec.controlPlaneEndpoint", infrav1.APIEndpoint{Host: "10.0.0.1", Port: 6443}, hub.(*infrav1.Metal3Cluster).Spec.ControlPlaneEndpoint)
		},
	}, {
		name:  "status.ready becomes initialization.provisioned",
		spoke: &Metal3Cluster{Status: Metal3ClusterStatus{Ready: true}},
		check: func(t *testing.T, hub conversion.Hub) {
			equal(t, "status.initialization.provisioned", ptr.To(true), hub.(*infrav1.Metal3Cluster).Status.Initialization.Provisioned)
		},
	}, {
		name:  "Metal3Machine status.ready becomes initialization.provisioned, failure fields move to deprecated.v1beta1",
		spoke: &Metal3Machine{Status: Metal3MachineStatus{Ready: true, FailureMessage: ptr.To("boom")}},
		check: func(t *testing.T, hub conversion.Hub) {
			st := hub.(*infrav1.Metal3Machine).Status
			equal(t, "status.initialization.provisioned", ptr.To(true), st.Initialization.Provisioned)
			equal(t, "status.deprecated", &infrav1.Metal3MachineDeprecatedStatus{
				V1Beta1: &infrav1.Metal3MachineV1Beta1DeprecatedStatus{FailureMessage: ptr.To("boom")},
			}, st.Deprecated)
		},
	}, {
		name: "dataTemplate ObjectReference becomes a Metal3ObjectRef, providerID a string",
		spoke: &Metal3Machine{Spec: Metal3MachineSpec{
			ProviderID:   ptr.To("metal3://ns/host/m"),
			DataTemplate: &corev1.ObjectReference{Kind: "Metal3DataTemplate", Name: "t", Namespace: "ns"},
		}},
		check: func(t *testing.T, hub conversion.Hub) {
			spec := hub.(*infrav1.Metal3Machine).Spec
			equal(t, "spec.dataTemplate", &infrav1.Metal3ObjectRef{Name: "t", Namespace: "ns"}, spec.DataTemplate)
			equal(t, "spec.providerID", "metal3://ns/host/m", spec.ProviderID)
			recorded(t, hub, `"dataTemplate":{"kind":"Metal3DataTemplate"`)
		},
	}, {
		name:  "Metal3Data's empty claim becomes none, its templateReference is dropped and recorded",
		spoke: &Metal3Data{Spec: Metal3DataSpec{TemplateReference: "old", Template: corev1.ObjectReference{Name: "t"}}},
		check: func(t *testing.T, hub conversion.Hub) {
			spec := hub.(*infrav1.Metal3Data).Spec
			equal(t, "spec.claim", (*infrav1.Metal3ObjectRef)(nil), spec.Claim)
			equal(t, "spec.template", ref("t"), spec.Template)
			equal(t, "spec.index", ptr.To(int32(0)), spec.Index)
			recorded(t, hub, `"templateReference":"old"`)
		},
	}, {
		name:  "Metal3Data's empty template becomes none",
		spoke: &Metal3Data{Spec: Metal3DataSpec{Claim: corev1.ObjectReference{Name: "c"}}},
		check: func(t *testing.T, hub conversion.Hub) {
			spec := hub.(*infrav1.Metal3Data).Spec
			equal(t, "spec.template", (*infrav1.Metal3ObjectRef)(nil), spec.Template)
			equal(t, "spec.claim", ref("c"), spec.Claim)
		},
	}, {
		name:  "Metal3DataTemplate's templateReference is dropped and recorded",
		spoke: &Metal3DataTemplate{Spec: Metal3DataTemplateSpec{ClusterName: "c", TemplateReference: "old"}},
		check: func(t *testing.T, hub conversion.Hub) {
			equal(t, "spec", infrav1.Metal3DataTemplateSpec{ClusterName: "c"}, hub.(*infrav1.Metal3DataTemplate).Spec)
			recorded(t, hub, `"templateReference":"old"`)
		},
	}, {
		name:  "nodeReuse becomes a pointer",
		spoke: &Metal3MachineTemplate{Spec: Metal3MachineTemplateSpec{NodeReuse: false}},
		check: func(t *testing.T, hub conversion.Hub) {
			equal(t, "spec.nodeReuse", ptr.To(false), hub.(*infrav1.Metal3MachineTemplate).Spec.NodeReuse)
		},
	}, {
		name:  "remediation timeout becomes timeoutSeconds",
		spoke: &Metal3Remediation{Spec: Metal3RemediationSpec{Strategy: &RemediationStrategy{Timeout: &metav1.Duration{Duration: 300e9}}}},
		check: func(t *testing.T, hub conversion.Hub) {
			equal(t, "spec.strategy.timeoutSeconds", int32(300), hub.(*infrav1.Metal3Remediation).Spec.Strategy.TimeoutSeconds)
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spoke.SetAnnotations(map[string]string{ConversionDataAnnotation: `{}`})
			hub := hubFor(t, tt.spoke)
			if err := tt.spoke.ConvertTo(hub); err != nil {
				t.Fatal(err)
			}
			if _, ok := hub.(metav1.Object).GetAnnotations()[ConversionDataAnnotation]; ok {
				t.Errorf("%s reached the v1beta2 object", ConversionDataAnnotation)
			}
			tt.check(t, hub)
			back := tt.spoke.DeepCopyObject().(convertible)
			if err := back.ConvertFrom(hub); err != nil {
				t.Fatal(err)
			}
			back.SetAnnotations(tt.spoke.GetAnnotations())
			if !apiequality.Semantic.DeepEqual(tt.spoke, back) {
				t.Errorf("does not convert back:\n%s", cmp.Diff(tt.spoke, back))
			}
		})
	}
}

// TestStaleRecords: a record is used only while it still converts to what
// the object holds; an edit made in the other version wins over it.
func TestStaleRecords(t *testing.T) {
	t.Run("a v1beta2 edit drops the v1beta1 record of its part", func(t *testing.T) {
		spoke := &Metal3Data{Spec: Metal3DataSpec{Index: 1, TemplateReference: "old", Template: corev1.ObjectReference{Name: "t"}}}
		hub := &infrav1.Metal3Data{}
		if err := spoke.ConvertTo(hub); err != nil {
			t.Fatal(err)
		}
		hub.Spec.Index = ptr.To(int32(2))
		back := &Metal3Data{}
		if err := back.ConvertFrom(hub); err != nil {
			t.Fatal(err)
		}
		equal(t, "spec", Metal3DataSpec{Index: 2, Template: corev1.ObjectReference{Name: "t"}}, back.Spec)
	})
	t.Run("a v1beta2 status edit keeps the record of the spec", func(t *testing.T) {
		spoke := &Metal3Data{Spec: Metal3DataSpec{TemplateReference: "old"}}
		hub := &infrav1.Metal3Data{}
		if err := spoke.ConvertTo(hub); err != nil {
			t.Fatal(err)
		}
		hub.Status.Ready = ptr.To(true)
		back := &Metal3Data{}
		if err := back.ConvertFrom(hub); err != nil {
			t.Fatal(err)
		}
		equal(t, "spec.templateReference", "old", back.Spec.TemplateReference)
		equal(t, "status.ready", true, back.Status.Ready)
	})
	t.Run("a v1beta1 edit drops the v1beta2 record of its part", func(t *testing.T) {
		hub := &infrav1.Metal3Cluster{Spec: infrav1.Metal3ClusterSpec{FailureDomains: []clusterv1.FailureDomain{
			{Name: "b", ControlPlane: ptr.To(false)}, {Name: "a"},
		}}}
		spoke := &Metal3Cluster{}
		if err := spoke.ConvertFrom(hub); err != nil {
			t.Fatal(err)
		}
		if _, ok := spoke.Annotations[ConversionDataAnnotation]; !ok {
			t.Fatalf("no %s for an order and a false v1beta1 cannot hold", ConversionDataAnnotation)
		}
		spoke.Spec.FailureDomains["c"] = FailureDomainSpec{}
		after := &infrav1.Metal3Cluster{}
		if err := spoke.ConvertTo(after); err != nil {
			t.Fatal(err)
		}
		equal(t, "spec.failureDomains", []clusterv1.FailureDomain{{Name: "a"}, {Name: "b"}, {Name: "c"}}, after.Spec.FailureDomains)
	})
}

func equal(t *testing.T, field string, want, got any) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", field, diff)
	}
}

// recorded checks that the v1beta2 object records v1beta1 data holding s.
func recorded(t *testing.T, hub conversion.Hub, s string) {
	t.Helper()
	if data := hub.(metav1.Object).GetAnnotations()[V1Beta1DataAnnotation]; !strings.Contains(data, s) {
		t.Errorf("annotation %s is %q, want it to hold %s", V1Beta1DataAnnotation, data, s)
	}
}
