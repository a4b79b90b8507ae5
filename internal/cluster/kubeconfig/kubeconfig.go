package kubeconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// Resolver finds kubeconfigs for the clusters of a ClusterMap.
type Resolver struct {
	// ClusterMap of the site; nil means only Override works.
	ClusterMap *v1.ClusterMap
	// PhaseBundle holds KubeConfig documents for bundle sources.
	PhaseBundle *document.Bundle
	// Override is a kubeconfig file (--kubeconfig) used for every cluster,
	// with the context named after the cluster.
	Override string
	// Timeout bounds reading a Secret from a parent cluster (default 30s).
	Timeout time.Duration

	mu    sync.Mutex
	cache map[string]*clientcmdapi.Config
}

// Config returns a kubeconfig holding only the cluster's context, named
// after the cluster and current.
func (r *Resolver) Config(ctx context.Context, cluster string) (*clientcmdapi.Config, error) {
	return r.resolve(ctx, cluster, map[string]bool{})
}

// RESTConfig returns a client configuration for the cluster.
func (r *Resolver) RESTConfig(ctx context.Context, cluster string) (*rest.Config, error) {
	cfg, err := r.Config(ctx, cluster)
	if err != nil {
		return nil, err
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cluster, err)
	}
	return rc, nil
}

// Merged returns one kubeconfig with a context per named cluster (every
// cluster of the map when none is named), for siteWideKubeconfig.
func (r *Resolver) Merged(ctx context.Context, clusters ...string) (*clientcmdapi.Config, error) {
	if len(clusters) == 0 && r.ClusterMap != nil {
		for name := range r.ClusterMap.Map {
			clusters = append(clusters, name)
		}
		sort.Strings(clusters)
	}
	out := clientcmdapi.NewConfig()
	var errs []error
	for _, c := range clusters {
		cfg, err := r.Config(ctx, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.Clusters[c] = cfg.Clusters[c]
		out.AuthInfos[c] = cfg.AuthInfos[c]
		out.Contexts[c] = cfg.Contexts[c]
	}
	if len(clusters) == 1 {
		out.CurrentContext = clusters[0]
	}
	return out, errors.Join(errs...)
}

// Write saves a kubeconfig with mode 0600.
func Write(path string, cfg *clientcmdapi.Config) error {
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return fileutil.WriteAtomic(path, data, 0o600)
}

func (r *Resolver) resolve(ctx context.Context, cluster string, visiting map[string]bool) (*clientcmdapi.Config, error) {
	r.mu.Lock()
	if c, ok := r.cache[cluster]; ok {
		r.mu.Unlock()
		return c, nil
	}
	r.mu.Unlock()
	if visiting[cluster] {
		return nil, fmt.Errorf("cluster %q: parents form a cycle", cluster)
	}
	visiting[cluster] = true

	var cfg *clientcmdapi.Config
	var err error
	if r.Override != "" {
		cfg, err = fromOverride(r.Override, cluster)
		if err != nil {
			return nil, fmt.Errorf("cluster %q from --kubeconfig: %w", cluster, err)
		}
	} else {
		cfg, err = r.fromSources(ctx, cluster, visiting)
		if err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	if r.cache == nil {
		r.cache = map[string]*clientcmdapi.Config{}
	}
	r.cache[cluster] = cfg
	r.mu.Unlock()
	return cfg, nil
}

func (r *Resolver) fromSources(ctx context.Context, cluster string, visiting map[string]bool) (*clientcmdapi.Config, error) {
	if r.ClusterMap == nil {
		return nil, fmt.Errorf("cluster %q: the phase bundle has no ClusterMap to find its kubeconfig; pass --kubeconfig", cluster)
	}
	entry := r.ClusterMap.Map[cluster]
	if entry == nil {
		names := make([]string, 0, len(r.ClusterMap.Map))
		for n := range r.ClusterMap.Map {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("cluster %q is not in ClusterMap %s (clusters: %s)", cluster, r.ClusterMap.Name, strings.Join(names, ", "))
	}
	if len(entry.Sources) == 0 {
		return nil, fmt.Errorf("cluster %q: ClusterMap %s lists no kubeconfigSources; pass --kubeconfig", cluster, r.ClusterMap.Name)
	}
	var tried []string
	for i, src := range entry.Sources {
		var cfg *clientcmdapi.Config
		var err error
		switch src.Type {
		case v1.KubeconfigSourceTypeFilesystem:
			ctxName := src.FileSystem.Context
			if ctxName == "" {
				ctxName = cluster
			}
			cfg, err = fromFile(src.FileSystem.Path, ctxName, cluster)
		case v1.KubeconfigSourceTypeBundle:
			cfg, err = r.fromBundle(src.Bundle.Context, cluster)
		case v1.KubeconfigSourceTypeClusterAPI:
			cfg, err = r.fromClusterAPI(ctx, entry.Parent, src.ClusterAPI.NamespacedName, cluster, visiting)
		default:
			err = fmt.Errorf("unknown type %q", src.Type)
		}
		if err == nil {
			return cfg, nil
		}
		tried = append(tried, fmt.Sprintf("kubeconfigSources[%d] (%s): %v", i, src.Type, err))
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

// fromOverride takes the context named after the cluster, or the only
// context of a file that has just one.
func fromOverride(path, cluster string) (*clientcmdapi.Config, error) {
	p, err := expand(path)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.LoadFromFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	ctxName := cluster
	if _, ok := cfg.Contexts[cluster]; !ok && len(cfg.Contexts) == 1 {
		for n := range cfg.Contexts {
			ctxName = n
		}
	}
	return extract(cfg, ctxName, cluster, p)
}

func fromFile(path, contextName, cluster string) (*clientcmdapi.Config, error) {
	p, err := expand(path)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.LoadFromFile(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	return extract(cfg, contextName, cluster, p)
}

// extract copies one context (and its cluster and user) out of cfg,
// renamed to cluster, with file references made absolute.
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
		return nil, fmt.Errorf("%s: context %q names cluster %q, which is not in the file", from, contextName, kctx.Cluster)
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
	if filepath.IsAbs(from) {
		if err := clientcmd.ResolveLocalPaths(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var kubeConfigGVK = v1.GroupVersion.WithKind("KubeConfig")

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
		return nil, fmt.Errorf("the phase bundle has no KubeConfig document")
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
		if _, ok := cfg.Contexts[contextName]; !ok {
			errs = append(errs, fmt.Sprintf("%s has no context %q", d.ID(), contextName))
			continue
		}
		return extract(cfg, contextName, cluster, d.ID())
	}
	return nil, errors.New(strings.Join(errs, "; "))
}

func (r *Resolver) fromClusterAPI(ctx context.Context, parent string, nn v1.NamespacedName, cluster string, visiting map[string]bool) (*clientcmdapi.Config, error) {
	if parent == "" {
		return nil, errors.New("needs a parent cluster in the ClusterMap")
	}
	pcfg, err := r.resolve(ctx, parent, visiting)
	if err != nil {
		return nil, fmt.Errorf("parent %q: %w", parent, err)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*pcfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("parent %q: %w", parent, err)
	}
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	rc.Timeout = timeout
	c, err := client.New(rc, client.Options{})
	if err != nil {
		return nil, err
	}
	name, ns := nn.Name, nn.Namespace
	if name == "" {
		name = cluster
	}
	if ns == "" {
		ns = "default"
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
		return nil, fmt.Errorf("Secret %s in parent %q has no key \"value\"", key, parent)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("Secret %s in parent %q: %w", key, parent, err)
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
