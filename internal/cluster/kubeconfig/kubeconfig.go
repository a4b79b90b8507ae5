package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/fileutil"
)

// DefaultTimeout bounds reading a kubeconfig Secret from a parent cluster.
const DefaultTimeout = 30 * time.Second

// Resolver finds kubeconfigs for the clusters of a ClusterMap. It is safe
// for concurrent use: phases of one plan wave share it.
type Resolver struct {
	// ClusterMap of the site; nil means only a kubeconfig file works.
	ClusterMap *v1.ClusterMap
	// PhaseBundle holds the KubeConfig documents.
	PhaseBundle *document.Bundle
	// Override (--kubeconfig) is a kubeconfig file used for every cluster
	// instead of the ClusterMap's sources.
	Override string
	// Env ($KUBECONFIG) is used as Override is when Override is empty: a
	// list of files, separated as in $PATH, merged as kubectl merges them
	// (the first file to name a context, cluster or user wins; missing
	// files are skipped).
	Env string
	// Timeout bounds reading a Secret from a parent cluster when the source
	// sets none (default DefaultTimeout).
	Timeout time.Duration

	userOnce sync.Once
	user     *clientcmdapi.Config
	userFrom string
	userErr  error

	mu    sync.Mutex
	cache map[string]*clientcmdapi.Config
}

// Request asks the resolver for one cluster's kubeconfig. The result has
// one context per cluster, named after it (and its cluster and user too),
// and the requested one is current.
type Request struct {
	// Cluster is a cluster of the ClusterMap: the phase's metadata.clusterName.
	Cluster string
	// File is a kubeconfig file an executor document names (KubernetesApply
	// config.kubeconfig), used instead of the ClusterMap's sources;
	// --kubeconfig and $KUBECONFIG still win over it.
	File string
	// Context is the context to take from the kubeconfig file (File,
	// --kubeconfig or $KUBECONFIG). Without it the context named after
	// Cluster is taken, or the file's only context. With SiteWide it names
	// the cluster whose context is current.
	Context string
	// SiteWide (a phase's siteWideKubeconfig) adds a context for every other
	// cluster of the ClusterMap whose kubeconfig can be found; a cluster
	// not deployed yet is left out, as upstream airshipctl does.
	SiteWide bool
}

// Config returns a kubeconfig holding only the cluster's context, named
// after the cluster and current.
func (r *Resolver) Config(ctx context.Context, cluster string) (*clientcmdapi.Config, error) {
	return r.Get(ctx, Request{Cluster: cluster})
}

// RESTConfig returns a client configuration for the cluster.
func (r *Resolver) RESTConfig(ctx context.Context, cluster string) (*rest.Config, error) {
	cfg, err := r.Config(ctx, cluster)
	if err != nil {
		return nil, err
	}
	return RESTConfig(cfg)
}

// RESTConfig returns a client configuration for the current context of cfg.
func RESTConfig(cfg *clientcmdapi.Config) (*rest.Config, error) {
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cfg.CurrentContext, err)
	}
	return rc, nil
}

// Get resolves a request: the user's kubeconfig (--kubeconfig, else
// $KUBECONFIG) when given, else the request's own file, else the
// cluster's sources in the ClusterMap (see Sources).
func (r *Resolver) Get(ctx context.Context, req Request) (*clientcmdapi.Config, error) {
	if req.SiteWide {
		return r.siteWide(ctx, req)
	}
	user, from, err := r.userConfig()
	if err != nil {
		return nil, err
	}
	if user == nil && req.File != "" {
		if user, from, err = loadFile(req.File); err != nil {
			return nil, err
		}
	}
	if user != nil {
		cfg, err := pick(user, req.Context, req.Cluster, from)
		if err != nil && req.Cluster != "" {
			return nil, fmt.Errorf("cluster %q: %w", req.Cluster, err)
		}
		return cfg, err
	}
	if req.Cluster == "" {
		return nil, errors.New("no cluster named (metadata.clusterName) and no kubeconfig file (--kubeconfig, $KUBECONFIG, or the executor's own)")
	}
	if req.Context != "" && req.Context != req.Cluster {
		return nil, fmt.Errorf("cluster %q: context %q applies to a kubeconfig file (--kubeconfig, $KUBECONFIG, or the executor's own); "+
			"the ClusterMap's kubeconfigs have one context per cluster, named after it (siteWideKubeconfig gives every cluster's)", req.Cluster, req.Context)
	}
	return r.cluster(ctx, req.Cluster, map[string]bool{})
}

// siteWide merges every cluster that resolves, with the requested one
// (which must resolve) current.
func (r *Resolver) siteWide(ctx context.Context, req Request) (*clientcmdapi.Config, error) {
	if req.File != "" {
		return nil, fmt.Errorf("kubeconfig file %s: an executor's own kubeconfig and the phase's siteWideKubeconfig exclude each other", req.File)
	}
	current := req.Context
	if current == "" {
		current = req.Cluster
	}
	if current == "" {
		return nil, errors.New("siteWideKubeconfig: the phase names no cluster (metadata.clusterName) to make current")
	}
	names := r.clusterNames()
	if !slices.Contains(names, current) {
		names = append(names, current)
	}
	out := clientcmdapi.NewConfig()
	for _, name := range names {
		cfg, err := r.Get(ctx, Request{Cluster: name})
		if err != nil {
			if name == current {
				return nil, err
			}
			continue
		}
		merge(out, cfg, name)
	}
	out.CurrentContext = current
	return out, nil
}

// Merged returns one kubeconfig with a context per named cluster (every
// cluster of the map when none is named); every one must resolve.
func (r *Resolver) Merged(ctx context.Context, clusters ...string) (*clientcmdapi.Config, error) {
	if len(clusters) == 0 {
		clusters = r.clusterNames()
	}
	out := clientcmdapi.NewConfig()
	var errs []error
	for _, c := range clusters {
		cfg, err := r.Config(ctx, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		merge(out, cfg, c)
	}
	if len(clusters) == 1 {
		out.CurrentContext = clusters[0]
	}
	return out, errors.Join(errs...)
}

// Write saves a kubeconfig atomically with mode 0600. It is the one place
// the project writes kubeconfig files.
func Write(path string, cfg *clientcmdapi.Config) error {
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("encoding kubeconfig %s: %w", path, err)
	}
	return fileutil.WriteAtomic(path, data, 0o600)
}

func merge(out, cfg *clientcmdapi.Config, name string) {
	out.Clusters[name] = cfg.Clusters[name]
	out.AuthInfos[name] = cfg.AuthInfos[name]
	out.Contexts[name] = cfg.Contexts[name]
}

func (r *Resolver) clusterNames() []string {
	if r.ClusterMap == nil {
		return nil
	}
	names := make([]string, 0, len(r.ClusterMap.Map))
	for n := range r.ClusterMap.Map {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// userConfig loads --kubeconfig, else $KUBECONFIG, once; nil when neither is set.
func (r *Resolver) userConfig() (*clientcmdapi.Config, string, error) {
	r.userOnce.Do(func() {
		switch {
		case r.Override != "":
			r.user, r.userFrom, r.userErr = loadFile(r.Override)
			r.userFrom = "--kubeconfig " + r.userFrom
			if r.userErr != nil {
				r.userErr = fmt.Errorf("--kubeconfig: %w", r.userErr)
			}
		case r.Env != "":
			r.user, r.userFrom, r.userErr = loadEnv(r.Env)
		}
	})
	return r.user, r.userFrom, r.userErr
}

// cluster resolves a cluster through its sources, once per Resolver.
func (r *Resolver) cluster(ctx context.Context, cluster string, visiting map[string]bool) (*clientcmdapi.Config, error) {
	r.mu.Lock()
	c, ok := r.cache[cluster]
	r.mu.Unlock()
	if ok {
		return c, nil
	}
	if visiting[cluster] {
		return nil, fmt.Errorf("cluster %q: parents form a cycle", cluster)
	}
	visiting[cluster] = true
	cfg, err := r.fromSources(ctx, cluster, visiting)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.cache == nil {
		r.cache = map[string]*clientcmdapi.Config{}
	}
	r.cache[cluster] = cfg
	r.mu.Unlock()
	return cfg, nil
}

// Sources returns where a cluster's kubeconfig is looked for, in order:
// its kubeconfigSources; without any, the context named after it in the
// phase bundle's KubeConfig document, which the seed calls the standard
// way of supplying kubeconfig; and with dynamicKubeConf (unless a
// clusterAPI source is listed already) the <cluster>-kubeconfig Secret of
// its parent. Implied sources are described in the second result.
func Sources(c *v1.Cluster) ([]v1.KubeconfigSource, []string) {
	srcs := slices.Clone(c.Sources)
	labels := make([]string, len(srcs))
	for i, s := range srcs {
		labels[i] = fmt.Sprintf("kubeconfigSources[%d] (%s)", i, s.Type)
	}
	if len(srcs) == 0 && !c.DynamicKubeConfig {
		srcs = append(srcs, v1.KubeconfigSource{Type: v1.KubeconfigSourceTypeBundle})
		labels = append(labels, "the phase bundle's KubeConfig document (no kubeconfigSources listed)")
	}
	isCAPI := func(s v1.KubeconfigSource) bool { return s.Type == v1.KubeconfigSourceTypeClusterAPI }
	if c.DynamicKubeConfig && !slices.ContainsFunc(srcs, isCAPI) {
		srcs = append(srcs, v1.KubeconfigSource{Type: v1.KubeconfigSourceTypeClusterAPI})
		labels = append(labels, "dynamicKubeConf")
	}
	return srcs, labels
}

func (r *Resolver) fromSources(ctx context.Context, cluster string, visiting map[string]bool) (*clientcmdapi.Config, error) {
	if r.ClusterMap == nil {
		return nil, fmt.Errorf("cluster %q: the phase bundle has no ClusterMap to find its kubeconfig; pass --kubeconfig", cluster)
	}
	entry := r.ClusterMap.Map[cluster]
	if entry == nil {
		return nil, fmt.Errorf("cluster %q is not in ClusterMap %s (clusters: %s)", cluster, r.ClusterMap.Name, strings.Join(r.clusterNames(), ", "))
	}
	srcs, labels := Sources(entry)
	var tried []string
	for i, src := range srcs {
		var cfg *clientcmdapi.Config
		var err error
		switch src.Type {
		case v1.KubeconfigSourceTypeFilesystem:
			var file *clientcmdapi.Config
			var from string
			if file, from, err = loadFile(src.FileSystem.Path); err == nil {
				cfg, err = pick(file, src.FileSystem.Context, cluster, from)
			}
		case v1.KubeconfigSourceTypeBundle:
			cfg, err = r.fromBundle(src.Bundle.Context, cluster)
		case v1.KubeconfigSourceTypeClusterAPI:
			cfg, err = r.fromClusterAPI(ctx, entry.Parent, src.ClusterAPI, cluster, visiting)
		default:
			err = fmt.Errorf("unknown type %q", src.Type)
		}
		if err == nil {
			return cfg, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v", labels[i], err))
	}
	if len(tried) == 1 {
		return nil, fmt.Errorf("cluster %q: %s", cluster, tried[0])
	}
	return nil, fmt.Errorf("cluster %q: no kubeconfig source worked:\n  - %s", cluster, strings.Join(tried, "\n  - "))
}

func expand(path string) (string, error) {
	if path == "~" || strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, strings.TrimPrefix(path, "~")), nil
	}
	return path, nil
}

// loadFile reads one kubeconfig file (~ is the home directory), with the
// files it refers to made absolute.
func loadFile(path string) (*clientcmdapi.Config, string, error) {
	p, err := expand(path)
	if err != nil {
		return nil, path, err
	}
	cfg, err := clientcmd.LoadFromFile(p)
	if err != nil {
		return nil, p, fmt.Errorf("reading %s: %w", p, err)
	}
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return nil, p, fmt.Errorf("%s: %w", p, err)
	}
	return cfg, p, nil
}

// loadEnv merges the files of a $KUBECONFIG list as kubectl does.
func loadEnv(env string) (*clientcmdapi.Config, string, error) {
	var files []string
	for _, f := range filepath.SplitList(env) {
		if f == "" {
			continue
		}
		p, err := expand(f)
		if err != nil {
			return nil, "", err
		}
		files = append(files, p)
	}
	from := "$KUBECONFIG (" + strings.Join(files, string(filepath.ListSeparator)) + ")"
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: files}
	cfg, err := rules.Load()
	if err != nil {
		return nil, from, fmt.Errorf("%s: %w", from, err)
	}
	return cfg, from, nil
}

// pick takes a context out of a kubeconfig file: contextName, else the
// one named after the cluster, else the file's only context.
func pick(cfg *clientcmdapi.Config, contextName, cluster, from string) (*clientcmdapi.Config, error) {
	name := contextName
	if name == "" {
		name = cluster
	}
	if _, ok := cfg.Contexts[name]; !ok && contextName == "" && len(cfg.Contexts) == 1 {
		for n := range cfg.Contexts {
			name = n
		}
	}
	if cluster == "" {
		cluster = name
	}
	return extract(cfg, name, cluster, from)
}

// extract copies one context (and its cluster and user) out of cfg,
// renamed to cluster.
func extract(cfg *clientcmdapi.Config, contextName, cluster, from string) (*clientcmdapi.Config, error) {
	kctx, ok := cfg.Contexts[contextName]
	if !ok {
		names := make([]string, 0, len(cfg.Contexts))
		for n := range cfg.Contexts {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%s has no context %q (contexts: %s)", from, contextName, strings.Join(names, ", "))
	}
	kc, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("%s: context %q names cluster %q, which is not in it", from, contextName, kctx.Cluster)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[cluster] = kc.DeepCopy()
	if ai, ok := cfg.AuthInfos[kctx.AuthInfo]; ok {
		out.AuthInfos[cluster] = ai.DeepCopy()
	} else {
		out.AuthInfos[cluster] = clientcmdapi.NewAuthInfo()
	}
	c := kctx.DeepCopy()
	c.Cluster, c.AuthInfo = cluster, cluster
	out.Contexts[cluster] = c
	out.CurrentContext = cluster
	return out, nil
}

var kubeConfigGVK = v1.GroupVersion.WithKind("KubeConfig")

// fromBundle takes the context named contextName (default: the cluster
// name) from the KubeConfig documents of the phase bundle. The name must
// match: one document serves every cluster of the site.
func (r *Resolver) fromBundle(contextName, cluster string) (*clientcmdapi.Config, error) {
	if contextName == "" {
		contextName = cluster
	}
	if r.PhaseBundle == nil {
		return nil, errors.New("no phase bundle")
	}
	docs, err := r.PhaseBundle.Select(document.Selector{Group: kubeConfigGVK.Group, Version: kubeConfigGVK.Version, Kind: kubeConfigGVK.Kind})
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("the phase bundle has no KubeConfig document (%s)", kubeConfigGVK.GroupVersion())
	}
	var errs []string
	for _, d := range docs {
		kc := &v1.KubeConfig{}
		if err := d.Decode(kc); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		data, err := yaml.Marshal(kc.Config)
		if err != nil {
			return nil, err
		}
		cfg, err := clientcmd.Load(data)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: config: %v", d.ID(), err))
			continue
		}
		out, err := extract(cfg, contextName, cluster, d.ID())
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		return out, nil
	}
	return nil, errors.New(strings.Join(errs, "; "))
}

// fromClusterAPI reads the cluster's kubeconfig from the
// <name>-kubeconfig Secret (key "value") Cluster API keeps in the parent.
func (r *Resolver) fromClusterAPI(ctx context.Context, parent string, src v1.KubeconfigSourceClusterAPI, cluster string, visiting map[string]bool) (*clientcmdapi.Config, error) {
	if parent == "" {
		return nil, errors.New("needs a parent cluster in the ClusterMap")
	}
	timeout := r.Timeout
	if src.Timeout != "" {
		d, err := time.ParseDuration(src.Timeout)
		if err != nil {
			return nil, fmt.Errorf("timeout %q: %w", src.Timeout, err)
		}
		timeout = d
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	pcfg, err := r.cluster(ctx, parent, visiting)
	if err != nil {
		return nil, fmt.Errorf("parent %q: %w", parent, err)
	}
	rc, err := RESTConfig(pcfg)
	if err != nil {
		return nil, fmt.Errorf("parent %q: %w", parent, err)
	}
	rc.Timeout = timeout
	c, err := client.New(rc, client.Options{})
	if err != nil {
		return nil, err
	}
	name, ns := src.NamespacedName.Name, src.NamespacedName.Namespace
	if name == "" {
		name = cluster
	}
	if ns == "" {
		ns = corev1.NamespaceDefault
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: ns, Name: name + "-kubeconfig"}
	if err := c.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("reading Secret %s in parent %q: %w", key, parent, err)
	}
	data := secret.Data["value"]
	if len(data) == 0 {
		return nil, fmt.Errorf("parent %q: Secret %s has no key \"value\"", parent, key)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("parent %q: Secret %s: %w", parent, key, err)
	}
	ctxName := cfg.CurrentContext
	if ctxName == "" {
		for n := range cfg.Contexts {
			ctxName = n
			break
		}
	}
	return extract(cfg, ctxName, cluster, "Secret "+key.String())
}
