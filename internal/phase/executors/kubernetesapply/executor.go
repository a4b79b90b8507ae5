package kubernetesapply

import (
	"context"
	"fmt"
	"io"

	"k8s.io/client-go/util/jsonpath"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// GVK of the executor document.
var GVK = v1.GroupVersion.WithKind("KubernetesApply")

func init() { executor.Register(GVK, New) }

// Executor is a KubernetesApply executor for one phase.
type Executor struct {
	cfg executor.Config
	api *v1.KubernetesApply
}

// New decodes the executor document strictly: a misspelt field is an error.
func New(cfg executor.Config) (executor.Executor, error) {
	api := &v1.KubernetesApply{}
	if err := cfg.ExecutorDoc.DecodeStrict(api); err != nil {
		return nil, fmt.Errorf("phase %q: executor document: %w", cfg.PhaseName, err)
	}
	return &Executor{cfg: cfg, api: api}, nil
}

// Validate checks the apply configuration and that the bundle builds.
func (e *Executor) Validate(context.Context) error {
	id := e.cfg.ExecutorDoc.ID()
	c := e.api.Config
	var errs []error
	switch c.InventoryPolicy {
	case "", v1.InventoryPolicyStrict, v1.InventoryPolicyAdopt, v1.InventoryPolicyForceAdopt:
	default:
		errs = append(errs, fmt.Errorf("%s: config.inventoryPolicy %q is not one of strict, adopt, force-adopt", id, c.InventoryPolicy))
	}
	if c.WaitOptions.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%s: config.waitOptions.timeout %d must not be negative", id, c.WaitOptions.Timeout))
	}
	if c.WaitOptions.PollInterval < 0 {
		errs = append(errs, fmt.Errorf("%s: config.waitOptions.pollInterval %d must not be negative", id, c.WaitOptions.PollInterval))
	}
	for i, cond := range c.WaitOptions.Conditions {
		p := fmt.Sprintf("%s: config.waitOptions.conditions[%d]", id, i)
		if cond.Kind == "" || cond.APIVersion == "" {
			errs = append(errs, fmt.Errorf("%s: apiVersion and kind are required", p))
		}
		if cond.JSONPath == "" {
			errs = append(errs, fmt.Errorf("%s.jsonPath is required", p))
		} else if err := jsonpath.New("condition").Parse(cond.JSONPath); err != nil {
			errs = append(errs, fmt.Errorf("%s.jsonPath %q: %w", p, cond.JSONPath, err))
		}
	}
	if e.cfg.Bundle == nil {
		errs = append(errs, fmt.Errorf("phase %q: KubernetesApply needs documents: set config.documentEntryPoint", e.cfg.PhaseName))
	} else if _, err := e.cfg.Bundle(); err != nil {
		errs = append(errs, err)
	}
	return join(errs)
}

// Render writes the documents the phase would apply.
func (e *Executor) Render(_ context.Context, w io.Writer, opts executor.RenderOptions) error {
	if e.cfg.Bundle == nil {
		return fmt.Errorf("phase %q has no config.documentEntryPoint", e.cfg.PhaseName)
	}
	b, err := e.cfg.Bundle()
	if err != nil {
		return err
	}
	f, err := b.Deployable().Filter(opts.Selector)
	if err != nil {
		return err
	}
	return f.Write(w)
}

// Run is not implemented yet.
func (e *Executor) Run(context.Context, executor.RunOptions) error {
	return fmt.Errorf("phase %q: running KubernetesApply: %w yet (it comes with the apply engine)", e.cfg.PhaseName, executor.ErrNotImplemented)
}

// Status is not implemented yet.
func (e *Executor) Status(context.Context) (*executor.Status, error) {
	return nil, fmt.Errorf("phase %q: KubernetesApply status: %w yet", e.cfg.PhaseName, executor.ErrNotImplemented)
}

// Config returns the decoded executor configuration.
func (e *Executor) Config() v1.ApplyConfig { return e.api.Config }

type joined []error

func (j joined) Error() string {
	s := ""
	for i, e := range j {
		if i > 0 {
			s += "; "
		}
		s += e.Error()
	}
	return s
}

func join(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return joined(errs)
}
