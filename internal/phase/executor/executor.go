package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/document"
)

// Executor runs one phase.
type Executor interface {
	// Validate checks the executor document and the bundle without
	// touching any cluster.
	Validate(ctx context.Context) error
	// Render writes what the executor would act on, as YAML.
	Render(ctx context.Context, w io.Writer, opts RenderOptions) error
	// Run executes the phase, reporting progress as events.
	Run(ctx context.Context, opts RunOptions) error
	// Status reports what the phase has done in its cluster.
	Status(ctx context.Context) (*Status, error)
}

// Config is what an executor is built from.
type Config struct {
	// PhaseName and ClusterName identify the phase and its cluster.
	PhaseName   string
	ClusterName string
	// Phase is the phase document.
	Phase *v1.Phase
	// ExecutorDoc is the executor document from the phase bundle.
	ExecutorDoc *document.Document
	// BundlePath is the executor bundle's kustomize root, "" when the phase has none.
	BundlePath string
	// Bundle builds (once) and returns the executor bundle; nil when BundlePath is "".
	Bundle func() (*document.Bundle, error)
	// ClusterMap of the site, nil when the phase bundle has none.
	ClusterMap *v1.ClusterMap
	// PhaseBundle is the whole phase bundle (KubeConfig documents, ...).
	PhaseBundle *document.Bundle
	// TargetPath is the site's target path (for relative provider URLs).
	TargetPath string
	// SiteDir is where documentEntryPoints are relative to: the phase
	// repository in the target path and the manifest's docEntryPointPrefix
	// (GenericContainer's sinkOutputDir is relative to it, as upstream's).
	SiteDir string
	// Kubeconfig resolves kubeconfigs through the site's one resolver
	// (--kubeconfig, $KUBECONFIG, an executor's own kubeconfig file, the
	// ClusterMap's sources); every executor reaches its clusters through it.
	Kubeconfig func(ctx context.Context, req kubeconfig.Request) (*clientcmdapi.Config, error)
	// Build builds a kustomize root of the site (with the built-in functions).
	Build func(path string) (*document.Bundle, error)
	// Management is the airship config context's managementConfiguration:
	// how BMCs are reached (useproxy, insecure). nil means directly, with
	// certificates verified.
	Management *v1.ManagementConfiguration
}

// SiteWide reports whether the phase asks for a kubeconfig with every
// cluster's context (config.siteWideKubeconfig): executors that hand a
// kubeconfig on (to clusterctl, to the applier) pass it in their requests.
func (c Config) SiteWide() bool {
	return c.Phase != nil && c.Phase.Config.SiteWideKubeconfig
}

// ClusterKubeconfig returns the kubeconfig of a cluster of the ClusterMap,
// its context named after it and current; with siteWideKubeconfig, every
// other cluster's context that can be found is in it too.
func (c Config) ClusterKubeconfig(ctx context.Context, cluster string) (*clientcmdapi.Config, error) {
	if c.Kubeconfig == nil {
		return nil, fmt.Errorf("phase %q: no kubeconfig resolver to reach cluster %q", c.PhaseName, cluster)
	}
	return c.Kubeconfig(ctx, kubeconfig.Request{Cluster: cluster, SiteWide: c.SiteWide()})
}

// RESTConfig returns a client configuration for a cluster of the ClusterMap.
func (c Config) RESTConfig(ctx context.Context, cluster string) (*rest.Config, error) {
	if c.Kubeconfig == nil {
		return nil, fmt.Errorf("phase %q: no kubeconfig resolver to reach cluster %q", c.PhaseName, cluster)
	}
	kc, err := c.Kubeconfig(ctx, kubeconfig.Request{Cluster: cluster})
	if err != nil {
		return nil, err
	}
	return kubeconfig.RESTConfig(kc)
}

// RenderOptions narrow what Render prints.
type RenderOptions struct {
	Selector document.Selector
}

// RunOptions configure Run.
type RunOptions struct {
	DryRun  bool
	Timeout time.Duration
	// Events receives progress; nil discards.
	Events chan<- Event
}

// Event is one progress report of a run.
type Event struct {
	Type    string
	Message string
	Object  string
}

// Status is what a phase has done in its cluster.
type Status struct {
	Phase   string         `json:"phase"`
	Objects []ObjectStatus `json:"objects,omitempty"`
	Message string         `json:"message,omitempty"`
}

// ObjectStatus is one object of a phase.
type ObjectStatus struct {
	ID      string `json:"id"`
	Applied bool   `json:"applied"`
	Ready   bool   `json:"ready"`
	Drifted bool   `json:"drifted"`
	Message string `json:"message,omitempty"`
	// Diff says where a drifted object differs from its document, a line
	// a field ("path: live → applied"), where the executor can tell.
	Diff []string `json:"diff,omitempty"`
}

// ErrNotImplemented marks operations an executor does not do yet.
var ErrNotImplemented = errors.New("not implemented")

// Factory builds an executor.
type Factory func(Config) (Executor, error)

var (
	mu       sync.RWMutex
	registry = map[schema.GroupVersionKind]Factory{}
)

// Register adds a factory for an executor document GVK. Registering the
// same GVK twice panics: it is a programming error.
func Register(gvk schema.GroupVersionKind, f Factory) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[gvk]; dup {
		panic(fmt.Sprintf("executor %s registered twice", gvk))
	}
	registry[gvk] = f
}

// New builds the executor for cfg.ExecutorDoc's GVK.
func New(cfg Config) (Executor, error) {
	gvk := cfg.ExecutorDoc.GroupVersionKind()
	mu.RLock()
	f, ok := registry[gvk]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("phase %q: executor document %s has kind %s, which no executor handles; known executors: %v",
			cfg.PhaseName, cfg.ExecutorDoc.ID(), gvk.GroupKind(), Known())
	}
	return f(cfg)
}

// Known lists the registered executor kinds.
func Known() []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for gvk := range registry {
		out = append(out, gvk.Kind+"."+gvk.Group+"/"+gvk.Version)
	}
	sort.Strings(out)
	return out
}

// IsKnown reports whether a GVK has an executor.
func IsKnown(gvk schema.GroupVersionKind) bool {
	mu.RLock()
	defer mu.RUnlock()
	_, ok := registry[gvk]
	return ok
}
