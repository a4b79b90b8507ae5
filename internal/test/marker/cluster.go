package marker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Cluster is what ScanCluster reads a cluster through.
type Cluster struct {
	// Name names the cluster in findings.
	Name      string
	Discovery discovery.DiscoveryInterface
	Dynamic   dynamic.Interface
}

// ClusterFor returns the clients of the cluster cfg reaches, without
// the API server's deprecation warnings (a scan lists deprecated types
// too).
func ClusterFor(name string, cfg *rest.Config) (Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = rest.NoWarnings{}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return Cluster{}, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Cluster{}, err
	}
	return Cluster{Name: name, Discovery: dc, Dynamic: dyn}, nil
}

// ScanCluster lists every object of every resource type the cluster
// serves in its preferred version (all namespaces) and looks for the
// markers in each: the whole object but its managedFields, and for a
// Secret only its metadata (its data is where a credential belongs). A
// finding's Where names the cluster, the object and the field path, e.g.
// `cluster "target": Event metal3/node01.17a .message`. Object types that
// cannot be listed are an error, returned with what the other types gave.
func (s Set) ScanCluster(ctx context.Context, c Cluster) ([]Finding, error) {
	groups, lists, err := discovery.ServerGroupsAndResources(c.Discovery)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: discovery: %w", c.Name, err)
	}
	preferred := map[string]bool{}
	for _, g := range groups {
		preferred[g.PreferredVersion.GroupVersion] = true
	}
	var (
		out  []Finding
		errs []error
		seen = map[string]bool{}
	)
	for _, l := range lists {
		if !preferred[l.GroupVersion] {
			continue
		}
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerb(r, "list") {
				continue
			}
			f, err := s.scanResource(ctx, c, gv.WithResource(r.Name), seen)
			out = append(out, f...)
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	sortFindings(out)
	return out, errors.Join(errs...)
}

func hasVerb(r metav1.APIResource, verb string) bool {
	for _, v := range r.Verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// scanResource lists every object of one resource, a page at a time.
// seen holds the objects scanned already: Events are served by two groups.
func (s Set) scanResource(ctx context.Context, c Cluster, gvr schema.GroupVersionResource, seen map[string]bool) ([]Finding, error) {
	var out []Finding
	opts := metav1.ListOptions{Limit: 500}
	for {
		list, err := c.Dynamic.Resource(gvr).List(ctx, opts)
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("cluster %q: listing %s: %w", c.Name, gvr, err)
		}
		for _, item := range list.Items {
			id := string(item.GetUID())
			if id == "" {
				id = gvr.Resource + "/" + item.GetNamespace() + "/" + item.GetName()
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			obj := withoutManagedFields(item.UnstructuredContent())
			if item.GetKind() == "Secret" && item.GroupVersionKind().Group == "" {
				obj = map[string]any{"metadata": obj["metadata"]}
			}
			name := item.GetName()
			if ns := item.GetNamespace(); ns != "" {
				name = ns + "/" + name
			}
			what := fmt.Sprintf("cluster %q: %s %s", c.Name, item.GetKind(), name)
			walk(obj, "", func(path, value string) {
				out = append(out, s.scan(value, func(int) string { return what + " " + path })...)
			})
		}
		if list.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = list.GetContinue()
	}
}

// withoutManagedFields is obj with a copy of its metadata that lacks
// managedFields (field names and owners, no values).
func withoutManagedFields(obj map[string]any) map[string]any {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	m := make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			m[k] = v
		}
	}
	out["metadata"] = m
	return out
}

// walk calls leaf with the path and text of every string (and map key) in
// v, in a stable order.
func walk(v any, path string, leaf func(path, value string)) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := path + "." + k
			if strings.ContainsAny(k, "./ ") {
				p = fmt.Sprintf("%s[%q]", path, k)
			}
			leaf(p, k)
			walk(x[k], p, leaf)
		}
	case []any:
		for i, e := range x {
			walk(e, fmt.Sprintf("%s[%d]", path, i), leaf)
		}
	case string:
		leaf(path, x)
	}
}
