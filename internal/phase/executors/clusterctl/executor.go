package clusterctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// GVK of the executor document.
var GVK = v1.GroupVersion.WithKind("Clusterctl")

// ProviderTypes are the provider types clusterctl knows.
var ProviderTypes = []string{
	"CoreProvider", "BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider",
	"IPAMProvider", "RuntimeExtensionProvider", "AddonProvider",
}

// Executor is a Clusterctl executor for one phase.
type Executor struct {
	cfg executor.Config
	api *v1.Clusterctl
	// beforeMove, when set (by tests), runs before each namespace's
	// clusterctl move; an error stops the move there, as a run that dies
	// half-way would.
	beforeMove func(ns string) error
}

// New decodes the executor document strictly.
func New(cfg executor.Config) (executor.Executor, error) {
	api := &v1.Clusterctl{}
	if err := cfg.ExecutorDoc.DecodeStrict(api); err != nil {
		return nil, fmt.Errorf("phase %q: executor document: %w", cfg.PhaseName, err)
	}
	return &Executor{cfg: cfg, api: api}, nil
}

// providerRoot is where a provider's components of version are built
// from: versions[version] when listed, else url, else (version "", for
// render and validate) the newest entry of versions; relative to the site's
// target path.
func (e *Executor) providerRoot(p *v1.Provider, version string) string {
	u := p.Versions[version]
	if u == "" {
		u = p.URL
	}
	if u == "" && version == "" && len(p.Versions) > 0 {
		keys := make([]string, 0, len(p.Versions))
		for k := range p.Versions {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		u = p.Versions[keys[len(keys)-1]]
	}
	if u == "" || filepath.IsAbs(u) {
		return u
	}
	return filepath.Join(e.cfg.TargetPath, u)
}

// Validate checks the action, the providers and the init options.
func (e *Executor) Validate(context.Context) error {
	id := e.cfg.ExecutorDoc.ID()
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(id+": "+format, args...)) }
	switch e.api.Action {
	case v1.ActionInit:
		if e.api.InitOptions == nil {
			add("action init needs init-options naming the providers to install")
		}
	case v1.ActionMove:
		if o := e.api.MoveOptions; o != nil {
			seen := map[string]bool{o.Namespace: o.Namespace != ""}
			for i, ns := range o.Namespaces {
				switch {
				case ns == "":
					add("move-options.namespaces[%d] is empty", i)
				case seen[ns]:
					add("move-options.namespaces[%d] %q is named twice: each namespace moves once", i, ns)
				}
				seen[ns] = true
			}
		}
	case "":
		add("action is required (init or move)")
	default:
		add("action %q is not one of init, move", e.api.Action)
	}
	type key struct{ name, typ string }
	known := map[key]bool{}
	for i, p := range e.api.Providers {
		if p == nil {
			continue
		}
		if p.Name == "" {
			add("providers[%d].name is required", i)
		}
		if !slices.Contains(ProviderTypes, p.Type) {
			add("providers[%d].type %q is not one of %s", i, p.Type, strings.Join(ProviderTypes, ", "))
		}
		known[key{p.Name, p.Type}] = true
		if strings.Contains(p.URL, "://") {
			add("providers[%d].url %q: provider components come from the site tree, not the network", i, p.URL)
			continue
		}
		if p.URL == "" && len(p.Versions) == 0 {
			add("providers[%d] (%s) needs url (or versions): a kustomize root relative to the site's target path", i, p.Name)
			continue
		}
		if p.URL != "" {
			// The root must build too: a kustomization whose resources
			// are missing (an unvendored upstream tree) is found here, not
			// in the middle of clusterctl init.
			if root := e.providerRoot(p, ""); !isDir(root) {
				add("providers[%d] (%s).url: %s is not a directory", i, p.Name, root)
			} else if e.cfg.Build != nil && len(p.Versions) == 0 {
				if _, err := e.components(p, ""); err != nil {
					add("providers[%d] (%s).url: %v", i, p.Name, err)
				}
			}
		}
		for v, path := range p.Versions {
			switch {
			case strings.Contains(path, "://"):
				add("providers[%d] (%s).versions[%s] %q: provider components come from the site tree, not the network", i, p.Name, v, path)
			case !isDir(e.providerRoot(p, v)):
				add("providers[%d] (%s).versions[%s]: %s is not a directory", i, p.Name, v, e.providerRoot(p, v))
			}
		}
	}
	if o := e.api.InitOptions; o != nil && e.api.Action == v1.ActionInit {
		check := func(fieldName, typ string, entries ...string) {
			for _, entry := range entries {
				if entry == "" {
					continue
				}
				name, _, _ := strings.Cut(entry, ":")
				if !known[key{name, typ}] {
					add("init-options.%s names %q, but providers has no %s named %q", fieldName, entry, typ, name)
				}
			}
		}
		check("core-provider", "CoreProvider", o.CoreProvider)
		check("bootstrap-providers", "BootstrapProvider", o.BootstrapProviders...)
		check("control-plane-providers", "ControlPlaneProvider", o.ControlPlaneProviders...)
		check("infrastructure-providers", "InfrastructureProvider", o.InfrastructureProviders...)
	}
	return errors.Join(errs...)
}

// components builds a provider's components for version (see
// providerRoot) with the site's build, its built-in functions and render
// cache: render and run build them this one way.
func (e *Executor) components(p *v1.Provider, version string) (*document.Bundle, error) {
	root := e.providerRoot(p, version)
	if root == "" {
		return nil, fmt.Errorf("%s: provider %s (%s) has no url and no versions entry for %s", e.cfg.ExecutorDoc.ID(), p.Name, p.Type, version)
	}
	if e.cfg.Build == nil {
		return nil, fmt.Errorf("phase %q: no site build for provider %s (%s)", e.cfg.PhaseName, p.Name, p.Type)
	}
	b, err := e.cfg.Build(root)
	if err != nil {
		return nil, fmt.Errorf("provider %s (%s) components from %s: %w", p.Name, p.Type, root, err)
	}
	return b, nil
}

// Render writes the components of every provider (init) as built from the
// site tree, before variable substitution: for a provider init-options
// names, the tree of the version it asks for, as run builds it.
func (e *Executor) Render(_ context.Context, w io.Writer, opts executor.RenderOptions) error {
	if e.api.Action != v1.ActionInit {
		return fmt.Errorf("phase %q: clusterctl %s has no documents to render", e.cfg.PhaseName, e.api.Action)
	}
	versions := map[string]string{}
	if e.api.InitOptions != nil {
		if entries, err := e.initEntries(); err == nil {
			for _, en := range entries {
				versions[en.name+"/"+string(en.typ)] = en.version
			}
		}
	}
	first := true
	for _, p := range e.api.Providers {
		if p == nil {
			continue
		}
		b, err := e.components(p, versions[p.Name+"/"+p.Type])
		if err != nil {
			return err
		}
		f, err := b.Filter(opts.Selector)
		if err != nil {
			return err
		}
		if f.Len() == 0 {
			continue
		}
		if !first {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		first = false
		if err := f.Write(w); err != nil {
			return err
		}
	}
	return nil
}

// Run runs clusterctl init or move.
func (e *Executor) Run(ctx context.Context, opts executor.RunOptions) error {
	switch e.api.Action {
	case v1.ActionInit:
		return e.runInit(ctx, opts)
	case v1.ActionMove:
		return e.runMove(ctx, opts)
	}
	return fmt.Errorf("phase %q: clusterctl action %q is not one of init, move", e.cfg.PhaseName, e.api.Action)
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
