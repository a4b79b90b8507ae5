package kubernetesapply

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/jsonpath"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/apply"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// GVK of the executor document.
var GVK = v1.GroupVersion.WithKind("KubernetesApply")

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
	if c.Kubeconfig != "" && e.cfg.SiteWide() {
		errs = append(errs, fmt.Errorf("%s: config.kubeconfig and the phase's siteWideKubeconfig exclude each other", id))
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
	return errors.Join(errs...)
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

// restConfig reaches the phase's cluster through the site's resolver: the
// executor's own config.kubeconfig and config.context when set (with ~
// expanded, --kubeconfig and $KUBECONFIG still winning, and a file's only
// context taken when none is named after the cluster), else the cluster's
// ClusterMap sources. With siteWideKubeconfig, config.context may name
// another cluster of the site.
func (e *Executor) restConfig(ctx context.Context) (*rest.Config, error) {
	c := e.api.Config
	if e.cfg.ClusterName == "" && c.Kubeconfig == "" {
		return nil, fmt.Errorf("phase %q has no metadata.clusterName, and its executor no config.kubeconfig", e.cfg.PhaseName)
	}
	if e.cfg.Kubeconfig == nil {
		return nil, fmt.Errorf("phase %q: no way to reach cluster %q", e.cfg.PhaseName, e.cfg.ClusterName)
	}
	kc, err := e.cfg.Kubeconfig(ctx, kubeconfig.Request{
		Cluster: e.cfg.ClusterName, File: c.Kubeconfig, Context: c.Context, SiteWide: e.cfg.SiteWide(),
	})
	if err != nil {
		return nil, fmt.Errorf("phase %q: %w", e.cfg.PhaseName, err)
	}
	return kubeconfig.RESTConfig(kc)
}

func (e *Executor) inventory() string {
	if e.api.Config.PhaseName != "" {
		return e.api.Config.PhaseName
	}
	return e.cfg.PhaseName
}

// objects returns the deployable documents of the bundle as objects.
func (e *Executor) objects() ([]*unstructured.Unstructured, error) {
	if e.cfg.Bundle == nil {
		return nil, fmt.Errorf("phase %q has no config.documentEntryPoint", e.cfg.PhaseName)
	}
	b, err := e.cfg.Bundle()
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, d := range b.Deployable().Documents() {
		u, err := d.Unstructured()
		if err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// Run applies the bundle, prunes, and waits.
func (e *Executor) Run(ctx context.Context, opts executor.RunOptions) error {
	objs, err := e.objects()
	if err != nil {
		return err
	}
	rc, err := e.restConfig(ctx)
	if err != nil {
		return err
	}
	a, err := apply.New(rc)
	if err != nil {
		return fmt.Errorf("phase %q: %w", e.cfg.PhaseName, err)
	}
	c := e.api.Config
	wait := time.Duration(c.WaitOptions.Timeout) * time.Second
	if opts.Timeout > 0 {
		wait = opts.Timeout
	}
	send := func(ev executor.Event) {
		if opts.Events != nil {
			opts.Events <- ev
		}
	}
	res, err := a.Apply(ctx, objs, apply.Options{
		Inventory:    e.inventory(),
		Policy:       c.InventoryPolicy,
		Prune:        c.PruneOptions.Prune,
		DryRun:       opts.DryRun || c.DryRun,
		WaitTimeout:  wait,
		PollInterval: time.Duration(c.WaitOptions.PollInterval) * time.Second,
		Conditions:   c.WaitOptions.Conditions,
		Progress: func(ev apply.Event) {
			send(executor.Event{Type: ev.Type, Message: ev.Message})
		},
	})
	if res != nil && res.DryRun {
		for _, ch := range res.Changes {
			send(executor.Event{Type: "DryRun", Object: ch.Object, Message: ch.Action})
		}
		for _, p := range res.Pruned {
			send(executor.Event{Type: "DryRun", Object: p, Message: "pruned"})
		}
	}
	if err != nil {
		return fmt.Errorf("phase %q on cluster %q: %w", e.cfg.PhaseName, e.cfg.ClusterName, err)
	}
	return nil
}

// Status reports, from the inventory and the live objects, what is applied,
// ready and drifted.
func (e *Executor) Status(ctx context.Context) (*executor.Status, error) {
	objs, err := e.objects()
	if err != nil {
		return nil, err
	}
	rc, err := e.restConfig(ctx)
	if err != nil {
		return nil, err
	}
	a, err := apply.New(rc)
	if err != nil {
		return nil, err
	}
	states, found, err := a.Status(ctx, e.inventory(), objs)
	if err != nil {
		return nil, fmt.Errorf("phase %q: %w", e.cfg.PhaseName, err)
	}
	st := &executor.Status{Phase: e.cfg.PhaseName}
	if !found {
		st.Message = "never run: no inventory in the cluster"
	}
	for _, s := range states {
		st.Objects = append(st.Objects, executor.ObjectStatus{ID: s.Object, Applied: s.Applied, Ready: s.Ready, Drifted: s.Drifted, Message: s.Message, Diff: s.Diff})
	}
	return st, nil
}

// Config returns the decoded executor configuration.
func (e *Executor) Config() v1.ApplyConfig { return e.api.Config }
