package apply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An object applied before is sent again only when something may have
// changed: the inventory keeps, per object, a hash of what was applied and
// the object's uid, resourceVersion and generation as the apply left them
// (AppliedState). A run reads the live objects' metadata with one LIST per
// kind and namespace; an object whose applied content hashes the same and
// whose live metadata shows no change since (unchanged) is counted
// unchanged without a request. Anything it cannot prove unchanged is
// applied as before, which puts a drifted object right.

// liveMeta is what a metadata LIST says of one existing object.
type liveMeta struct {
	uid, resourceVersion string
	generation           int64
	labels, annotations  map[string]string
}

// listPage bounds each metadata LIST's page.
const listPage = 500

// readLive reads the metadata of whichever of objs exist, with one LIST
// (paged) per kind and namespace, at most concurrency at once. A kind the
// API server does not know yet (its CRD comes with the bundle) has none.
func (a *Applier) readLive(ctx context.Context, objs []*unstructured.Unstructured, concurrency int) (map[string]liveMeta, error) {
	type group struct {
		gvk       schema.GroupVersionKind
		namespace string
	}
	wanted := map[group]map[string]string{} // name -> key
	for _, o := range objs {
		g := group{o.GroupVersionKind(), o.GetNamespace()}
		if wanted[g] == nil {
			wanted[g] = map[string]string{}
		}
		wanted[g][o.GetName()] = RefOf(o).Key()
	}
	groups := make([]group, 0, len(wanted))
	for g := range wanted {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return fmt.Sprint(groups[i]) < fmt.Sprint(groups[j]) })

	var mu sync.Mutex
	live := map[string]liveMeta{}
	errs := make([]error, len(groups))
	sem := make(chan struct{}, max(concurrency, 1))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			mapping, err := a.mapper.RESTMapping(g.gvk.GroupKind(), g.gvk.Version)
			if err != nil {
				if !isNoMatch(err) {
					errs[i] = fmt.Errorf("looking up %s: %w", g.gvk, err)
				}
				return
			}
			opts := []client.ListOption{client.Limit(listPage)}
			if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
				if g.namespace == "" {
					return // no namespace: nothing of that name can be read
				}
				opts = append(opts, client.InNamespace(g.namespace))
			}
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(g.gvk.GroupVersion().WithKind(g.gvk.Kind + "List"))
			for {
				if err := a.client.List(ctx, list, opts...); err != nil {
					if isNoMatch(err) {
						return
					}
					errs[i] = fmt.Errorf("listing %s in namespace %q: %w", g.gvk.Kind, g.namespace, err)
					return
				}
				mu.Lock()
				for _, item := range list.Items {
					if key, ok := wanted[g][item.Name]; ok {
						live[key] = liveMeta{uid: string(item.UID), resourceVersion: item.ResourceVersion, generation: item.Generation,
							labels: item.Labels, annotations: item.Annotations}
					}
				}
				mu.Unlock()
				if list.Continue == "" {
					return
				}
				opts = append(opts, client.Continue(list.Continue))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return live, nil
}

// appliedHash is the hash of what is applied for o (normalized, with its
// owner labels): the same document gives the same hash.
func appliedHash(o *unstructured.Unstructured) (string, error) {
	b, err := json.Marshal(o.Object) // map keys sorted: stable
	if err != nil {
		return "", fmt.Errorf("hashing %s: %w", RefOf(o), err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12]), nil
}

// unchanged says whether the object live, applied as recorded in s, can
// be left alone for desired, whose applied hash is hash: the same content,
// the same object (uid), and nothing changed it since. With a generation
// (the kinds with a spec) that is the same generation and desired's labels
// and annotations still in place, so status updates do not count; without
// one (ConfigMaps, Secrets, RBAC, ...) the same resourceVersion. An object
// whose document sets other metadata (owner references, finalizers) is
// held to its resourceVersion as well.
func (s AppliedState) unchanged(desired *unstructured.Unstructured, hash string, live liveMeta) bool {
	if s.Hash == "" || s.Hash != hash || s.UID == "" || s.UID != live.uid {
		return false
	}
	if s.Generation == 0 || setsOtherMetadata(desired) {
		return s.ResourceVersion == live.resourceVersion
	}
	return s.Generation == live.generation && subset(desired.GetLabels(), live.labels) && subset(desired.GetAnnotations(), live.annotations)
}

// setsOtherMetadata says whether o's document sets metadata other than its
// name, namespace, labels and annotations.
func setsOtherMetadata(o *unstructured.Unstructured) bool {
	m, _, _ := unstructured.NestedMap(o.Object, "metadata")
	for k, v := range m {
		switch k {
		case "name", "namespace", "labels", "annotations":
		default:
			if v != nil { // normalizing leaves creationTimestamp: null
				return true
			}
		}
	}
	return false
}

// subset says whether every key of want has the same value in got.
func subset(want, got map[string]string) bool {
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}

// stateOf is what the inventory records of o as an apply returned it.
func stateOf(o *unstructured.Unstructured, hash string) AppliedState {
	return AppliedState{Hash: hash, UID: string(o.GetUID()), ResourceVersion: o.GetResourceVersion(), Generation: o.GetGeneration()}
}

// keepApplied is the records of prev for the keys in refs.
func keepApplied(prev map[string]AppliedState, refs []ObjRef) map[string]AppliedState {
	out := map[string]AppliedState{}
	for _, r := range refs {
		if s, ok := prev[r.Key()]; ok {
			out[r.Key()] = s
		}
	}
	return out
}
