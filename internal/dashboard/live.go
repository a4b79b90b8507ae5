package dashboard

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/phase"
)

// WatchOptions say how the clusters are watched.
type WatchOptions struct {
	// RESTConfig returns a cluster's client configuration (default: the
	// site's kubeconfig resolver).
	RESTConfig func(ctx context.Context, cluster string) (*rest.Config, error)
	// Retry is how often an unreachable cluster is tried again, and how
	// often a reachable one is asked for kinds it did not serve yet
	// (default 10 s).
	Retry time.Duration
	// Timeout bounds each request but watches (default 10 s).
	Timeout time.Duration
}

// watched is one resource the dashboard watches in every cluster that
// serves it: the versions it takes, best first, and the pages it feeds.
type watched struct {
	key      string
	group    string
	versions []string
	resource string
	topics   []string
	// compact turns a live object into what the dashboard keeps of it.
	compact func(*unstructured.Unstructured) any
}

var watchedResources = []watched{
	{key: "hosts", group: "metal3.io", versions: []string{"v1alpha1"}, resource: "baremetalhosts", topics: []string{TopicHosts, TopicOverview}, compact: compactHost},
	{key: "machines", group: "cluster.x-k8s.io", versions: []string{"v1beta2", "v1beta1"}, resource: "machines", topics: []string{TopicHosts, TopicOverview}, compact: compactMachine},
	{key: "nodes", versions: []string{"v1"}, resource: "nodes", topics: []string{TopicClusters, TopicHosts, TopicOverview}, compact: compactNode},
	{key: "manifests", group: "armada.airshipit.org", versions: []string{"v1alpha1"}, resource: "armadamanifests", topics: []string{TopicCharts, TopicOverview}, compact: compactManifest},
	{key: "groups", group: "armada.airshipit.org", versions: []string{"v1alpha1"}, resource: "armadachartgroups", topics: []string{TopicCharts, TopicOverview}, compact: compactGroup},
	{key: "charts", group: "armada.airshipit.org", versions: []string{"v1alpha1"}, resource: "armadacharts", topics: []string{TopicCharts, TopicOverview}, compact: compactChart},
	{key: "sipclusters", group: "airship.airshipit.org", versions: []string{"v1"}, resource: "sipclusters", topics: []string{TopicHosts}, compact: compactSIPCluster},
	{key: "events", versions: []string{"v1"}, resource: "events", topics: []string{TopicOverview}, compact: compactEvent},
}

// obj is what a store keeps of an object: its name and the compact form.
type obj struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	V any
}

func (o *obj) DeepCopyObject() runtime.Object { c := *o; return &c }

// live watches every cluster of the ClusterMap.
type live struct {
	site *phase.Site
	opts WatchOptions
	hub  *hub
	now  func() time.Time

	// onReachable is called when a cluster becomes reachable.
	onReachable func()
	// hostsGen counts changes of what the hosts page shows: its answer
	// is encoded once per change, however many browsers read it.
	hostsGen atomic.Uint64
	hostsMu  sync.Mutex
	hostsAt  uint64
	hostsDoc []byte

	// clusters and order are set by newLive and only read after.
	clusters map[string]*clusterWatch
	order    []string
}

// clusterWatch is one cluster: whether it answers, and its stores.
type clusterWatch struct {
	name, parent string
	sources      []string

	mu        sync.RWMutex
	reachable bool
	server    string
	version   string
	message   string
	stores    map[string]cache.Store
}

func newLive(site *phase.Site, opts WatchOptions, h *hub, now func() time.Time) *live {
	if opts.Retry <= 0 {
		opts.Retry = 10 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	l := &live{site: site, opts: opts, hub: h, now: now, clusters: map[string]*clusterWatch{}}
	if cm, err := site.ClusterMap(); err == nil && cm != nil {
		for name, c := range cm.Map {
			cw := &clusterWatch{name: name, stores: map[string]cache.Store{}, message: "not tried yet"}
			if c != nil {
				cw.parent = c.Parent
				_, cw.sources = kubeconfig.Sources(c)
			}
			l.clusters[name] = cw
			l.order = append(l.order, name)
		}
	}
	sort.Strings(l.order)
	if l.opts.RESTConfig == nil {
		l.opts.RESTConfig = func(ctx context.Context, cluster string) (*rest.Config, error) {
			r, err := site.Kubeconfigs()
			if err != nil {
				return nil, err
			}
			return r.RESTConfig(ctx, cluster)
		}
	}
	return l
}

// start watches every cluster until ctx ends.
func (l *live) start(ctx context.Context) {
	for _, name := range l.order {
		go l.watchCluster(ctx, l.clusters[name])
	}
}

// watchCluster connects to a cluster, starts an informer for each watched
// resource it serves, and keeps checking: an unreachable cluster is tried
// again every Retry, and a kind installed later (a CRD applied by a phase)
// is picked up.
func (l *live) watchCluster(ctx context.Context, cw *clusterWatch) {
	var dyn dynamic.Interface
	var disc discovery.DiscoveryInterface
	for {
		if dyn == nil {
			rc, err := l.restConfig(ctx, cw.name)
			if err == nil {
				// The informers' client has no overall timeout, which
				// would end every watch after it; their lists and
				// watches end with ctx.
				wc := rest.CopyConfig(rc)
				wc.Timeout = 0
				dyn, err = dynamic.NewForConfig(wc)
			}
			if err == nil {
				var dc *discovery.DiscoveryClient
				dc, err = discovery.NewDiscoveryClientForConfig(rc)
				disc = dc
				cw.mu.Lock()
				cw.server = rc.Host
				cw.mu.Unlock()
			}
			if err != nil {
				dyn = nil
				l.setReachable(cw, false, "", err.Error())
			}
		}
		if disc != nil {
			v, err := disc.ServerVersion()
			if err != nil {
				l.setReachable(cw, false, "", err.Error())
			} else {
				l.setReachable(cw, true, v.GitVersion, "")
				l.startInformers(ctx, cw, dyn, disc)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(l.opts.Retry):
		}
	}
}

// restConfig resolves a cluster's client configuration with a timeout on
// every request and a cap on every answer.
func (l *live) restConfig(ctx context.Context, cluster string) (*rest.Config, error) {
	ctx, cancel := context.WithTimeout(ctx, l.opts.Timeout)
	defer cancel()
	rc, err := l.opts.RESTConfig(ctx, cluster)
	if err != nil {
		return nil, err
	}
	rc = rest.CopyConfig(rc)
	rc.Timeout = l.opts.Timeout
	rc.QPS, rc.Burst = 20, 40
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return capLists{watch: rt, other: httplimit.LimitResponses(rt, maxListBytes)}
	})
	return rc, nil
}

// maxListBytes caps an answer of a cluster but a watch: a LIST of 10,000
// BareMetalHosts is about 30 MiB.
const maxListBytes = 256 << 20

// capLists sends watches (long-lived streams, decoded event by event,
// which a cap on their total would cut every so many events) as they are,
// and caps every other answer.
type capLists struct{ watch, other http.RoundTripper }

func (c capLists) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") == "true" {
		return c.watch.RoundTrip(req)
	}
	return c.other.RoundTrip(req)
}

func (l *live) setReachable(cw *clusterWatch, ok bool, version, msg string) {
	cw.mu.Lock()
	changed := cw.reachable != ok || cw.message != msg || (ok && cw.version != version)
	cw.reachable, cw.message = ok, msg
	if ok {
		cw.version = version
	}
	cw.mu.Unlock()
	if changed {
		l.hub.notify(TopicClusters, TopicOverview)
		if ok && l.onReachable != nil {
			l.onReachable()
		}
	}
}

// startInformers starts an informer for each watched resource the
// cluster serves and has none yet.
func (l *live) startInformers(ctx context.Context, cw *clusterWatch, dyn dynamic.Interface, disc discovery.DiscoveryInterface) {
	for _, w := range watchedResources {
		cw.mu.RLock()
		_, running := cw.stores[w.key]
		cw.mu.RUnlock()
		if running {
			continue
		}
		version := servedVersion(disc, w)
		if version == "" {
			continue
		}
		gvr := schema.GroupVersionResource{Group: w.group, Version: version, Resource: w.resource}
		// The watch itself must outlive the client's request timeout.
		inf := dynamicinformer.NewFilteredDynamicInformer(dyn, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil)
		informer := inf.Informer()
		compact := w.compact
		_ = informer.SetTransform(func(o any) (any, error) {
			u, ok := o.(*unstructured.Unstructured)
			if !ok {
				return o, nil
			}
			return &obj{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion()}, V: compact(u)}, nil
		})
		topics := w.topics
		hosts := slices.Contains(topics, TopicHosts)
		changed := func() {
			if hosts {
				l.hostsGen.Add(1)
			}
			l.hub.notify(topics...)
		}
		_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { changed() },
			UpdateFunc: func(any, any) { changed() },
			DeleteFunc: func(any) { changed() },
		})
		cw.mu.Lock()
		cw.stores[w.key] = informer.GetStore()
		cw.mu.Unlock()
		go informer.RunWithContext(ctx)
	}
}

// servedVersion is the first of w's versions the cluster serves w's
// resource at, or "".
func servedVersion(disc discovery.DiscoveryInterface, w watched) string {
	for _, v := range w.versions {
		gv := schema.GroupVersion{Group: w.group, Version: v}.String()
		list, err := disc.ServerResourcesForGroupVersion(gv)
		if err != nil || list == nil {
			continue
		}
		for _, r := range list.APIResources {
			if r.Name == w.resource {
				return v
			}
		}
	}
	return ""
}

// list returns the compact objects of a resource in a cluster, sorted by
// namespace and name.
func (cw *clusterWatch) list(key string) []*obj {
	cw.mu.RLock()
	st := cw.stores[key]
	cw.mu.RUnlock()
	if st == nil {
		return nil
	}
	items := st.List()
	out := make([]*obj, 0, len(items))
	for _, it := range items {
		if o, ok := it.(*obj); ok {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// count is how many objects of a resource the cluster holds.
func (cw *clusterWatch) count(key string) int {
	cw.mu.RLock()
	st := cw.stores[key]
	cw.mu.RUnlock()
	if st == nil {
		return 0
	}
	return len(st.ListKeys())
}

// snapshot is a cluster's reachability, read under its lock.
type snapshot struct {
	reachable            bool
	server, version, msg string
	watching             []string
}

func (cw *clusterWatch) snapshot() snapshot {
	cw.mu.RLock()
	defer cw.mu.RUnlock()
	return snapshot{reachable: cw.reachable, server: cw.server, version: cw.version, msg: cw.message, watching: slices.Sorted(maps.Keys(cw.stores))}
}

// each calls f for every cluster in name order.
func (l *live) each(f func(*clusterWatch)) {
	for _, n := range l.order {
		f(l.clusters[n])
	}
}

func nested(u *unstructured.Unstructured, fields ...string) string {
	v, found, err := unstructured.NestedFieldNoCopy(u.Object, fields...)
	if err != nil || !found || v == nil {
		return ""
	}
	switch t := v.(type) {
	case string:
		return t
	default:
		return fmt.Sprint(t)
	}
}

func nestedBool(u *unstructured.Unstructured, fields ...string) bool {
	b, _, _ := unstructured.NestedBool(u.Object, fields...)
	return b
}
