package phase

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/document/schema"
)

// ValidateDocuments checks that a phase can run (CheckPhase) and that every
// document of its executor bundle, its Phase document and its executor
// document match their schemas: built-in kinds, CRDs found in the bundle or
// in validation.crdList (entry points relative to the site's target path),
// and airshipit.org kinds. Kinds without a schema are reported unless
// validation.ignoreMissingSchemas is set or they are in validation.kindsToSkip.
func (s *Site) ValidateDocuments(ctx context.Context, p *Phase) error {
	var probs Problems
	if err := s.CheckPhase(ctx, p); err != nil {
		var ps Problems
		if errors.As(err, &ps) {
			probs = append(probs, ps...)
		} else {
			probs.add("%v", err)
		}
	}
	val := p.API.Config.Validation
	opts := schema.Options{Strict: true, KindsToSkip: val.KindsToSkip}
	if val.Strict != nil {
		opts.Strict = *val.Strict
	}
	if val.IgnoreMissingSchemas != nil {
		opts.IgnoreMissingSchemas = *val.IgnoreMissingSchemas
	}
	v, err := schema.New()
	if err != nil {
		return err
	}
	target, err := s.Site.TargetPath()
	if err != nil {
		return err
	}
	for i, root := range val.CRDList {
		path := root
		if !filepath.IsAbs(path) {
			path = filepath.Join(target, root)
		}
		b, err := s.BuildRoot(path, fmt.Sprintf("phase %s: config.validation.crdList[%d]", p.Doc.ID(), i))
		if err != nil {
			probs.add("%v", err)
			continue
		}
		for _, pr := range v.AddCRDs(b.Documents()) {
			probs.add("%s", pr)
		}
	}
	for _, pr := range v.Validate(p.Doc, schema.Options{Strict: true}) {
		probs.add("%s", pr)
	}
	if doc, err := s.ExecutorDocument(p); err == nil {
		for _, pr := range v.Validate(doc, schema.Options{Strict: true}) {
			probs.add("%s", pr)
		}
	}
	if p.API.Config.DocumentEntryPoint != "" {
		b, err := s.ExecutorBundle(p)
		if err == nil {
			docs := b.Documents()
			for _, pr := range v.AddCRDs(docs) {
				probs.add("%s", pr)
			}
			for _, pr := range v.ValidateAll(docs, opts) {
				probs.add("%s", pr)
			}
		}
		// A bundle that does not build was reported by CheckPhase.
	}
	return probs.err()
}

// PhasesOfPlan returns the phases a plan names, in plan order.
func (s *Site) PhasesOfPlan(plan *v1.PhasePlan) ([]*Phase, error) {
	var out []*Phase
	for _, st := range plan.AllPhases() {
		p, err := s.Phase(st.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
