package schema

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	schemavalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	airshipv1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/document"
)

// Options decide what counts as a problem.
type Options struct {
	// Strict reports fields a schema does not define.
	Strict bool
	// IgnoreMissingSchemas skips kinds without a schema instead of reporting them.
	IgnoreMissingSchemas bool
	// KindsToSkip are never validated.
	KindsToSkip []string
}

// Problem is one finding about one document.
type Problem struct {
	Document string `json:"document"`
	Message  string `json:"message"`
}

func (p Problem) String() string { return p.Document + ": " + p.Message }

// Validator holds the schemas documents are checked against.
type Validator struct {
	builtin *runtime.Scheme
	strict  runtime.Decoder
	lenient runtime.Decoder
	crds    map[schema.GroupVersionKind]*crdSchema
}

type crdSchema struct {
	source     string
	structural *structuralschema.Structural
	validator  schemavalidation.SchemaValidator
}

// New returns a validator that knows the built-in Kubernetes kinds and the
// airshipit.org/v1alpha1 documents.
func New() (*Validator, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, airshipv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return &Validator{
		builtin: s,
		strict:  serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer(),
		lenient: serializer.NewCodecFactory(s).UniversalDeserializer(),
		crds:    map[schema.GroupVersionKind]*crdSchema{},
	}, nil
}

// AddCRDs learns the schemas of every CustomResourceDefinition among docs.
// A CRD the API server would refuse is itself a problem.
func (v *Validator) AddCRDs(docs []*document.Document) []Problem {
	var probs []Problem
	for _, d := range docs {
		if d.Kind() != "CustomResourceDefinition" || d.GroupVersionKind().Group != apiextensionsv1.GroupName {
			continue
		}
		if err := v.addCRD(d); err != nil {
			probs = append(probs, Problem{Document: d.ID(), Message: err.Error()})
		}
	}
	return probs
}

func (v *Validator) addCRD(d *document.Document) error {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := d.Decode(&crd); err != nil {
		return err
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&crd)
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&crd, &internal, nil); err != nil {
		return err
	}
	for _, ver := range internal.Spec.Versions {
		if ver.Storage {
			internal.Status.StoredVersions = []string{ver.Name}
		}
	}
	if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
		return fmt.Errorf("the API server would refuse this CRD: %w", errs.ToAggregate())
	}
	for _, ver := range internal.Spec.Versions {
		val := ver.Schema
		if val == nil {
			val = internal.Spec.Validation
		}
		if val == nil || val.OpenAPIV3Schema == nil {
			continue
		}
		st, err := structuralschema.NewStructural(val.OpenAPIV3Schema)
		if err != nil {
			return fmt.Errorf("version %s: %w", ver.Name, err)
		}
		sv, _, err := schemavalidation.NewSchemaValidator(val.OpenAPIV3Schema)
		if err != nil {
			return fmt.Errorf("version %s: %w", ver.Name, err)
		}
		gvk := schema.GroupVersionKind{Group: internal.Spec.Group, Version: ver.Name, Kind: internal.Spec.Names.Kind}
		v.crds[gvk] = &crdSchema{source: d.ID(), structural: st, validator: sv}
	}
	return nil
}

// Validate checks one document.
func (v *Validator) Validate(d *document.Document, opts Options) []Problem {
	gvk := d.GroupVersionKind()
	if slices.Contains(opts.KindsToSkip, gvk.Kind) {
		return nil
	}
	prob := func(format string, args ...any) []Problem {
		return []Problem{{Document: d.ID(), Message: fmt.Sprintf(format, args...)}}
	}
	data, err := d.JSON()
	if err != nil {
		return prob("%v", err)
	}
	if crd, ok := v.crds[gvk]; ok {
		var obj map[string]any
		if err := utiljson.Unmarshal(data, &obj); err != nil {
			return prob("%v", err)
		}
		var out []Problem
		if opts.Strict {
			for _, p := range pruning.PruneWithOptions(obj, crd.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
				out = append(out, Problem{Document: d.ID(), Message: fmt.Sprintf("%s: unknown field (not in the schema of %s)", p, crd.source)})
			}
		}
		for _, e := range schemavalidation.ValidateCustomResource(nil, obj, crd.validator) {
			out = append(out, Problem{Document: d.ID(), Message: e.Error()})
		}
		return out
	}
	if v.builtin.Recognizes(gvk) {
		dec := v.lenient
		if opts.Strict {
			dec = v.strict
		}
		if _, _, err := dec.Decode(data, nil, nil); err != nil {
			return prob("%s", cleanDecodeError(err))
		}
		return nil
	}
	if opts.IgnoreMissingSchemas {
		return nil
	}
	return prob("no schema for kind %s (%s): add its CRD to the bundle or to the phase's validation.crdList, or list %s in validation.kindsToSkip",
		gvk.Kind, d.APIVersion(), gvk.Kind)
}

// ValidateAll checks every document and returns every problem.
func (v *Validator) ValidateAll(docs []*document.Document, opts Options) []Problem {
	var out []Problem
	for _, d := range docs {
		out = append(out, v.Validate(d, opts)...)
	}
	return out
}

func cleanDecodeError(err error) string {
	msg := err.Error()
	// The strict decoder prefixes the Go type; the field names are what matter.
	if i := strings.Index(msg, "strict decoding error: "); i >= 0 {
		return msg[i:]
	}
	return msg
}
