package phase

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/config"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// Site is a loaded phase bundle and what locates its executor bundles.
type Site struct {
	Site     *config.Site
	Metadata *v1.ManifestMetadata
	// PhaseBundlePath is the phase bundle's kustomize root.
	PhaseBundlePath string
	// PhaseBundle holds phases, executors, plans and the cluster map.
	PhaseBundle *document.Bundle

	// KubeconfigOverride (--kubeconfig) is used for every cluster when set.
	KubeconfigOverride string
	// Management is the context's managementConfiguration (how BMCs are
	// reached); nil when it names none.
	Management *v1.ManagementConfiguration

	build document.BuildOptions
	// mu guards built only, never across a build: the phases of a plan
	// wave build their bundles in parallel.
	mu    sync.Mutex
	built map[string]*buildResult

	kcOnce   sync.Once
	resolver *kubeconfig.Resolver
	kcErr    error
	cmOnce   sync.Once
	cm       *v1.ClusterMap
	cmErr    error
}

// buildResult is one kustomize root's build, done once however many
// phases ask for it at the same time.
type buildResult struct {
	once   sync.Once
	bundle *document.Bundle
	err    error
}

// Kubeconfigs returns the site's one kubeconfig resolver, created on first
// use: --kubeconfig (KubeconfigOverride), else $KUBECONFIG, else the
// ClusterMap's sources. Each cluster is resolved once per Site.
func (s *Site) Kubeconfigs() (*kubeconfig.Resolver, error) {
	s.kcOnce.Do(func() {
		cm, err := s.ClusterMap()
		if err != nil {
			s.kcErr = err
			return
		}
		s.resolver = &kubeconfig.Resolver{
			ClusterMap:  cm,
			PhaseBundle: s.PhaseBundle,
			Override:    s.KubeconfigOverride,
			Env:         os.Getenv(clientcmd.RecommendedConfigPathEnvVar),
		}
	})
	return s.resolver, s.kcErr
}

// Load reads the site of a config context (current when empty) and builds its phase bundle.
func Load(cfg *config.Config, contextName string, build document.BuildOptions) (*Site, error) {
	site, err := cfg.Manifest(contextName)
	if err != nil {
		return nil, err
	}
	mc, err := cfg.Management(contextName)
	if err != nil {
		return nil, err
	}
	s, err := LoadSite(site, build)
	if err != nil {
		return nil, err
	}
	s.Management = mc
	return s, nil
}

// LoadSite builds the phase bundle of a site.
func LoadSite(site *config.Site, build document.BuildOptions) (*Site, error) {
	meta, err := site.Metadata()
	if err != nil {
		return nil, err
	}
	path, err := site.PhaseBundlePath(meta)
	if err != nil {
		return nil, err
	}
	if build.Confine == "" {
		// Every document of the site is read from its target path: a
		// symbolic link (or a path) that leads outside it is refused.
		if build.Confine, err = site.TargetPath(); err != nil {
			return nil, err
		}
	}
	bundle, err := document.Build(path, build)
	if err != nil {
		return nil, fmt.Errorf("phase bundle (targetPath + phase repository + phase.path): %w", err)
	}
	return &Site{Site: site, Metadata: meta, PhaseBundlePath: path, PhaseBundle: bundle, build: build, built: map[string]*buildResult{}}, nil
}

// Phase is a phase document and where it came from.
type Phase struct {
	API *v1.Phase
	Doc *document.Document
}

// Name of the phase.
func (p *Phase) Name() string { return p.API.Metadata.Name }

// ClusterName of the phase.
func (p *Phase) ClusterName() string { return p.API.Metadata.ClusterName }

var (
	phaseGVK      = v1.GroupVersion.WithKind("Phase")
	planGVK       = v1.GroupVersion.WithKind("PhasePlan")
	clusterMapGVK = v1.GroupVersion.WithKind("ClusterMap")
)

func byGVK(gvk schema.GroupVersionKind) document.Selector {
	return document.Selector{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
}

// Phases returns every phase of the bundle, sorted by name.
func (s *Site) Phases() ([]*Phase, error) {
	docs, err := s.PhaseBundle.Select(byGVK(phaseGVK))
	if err != nil {
		return nil, err
	}
	var errs []error
	out := make([]*Phase, 0, len(docs))
	for _, d := range docs {
		p := &v1.Phase{}
		if err := d.Decode(p); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, &Phase{API: p, Doc: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, errors.Join(errs...)
}

// Phase returns the named phase; an unknown name lists the phases there are.
func (s *Site) Phase(name string) (*Phase, error) {
	d, err := s.PhaseBundle.SelectOne(byGVK(phaseGVK).ByName(name))
	if err != nil {
		return nil, fmt.Errorf("phase %q: %w", name, err)
	}
	p := &v1.Phase{}
	if err := d.Decode(p); err != nil {
		return nil, err
	}
	return &Phase{API: p, Doc: d}, nil
}

// ExecutorDocument returns the document a phase's executorRef names.
func (s *Site) ExecutorDocument(p *Phase) (*document.Document, error) {
	ref := p.API.Config.ExecutorRef
	if ref == nil || ref.Kind == "" || ref.Name == "" {
		return nil, fmt.Errorf("phase %s: config.executorRef must name an executor document (apiVersion, kind, name)", p.Doc.ID())
	}
	sel := document.Selector{Kind: ref.Kind, Name: ref.Name}
	if ref.APIVersion != "" {
		sel = sel.ByAPIVersionKind(ref.APIVersion, ref.Kind)
	}
	d, err := s.PhaseBundle.SelectOne(sel)
	if err != nil {
		return nil, fmt.Errorf("phase %s: config.executorRef: %w", p.Doc.ID(), err)
	}
	return d, nil
}

// ExecutorBundlePath is the kustomize root of a phase's executor bundle, or "" when it has none.
func (s *Site) ExecutorBundlePath(p *Phase) (string, error) {
	if p.API.Config.DocumentEntryPoint == "" {
		return "", nil
	}
	return s.Site.ExecutorBundlePath(s.Metadata, p.API.Config.DocumentEntryPoint)
}

// ExecutorBundle builds a phase's executor bundle (once per Site).
func (s *Site) ExecutorBundle(p *Phase) (*document.Bundle, error) {
	path, err := s.ExecutorBundlePath(p)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, fmt.Errorf("phase %s has no config.documentEntryPoint, so no executor bundle", p.Doc.ID())
	}
	return s.BuildRoot(path, fmt.Sprintf("phase %q config.documentEntryPoint", p.Name()))
}

// BuildRoot builds a kustomize root, once per Site. Builds of different
// roots run in parallel; a second caller of the same root waits for the
// first one's build.
func (s *Site) BuildRoot(path, what string) (*document.Bundle, error) {
	s.mu.Lock()
	r, ok := s.built[path]
	if !ok {
		r = &buildResult{}
		s.built[path] = r
	}
	s.mu.Unlock()
	r.once.Do(func() { r.bundle, r.err = document.Build(path, s.build) })
	if r.err != nil {
		return nil, fmt.Errorf("%s: %w", what, r.err)
	}
	return r.bundle, nil
}

// ClusterMap returns the phase bundle's ClusterMap, or nil when it has
// none. It is decoded once per Site.
func (s *Site) ClusterMap() (*v1.ClusterMap, error) {
	s.cmOnce.Do(func() { s.cm, s.cmErr = s.loadClusterMap() })
	return s.cm, s.cmErr
}

func (s *Site) loadClusterMap() (*v1.ClusterMap, error) {
	docs, err := s.PhaseBundle.Select(byGVK(clusterMapGVK))
	if err != nil {
		return nil, err
	}
	switch len(docs) {
	case 0:
		return nil, nil
	case 1:
		cm := &v1.ClusterMap{}
		if err := docs[0].Decode(cm); err != nil {
			return nil, err
		}
		// "ephemeral-cluster:" with nothing after it is a cluster with
		// the defaults, as "ephemeral-cluster: {}" is.
		for name, c := range cm.Map {
			if c == nil {
				cm.Map[name] = &v1.Cluster{}
			}
		}
		return cm, nil
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID()
	}
	return nil, fmt.Errorf("phase bundle %s has %d ClusterMaps, expected one: %s", s.PhaseBundlePath, len(docs), strings.Join(ids, ", "))
}

// Plan is a plan document.
type Plan struct {
	API *v1.PhasePlan
	Doc *document.Document
}

// Plans returns every plan, sorted by name.
func (s *Site) Plans() ([]*Plan, error) {
	docs, err := s.PhaseBundle.Select(byGVK(planGVK))
	if err != nil {
		return nil, err
	}
	var errs []error
	out := make([]*Plan, 0, len(docs))
	for _, d := range docs {
		p := &v1.PhasePlan{}
		if err := d.Decode(p); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, &Plan{API: p, Doc: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].API.Name < out[j].API.Name })
	return out, errors.Join(errs...)
}

// Plan returns the named plan.
func (s *Site) Plan(name string) (*Plan, error) {
	d, err := s.PhaseBundle.SelectOne(byGVK(planGVK).ByName(name))
	if err != nil {
		return nil, fmt.Errorf("plan %q: %w", name, err)
	}
	p := &v1.PhasePlan{}
	if err := d.Decode(p); err != nil {
		return nil, err
	}
	return &Plan{API: p, Doc: d}, nil
}

// Executor builds the executor of a phase.
func (s *Site) Executor(p *Phase) (executor.Executor, error) {
	doc, err := s.ExecutorDocument(p)
	if err != nil {
		return nil, err
	}
	path, err := s.ExecutorBundlePath(p)
	if err != nil {
		return nil, err
	}
	cm, err := s.ClusterMap()
	if err != nil {
		return nil, err
	}
	target, err := s.Site.TargetPath()
	if err != nil {
		return nil, err
	}
	cfg := executor.Config{
		PhaseName:   p.Name(),
		ClusterName: p.ClusterName(),
		Phase:       p.API,
		ExecutorDoc: doc,
		BundlePath:  path,
		ClusterMap:  cm,
		PhaseBundle: s.PhaseBundle,
		TargetPath:  target,
		Management:  s.Management,
	}
	if dir, err := s.Site.ExecutorBundlePath(s.Metadata, ""); err == nil {
		cfg.SiteDir = dir
	}
	if path != "" {
		cfg.Bundle = func() (*document.Bundle, error) { return s.ExecutorBundle(p) }
	}
	cfg.Kubeconfig = func(ctx context.Context, req kubeconfig.Request) (*clientcmdapi.Config, error) {
		r, err := s.Kubeconfigs()
		if err != nil {
			return nil, err
		}
		return r.Get(ctx, req)
	}
	cfg.Build = func(path string) (*document.Bundle, error) { return s.BuildRoot(path, path) }
	return executor.New(cfg)
}

// ExecutorRefString formats an executor reference for tables.
func ExecutorRefString(ref *corev1.ObjectReference) string {
	if ref == nil {
		return ""
	}
	return ref.Kind + "/" + ref.Name
}
