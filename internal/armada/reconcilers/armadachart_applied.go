package reconcilers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/armada/wait"
)

// The wait reads the release's workloads from the manager's cache, which
// lags the API server. Right after a Helm install, upgrade or rollback the
// cache may not hold the objects Helm just created yet (and the default
// wait, every type optional, passes on none), or may still hold a
// Deployment as it was before the upgrade changed it, ready. So the pass
// that ran the action reads back from the API server the UID and
// generation of each workload of the new revision of a kind the wait looks
// at, and the wait trusts the cache only once it holds each of them with
// that UID and at least that generation (a workload's status says which
// generation it describes, so from then on the cache cannot pass a rollout
// it has not seen). Until then the chart waits; the watch event that brings
// the cache up to date, or the poll, looks again.

// appliedObject is a workload a Helm action applied, with the UID and
// generation the API server gave it (empty and 0 until read back).
type appliedObject struct {
	gvk        schema.GroupVersionKind
	key        client.ObjectKey
	uid        types.UID
	generation int64
}

func (a appliedObject) String() string {
	return strings.ToLower(a.gvk.Kind) + "/" + a.key.Namespace + "/" + a.key.Name
}

// appliedSet is what the last Helm action on a chart's release applied.
type appliedSet struct {
	// release is the revision the action made. Only this operator acts on
	// the release, so while the chart's status (read uncached) still says
	// this revision is deployed and waits for it, it is the release's last
	// revision: the passes that wait need not read Helm's records again
	// (lastActed).
	release *release.Release
	// objects are its workloads the cache did not hold yet when last
	// looked at; none once it does.
	objects []appliedObject
	// fresh: the objects were just read back by the pass that applied
	// them; later passes read again those the cache still lacks, since one
	// may have been deleted or replaced since.
	fresh bool
}

// waitedKinds are the kinds of objects the chart's wait lists.
func waitedKinds(w *armadav1.ArmadaChartWait) map[schema.GroupVersionKind]bool {
	kinds := map[schema.GroupVersionKind]bool{}
	for _, res := range wait.Resources(w) {
		if gvk, ok := wait.KindOf(res.Type); ok {
			kinds[gvk] = true
		}
	}
	return kinds
}

// manifestObjects lists the objects of a release manifest whose kind is
// in kinds; namespace is the release's, for objects that name none.
func manifestObjects(manifest, namespace string, kinds map[schema.GroupVersionKind]bool) ([]appliedObject, error) {
	var out []appliedObject
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var m metav1.PartialObjectMetadata
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		gvk := m.GroupVersionKind()
		if !kinds[gvk] || m.Name == "" {
			continue
		}
		ns := m.Namespace
		if ns == "" {
			ns = namespace
		}
		out = append(out, appliedObject{gvk: gvk, key: client.ObjectKey{Namespace: ns, Name: m.Name}})
	}
}

// lagOf says why cached, the cache's copy of a (nil when the cache has
// none), is older than what the action applied; "" when it is not.
func lagOf(a appliedObject, cached metav1.Object) string {
	switch {
	case a.uid == "":
		return a.String() + ": not read back from the API server yet"
	case cached == nil:
		return a.String() + ": not in the cache yet"
	case cached.GetUID() != a.uid:
		return a.String() + ": the cache holds an older object of that name"
	case cached.GetGeneration() < a.generation:
		return fmt.Sprintf("%s: the cache holds generation %d, %d was applied", a, cached.GetGeneration(), a.generation)
	}
	return ""
}

// recordApplied remembers the waited-for workloads of rel, the revision a
// Helm action just made, as the API server holds them now: as it answered
// the action (applied, when the action recorded them), else read back. One
// that cannot be read is remembered without a version, and read by the
// next pass.
func (r *ArmadaChartReconciler) recordApplied(ctx context.Context, obj *armadav1.ArmadaChart, rel *release.Release, applied *helm.Applied) {
	key := client.ObjectKeyFromObject(obj)
	objs, err := manifestObjects(rel.Manifest, obj.Spec.Namespace, waitedKinds(obj.Spec.Wait))
	if err != nil {
		// Helm applied this manifest, so it parses; should it not, the
		// wait reads the cache as before.
		ctrl.LoggerFrom(ctx).Error(err, "reading the workloads of a release's manifest", "revision", rel.Version)
		objs = nil
	}
	var answered, unread []appliedObject
	for _, a := range objs {
		if applied != nil {
			if m, ok := applied.Lookup(helm.ObjectRef{GroupKind: a.gvk.GroupKind(), Namespace: a.key.Namespace, Name: a.key.Name}); ok {
				a.uid, a.generation = m.UID, m.Generation
				answered = append(answered, a)
				continue
			}
		}
		unread = append(unread, a)
	}
	r.setApplied(key, &appliedSet{release: rel, objects: append(answered, r.readBack(ctx, unread)...), fresh: true})
}

// lastActed is the revision the last Helm action on obj's release made,
// when obj's status says it is deployed and still waited for; nil when
// Helm's records must be read.
func (r *ArmadaChartReconciler) lastActed(obj *armadav1.ArmadaChart) *release.Release {
	s := r.appliedOf(client.ObjectKeyFromObject(obj))
	if s == nil || !actedIsLast(obj, s.release) {
		return nil
	}
	return s.release
}

// actedIsLast reports whether rel, the revision the operator's last Helm
// action on obj's release made, is still the release's last revision by
// obj's status: the status records it deployed, for the current spec, and
// not yet seen ready (after that, passes look for drift and read Helm's
// records, which would show a revision someone else made).
func actedIsLast(obj *armadav1.ArmadaChart, rel *release.Release) bool {
	st := &obj.Status
	return rel != nil && statusOf(rel) == releasecommon.StatusDeployed &&
		st.HelmRevision == int32(rel.Version) && st.HelmStatus == string(releasecommon.StatusDeployed) &&
		st.ObservedGeneration == obj.Generation && !st.WaitCompleted
}

// readBack reads the UID and generation of objs from the API server,
// leaving out those that no longer exist.
func (r *ArmadaChartReconciler) readBack(ctx context.Context, objs []appliedObject) []appliedObject {
	live := reader(r.APIReader, r.Client)
	out := objs[:0]
	for _, a := range objs {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(a.gvk)
		err := live.Get(ctx, a.key, m)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			ctrl.LoggerFrom(ctx).Error(err, "reading back a workload of the release", "object", a.String())
			a.uid, a.generation = "", 0
		default:
			a.uid, a.generation = m.UID, m.Generation
		}
		out = append(out, a)
	}
	return out
}

func (r *ArmadaChartReconciler) setApplied(key types.NamespacedName, s *appliedSet) {
	r.appliedMu.Lock()
	defer r.appliedMu.Unlock()
	if s == nil {
		delete(r.applied, key)
		return
	}
	if r.applied == nil {
		r.applied = map[types.NamespacedName]*appliedSet{}
	}
	r.applied[key] = s
}

func (r *ArmadaChartReconciler) appliedOf(key types.NamespacedName) *appliedSet {
	r.appliedMu.Lock()
	defer r.appliedMu.Unlock()
	return r.applied[key]
}

// cacheLag says why the cache does not hold yet what the last Helm action
// on the chart key applied; "" once it does, and the objects are dropped.
// With refresh (a pass, not an event handler), objects a pass before this
// one read back and the cache still lacks are read back again first.
func (r *ArmadaChartReconciler) cacheLag(ctx context.Context, key types.NamespacedName, refresh bool) (string, error) {
	s := r.appliedOf(key)
	if s == nil || len(s.objects) == 0 {
		return "", nil
	}
	lagging, err := r.lagging(ctx, s.objects)
	if err != nil || len(lagging) == 0 {
		if err == nil {
			r.replaceApplied(key, s, &appliedSet{release: s.release})
		}
		return "", err
	}
	if refresh && !s.fresh {
		next := &appliedSet{release: s.release, objects: r.readBack(ctx, s.objects)}
		r.replaceApplied(key, s, next)
		s = next
		if lagging, err = r.lagging(ctx, s.objects); err != nil || len(lagging) == 0 {
			if err == nil {
				r.replaceApplied(key, s, &appliedSet{release: s.release})
			}
			return "", err
		}
	}
	if refresh {
		r.appliedMu.Lock()
		s.fresh = false
		r.appliedMu.Unlock()
	}
	msg := lagging[0]
	if len(lagging) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(lagging)-1)
	}
	return msg, nil
}

// lagging lists why each of objs is behind in the cache.
func (r *ArmadaChartReconciler) lagging(ctx context.Context, objs []appliedObject) ([]string, error) {
	var out []string
	for _, a := range objs {
		ro, err := r.Client.Scheme().New(a.gvk)
		if err != nil {
			return nil, err
		}
		o, ok := ro.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%s is not an object", a.gvk)
		}
		var cached metav1.Object
		switch err := r.Client.Get(ctx, a.key, o); {
		case err == nil:
			cached = o
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading %s from the cache: %w", a, err)
		}
		if msg := lagOf(a, cached); msg != "" {
			out = append(out, msg)
		}
	}
	return out, nil
}

// replaceApplied makes next the record of key, unless a new action
// replaced old.
func (r *ArmadaChartReconciler) replaceApplied(key types.NamespacedName, old, next *appliedSet) {
	r.appliedMu.Lock()
	defer r.appliedMu.Unlock()
	if r.applied[key] != old {
		return
	}
	if next == nil {
		delete(r.applied, key)
		return
	}
	r.applied[key] = next
}

// checkWait looks once at the chart's wait, from the cache, once the cache
// holds what the last Helm action applied (cacheLag).
func (r *ArmadaChartReconciler) checkWait(ctx context.Context, c *armadav1.ArmadaChart, refresh bool) (wait.Result, error) {
	lag, err := r.cacheLag(ctx, client.ObjectKeyFromObject(c), refresh)
	if err != nil {
		return wait.Result{}, err
	}
	if lag != "" {
		return wait.Result{NotReady: []string{lag}}, nil
	}
	return wait.Check(ctx, r.Client, c.Spec.Namespace, ReleaseName(c), c.Spec.Wait)
}
