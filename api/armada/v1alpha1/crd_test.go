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

package v1alpha1_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	celschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	schemavalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	armadav1alpha1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// The generated manifests, relative to this package.
const (
	crdDir     = "../../../config/armada/crd/bases"
	samplesDir = "../../../config/armada/samples"
)

// These tests run the API server's own CRD and custom-resource validation
// code (from k8s.io/apiextensions-apiserver) over the generated CRDs, so a
// marker that yields a CRD the server would refuse, or a sample the server
// would reject, fails here rather than at `kubectl apply` time. They follow
// the server's order for a create: prune unknown fields (reported as errors,
// as with fieldValidation=Strict), default, then validate.

type crdVersion struct {
	structural *structuralschema.Structural
	validator  schemavalidation.SchemaValidator
}

// loadCRDs validates every generated CRD as the API server would on create
// and returns the v1alpha1 schema of each, keyed by kind.
func loadCRDs(t *testing.T) map[string]crdVersion {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under %s (run hack/generate.sh): %v", crdDir, err)
	}
	crds := map[string]crdVersion{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&crd)
		var internal apiextensions.CustomResourceDefinition
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&crd, &internal, nil); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// The server records the storage version before validating a create.
		for _, v := range internal.Spec.Versions {
			if v.Storage {
				internal.Status.StoredVersions = []string{v.Name}
			}
		}
		if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
			t.Fatalf("%s: the API server would refuse this CRD: %v", f, errs.ToAggregate())
		}

		for _, v := range internal.Spec.Versions {
			if v.Name != armadav1alpha1.GroupVersion.Version {
				continue
			}
			// The internal form hoists a schema shared by all versions to
			// spec.validation.
			validation := v.Schema
			if validation == nil {
				validation = internal.Spec.Validation
			}
			s := validation.OpenAPIV3Schema
			structural, err := structuralschema.NewStructural(s)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			validator, _, err := schemavalidation.NewSchemaValidator(s)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			crds[internal.Spec.Names.Kind] = crdVersion{structural: structural, validator: validator}
		}
	}
	for _, kind := range []string{"ArmadaChart", "ArmadaChartGroup", "ArmadaManifest"} {
		if _, ok := crds[kind]; !ok {
			t.Fatalf("no v1alpha1 CRD for %s under %s", kind, crdDir)
		}
	}
	return crds
}

// admit applies one YAML document the way the API server handles a create
// and returns the defaulted object and every error it would report.
func admit(t *testing.T, crds map[string]crdVersion, doc []byte) (map[string]any, field.ErrorList) {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	// utiljson keeps integers as int64, as the server's decoder does.
	if err := utiljson.Unmarshal(js, &obj); err != nil {
		t.Fatal(err)
	}
	kind, _ := obj["kind"].(string)
	if obj["apiVersion"] != armadav1alpha1.GroupVersion.String() {
		t.Fatalf("apiVersion = %v, want %s", obj["apiVersion"], armadav1alpha1.GroupVersion)
	}
	crd, ok := crds[kind]
	if !ok {
		t.Fatalf("no CRD for kind %q", kind)
	}

	var errs field.ErrorList
	unknown := pruning.PruneWithOptions(obj, crd.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, p := range unknown {
		errs = append(errs, field.Forbidden(field.NewPath(p), "unknown field"))
	}
	defaulting.Default(obj, crd.structural)
	errs = append(errs, schemavalidation.ValidateCustomResource(nil, obj, crd.validator)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, crd.structural, obj)...)
	// The x-kubernetes-validations (CEL) rules, as the server runs them.
	celErrs, _ := celschema.NewValidator(crd.structural, true, celconfig.PerCallLimit).Validate(context.Background(), nil, crd.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	errs = append(errs, celErrs...)
	return obj, errs
}

// TestSamplesAreAdmitted checks config/armada/samples and the decoding
// fixtures against the generated CRDs.
func TestSamplesAreAdmitted(t *testing.T) {
	crds := loadCRDs(t)

	var files []string
	for _, pattern := range []string{filepath.Join(samplesDir, "armada_*.yaml"), filepath.Join("testdata", "*.yaml")} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	kinds := map[string]bool{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			obj, errs := admit(t, crds, data)
			if len(errs) > 0 {
				t.Fatalf("rejected: %v", errs.ToAggregate())
			}
			if strings.HasPrefix(f, samplesDir) {
				kinds[obj["kind"].(string)] = true
			}
		})
	}
	if len(kinds) != 3 {
		t.Errorf("samples cover kinds %v, want all three", kinds)
	}
}

// TestCRDDefaults checks the defaults the server fills in.
func TestCRDDefaults(t *testing.T) {
	crds := loadCRDs(t)
	for _, f := range []string{"chart-minimal.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		obj, errs := admit(t, crds, data)
		if len(errs) > 0 {
			t.Fatalf("%s rejected: %v", f, errs.ToAggregate())
		}
		spec := obj["spec"].(map[string]any)
		if got := spec["target_state"]; got != string(armadav1alpha1.TargetStateDeployed) {
			t.Errorf("%s: spec.target_state defaulted to %v, want deployed", f, got)
		}
	}
	for _, doc := range []string{
		"apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaChartGroup\nmetadata: {name: g}\nspec: {chart_group: [a]}\n",
		"apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaManifest\nmetadata: {name: m}\nspec: {release_prefix: p, chart_groups: [g]}\n",
	} {
		obj, errs := admit(t, crds, []byte(doc))
		if len(errs) > 0 {
			t.Fatalf("rejected: %v\n%s", errs.ToAggregate(), doc)
		}
		if got := obj["spec"].(map[string]any)["target_state"]; got != "deployed" {
			t.Errorf("%s: spec.target_state defaulted to %v, want deployed", obj["kind"], got)
		}
	}
}

// TestCRDRejects checks that the validation markers reach the CRDs.
func TestCRDRejects(t *testing.T) {
	crds := loadCRDs(t)

	const chart = `apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata: {name: c}
spec:
  release: blog-1
  namespace: default
`
	tests := []struct {
		name    string
		doc     string
		wantErr string // substring of the aggregated error
	}{
		{
			name:    "missing source",
			doc:     chart,
			wantErr: "spec.source: Required value",
		},
		{
			name:    "unsupported source type",
			doc:     chart + "  source: {type: git, location: https://example.org/repo}\n",
			wantErr: `spec.source.type: Unsupported value: "git"`,
		},
		{
			name:    "unknown field",
			doc:     chart + "  source: {type: local, location: /c}\n  relase: x\n",
			wantErr: "spec.relase",
		},
		{
			name:    "release name Helm would refuse",
			doc:     "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaChart\nmetadata: {name: c}\nspec: {release: Blog_1, namespace: default, source: {type: local, location: /c}}\n",
			wantErr: "spec.release: Invalid value",
		},
		{
			name:    "target_state outside the enum",
			doc:     chart + "  source: {type: local, location: /c}\n  target_state: running\n",
			wantErr: `spec.target_state: Unsupported value: "running"`,
		},
		{
			name:    "values that are not an object",
			doc:     chart + "  source: {type: local, location: /c}\n  values: [1, 2]\n",
			wantErr: "spec.values: Invalid value",
		},
		{
			name:    "min_ready over 100%",
			doc:     chart + "  source: {type: local, location: /c}\n  wait:\n    resources:\n      - {type: daemonset, min_ready: 150%}\n",
			wantErr: "spec.wait.resources[0].min_ready: Invalid value",
		},
		{
			name:    "wait resource type outside the enum",
			doc:     chart + "  source: {type: local, location: /c}\n  wait:\n    resources:\n      - {type: replicaset}\n",
			wantErr: `spec.wait.resources[0].type: Unsupported value: "replicaset"`,
		},
		{
			name:    "negative timeout",
			doc:     chart + "  source: {type: local, location: /c}\n  wait: {timeout: -1}\n",
			wantErr: "spec.wait.timeout: Invalid value",
		},
		{
			name:    "recreate_pods is not carried",
			doc:     chart + "  source: {type: local, location: /c}\n  upgrade:\n    options: {recreate_pods: true}\n",
			wantErr: "spec.upgrade.options.recreate_pods",
		},
		{
			name:    "dir location that is a URL",
			doc:     chart + "  source: {type: dir, location: 'https://charts.example/c'}\n",
			wantErr: "spec.source: Invalid value: source.location of type local or dir is a path",
		},
		{
			name:    "tar URL that is not http(s)",
			doc:     chart + "  source: {type: tar, location: 'file:///etc/c.tgz'}\n",
			wantErr: "a URL must be http:// or https://",
		},
		{
			name:    "location climbing",
			doc:     chart + "  source: {type: local, location: /charts/../etc}\n",
			wantErr: "source.location must not climb",
		},
		{
			name:    "subpath climbing",
			doc:     chart + "  source: {type: local, location: /charts, subpath: ../etc}\n",
			wantErr: "source.subpath must not climb",
		},
		{
			name:    "valuesFrom name with a namespace",
			doc:     chart + "  source: {type: local, location: /c}\n  valuesFrom: [{kind: Secret, name: kube-system/victim}]\n",
			wantErr: "spec.valuesFrom[0].name: Invalid value",
		},
		{
			name:    "dependency with a namespace",
			doc:     chart + "  source: {type: local, location: /c}\n  dependencies: [other/toolkit]\n",
			wantErr: "spec.dependencies[0]: Invalid value",
		},
		{
			name:    "group member with a namespace",
			doc:     "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaChartGroup\nmetadata: {name: g}\nspec: {chart_group: [other/c]}\n",
			wantErr: "spec.chart_group[0]: Invalid value",
		},
		{
			name:    "manifest group with a namespace",
			doc:     "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaManifest\nmetadata: {name: m}\nspec: {release_prefix: p, chart_groups: [other/g]}\n",
			wantErr: "spec.chart_groups[0]: Invalid value",
		},
		{
			name:    "group without charts",
			doc:     "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaChartGroup\nmetadata: {name: g}\nspec: {sequenced: true}\n",
			wantErr: "spec.chart_group: Required value",
		},
		{
			name:    "manifest without prefix",
			doc:     "apiVersion: armada.airshipit.org/v1alpha1\nkind: ArmadaManifest\nmetadata: {name: m}\nspec: {chart_groups: [g]}\n",
			wantErr: "spec.release_prefix: Required value",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := admit(t, crds, []byte(tt.doc))
			if len(errs) == 0 {
				t.Fatalf("admitted, want an error containing %q", tt.wantErr)
			}
			if got := errs.ToAggregate().Error(); !strings.Contains(got, tt.wantErr) {
				t.Fatalf("errors = %s\nwant one containing %q", got, tt.wantErr)
			}
		})
	}
}
