package data

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/metal3/capi"
	"github.com/airshipit/airship-go/internal/metal3/refs"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// TemplateReconciler gives each Metal3DataClaim of a Metal3DataTemplate an
// index and a Metal3Data, and takes them back when the claim goes.
type TemplateReconciler struct {
	Client client.Client
	// APIReader lists Metal3Data uncached: they are the record of the
	// indexes, and a Metal3Data created by the previous pass must count
	// even before the cache sees it.
	APIReader client.Reader
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datatemplates,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datatemplates/status,verbs=patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datatemplates/finalizers,verbs=update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3dataclaims,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3dataclaims/status,verbs=patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch

func (r *TemplateReconciler) setup(mgr ctrl.Manager) error {
	return builder.ControllerManagedBy(mgr).
		For(&infrav1.Metal3DataTemplate{}).
		// Claims and Metal3Data matter when they come, change spec, are
		// deleted or go; not when their status is written.
		Watches(&infrav1.Metal3DataClaim{}, handler.EnqueueRequestsFromMapFunc(templateRequest), builder.WithPredicates(specOrDeletion)).
		Watches(&infrav1.Metal3Data{}, handler.EnqueueRequestsFromMapFunc(templateRequest), builder.WithPredicates(specOrDeletion)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Named("metal3datatemplate").
		Complete(r)
}

// specOrDeletion passes every event but updates that change neither the
// spec, the owners nor the deletion timestamp.
var specOrDeletion = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero() ||
			!slices.EqualFunc(e.ObjectOld.GetOwnerReferences(), e.ObjectNew.GetOwnerReferences(), func(a, b metav1.OwnerReference) bool { return a.UID == b.UID })
	},
})

// templateRequest maps a claim or a Metal3Data to its template.
func templateRequest(_ context.Context, o client.Object) []reconcile.Request {
	var ref corev1.ObjectReference
	switch v := o.(type) {
	case *infrav1.Metal3DataClaim:
		ref = v.Spec.Template
	case *infrav1.Metal3Data:
		ref = v.Spec.Template
	}
	if ref.Name == "" {
		return nil
	}
	// Always the template of the object's own namespace: one that names
	// another is refused there, never served by that namespace's template.
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}}
}

// DataName is the name of a template's Metal3Data of one index.
func DataName(template string, index int) string { return template + "-" + strconv.Itoa(index) }

// templateScope is one reconcile of one template.
type templateScope struct {
	r    *TemplateReconciler
	t    *infrav1.Metal3DataTemplate
	key  string
	data []infrav1.Metal3Data
	// index is the index of each claim with a Metal3Data.
	index map[string]int
	// taken are the indexes in use, by any Metal3Data of the template.
	taken map[int]bool
	// live is whether any claim not being deleted names the template.
	live bool
}

// Reconcile serves the claims of one template.
func (r *TemplateReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	t := &infrav1.Metal3DataTemplate{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	snap := operatorkit.SnapshotStatus(t, "lastUpdated")
	key := req.String()
	cluster, err := capi.Cluster(ctx, r.Client, t.Namespace, t.Spec.ClusterName)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("Metal3DataTemplate %s spec.clusterName: %w", key, err)
	}
	if capi.Paused(cluster, t) {
		return reconcile.Result{RequeueAfter: pausedRecheck}, nil
	}
	deleting := !t.DeletionTimestamp.IsZero()
	if !deleting {
		if _, err := operatorkit.EnsureFinalizer(ctx, r.Client, t, infrav1.DataTemplateFinalizer); err != nil {
			return reconcile.Result{}, err
		}
	}
	if deleting && !controllerutil.ContainsFinalizer(t, infrav1.DataTemplateFinalizer) {
		return reconcile.Result{}, nil
	}

	s := &templateScope{r: r, t: t, key: key}
	claims, err := s.read(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	var res reconcile.Result
	err = s.serveClaims(ctx, claims)
	perr := s.writeStatus(ctx, snap)
	if errors.Is(err, operatorkit.ErrStatusConflict) {
		// A claim listed from a stale cache: like a conflict of the
		// template's own status, a quick retry.
		err, perr = nil, errors.Join(perr, err)
	}
	if err == nil && perr == nil && deleting {
		res, err = s.finish(ctx)
	}
	return operatorkit.Settle(res, err, perr)
}

// read reads the template's Metal3Data (readData) and lists its claims,
// oldest first.
func (s *templateScope) read(ctx context.Context) ([]infrav1.Metal3DataClaim, error) {
	if err := s.readData(ctx); err != nil {
		return nil, err
	}
	var claims infrav1.Metal3DataClaimList
	if err := s.r.Client.List(ctx, &claims, client.InNamespace(s.t.Namespace), client.MatchingFields{templateIndex: s.t.Name}); err != nil {
		return nil, fmt.Errorf("Metal3DataTemplate %s: listing Metal3DataClaims: %w", s.key, err)
	}
	slices.SortFunc(claims.Items, func(a, b infrav1.Metal3DataClaim) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return claims.Items, nil
}

// serveClaims gives every live claim of the template its Metal3Data and
// takes back those of deleted claims.
func (s *templateScope) serveClaims(ctx context.Context, claims []infrav1.Metal3DataClaim) error {
	var errs []error
	for i := range claims {
		c := &claims[i]
		if err := refs.Check("Metal3DataClaim", c.Namespace, refs.Ref{Field: "spec.template", Namespace: c.Spec.Template.Namespace}); err != nil {
			// Not served; the claim says why.
			if c.DeletionTimestamp.IsZero() {
				errs = append(errs, s.setClaimStatus(ctx, c, nil, ptr.To(err.Error())))
			}
			continue
		}
		if c.DeletionTimestamp.IsZero() {
			s.live = true
			errs = append(errs, s.serve(ctx, c))
		} else {
			errs = append(errs, s.release(ctx, c))
		}
	}
	errs = append(errs, s.letGo(ctx))
	return errors.Join(errs...)
}

// readData lists the template's Metal3Data: the record of its indexes.
func (s *templateScope) readData(ctx context.Context) error {
	var list infrav1.Metal3DataList
	if err := s.r.APIReader.List(ctx, &list, client.InNamespace(s.t.Namespace)); err != nil {
		return fmt.Errorf("Metal3DataTemplate %s: listing Metal3Data: %w", s.key, err)
	}
	s.index, s.taken = map[string]int{}, map[int]bool{}
	for _, d := range list.Items {
		if d.Spec.Template.Name != s.t.Name || (d.Spec.Template.Namespace != "" && d.Spec.Template.Namespace != s.t.Namespace) {
			continue
		}
		s.data = append(s.data, d)
		s.taken[d.Spec.Index] = true
		if d.Spec.Claim.Name != "" && d.DeletionTimestamp.IsZero() {
			s.index[d.Spec.Claim.Name] = d.Spec.Index
		}
	}
	return nil
}

// serve gives a live claim its Metal3Data: the one it has, or a new one of
// the lowest free index.
func (s *templateScope) serve(ctx context.Context, c *infrav1.Metal3DataClaim) error {
	if _, err := operatorkit.EnsureFinalizer(ctx, s.r.Client, c, infrav1.DataClaimFinalizer); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil // changed since read: its event brings it back
		}
		return err
	}
	idx, ok := s.index[c.Name]
	if !ok {
		var err error
		if idx, err = s.create(ctx, c); err != nil {
			// A claim that cannot be served until it changes says why
			// and is not retried; any other failure is, too.
			serr := s.setClaimStatus(ctx, c, nil, ptr.To(err.Error()))
			if operatorkit.IsStalled(err) {
				return serr
			}
			return errors.Join(err, serr)
		}
	}
	ref := &corev1.ObjectReference{Name: DataName(s.t.Name, idx), Namespace: s.t.Namespace}
	return s.setClaimStatus(ctx, c, ref, nil)
}

// create makes the claim's Metal3Data with the lowest free index. The
// name carries the index, so an index is never given twice: creating a
// name that exists fails, and the next index is tried.
func (s *templateScope) create(ctx context.Context, c *infrav1.Metal3DataClaim) (int, error) {
	ckey := c.Namespace + "/" + c.Name
	m3m, ok := ownerOfKind(c.OwnerReferences, infrav1.GroupVersion.Group, "Metal3Machine")
	if !ok {
		return 0, operatorkit.Stallf(noOwnerReason, "Metal3DataClaim %s metadata.ownerReferences: no Metal3Machine owns it", ckey)
	}
	for idx := 0; ; idx++ {
		if s.taken[idx] {
			continue
		}
		d := &infrav1.Metal3Data{
			ObjectMeta: metav1.ObjectMeta{
				Name:       DataName(s.t.Name, idx),
				Namespace:  s.t.Namespace,
				Labels:     c.Labels,
				Finalizers: []string{infrav1.DataClaimFinalizer},
				OwnerReferences: []metav1.OwnerReference{
					{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3DataClaim", Name: c.Name, UID: c.UID, Controller: ptr.To(true)},
					{APIVersion: m3m.APIVersion, Kind: m3m.Kind, Name: m3m.Name, UID: m3m.UID},
				},
			},
			Spec: infrav1.Metal3DataSpec{
				Index:    idx,
				Template: corev1.ObjectReference{Name: s.t.Name, Namespace: s.t.Namespace},
				Claim:    corev1.ObjectReference{Name: c.Name, Namespace: c.Namespace},
			},
		}
		err := s.r.Client.Create(ctx, d)
		if apierrors.IsAlreadyExists(err) {
			// A Metal3Data of that name that is not the template's (or
			// one created since the list): the index is not free.
			s.taken[idx] = true
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("Metal3DataClaim %s: creating Metal3Data %s/%s: %w", ckey, d.Namespace, d.Name, err)
		}
		s.taken[idx] = true
		s.index[c.Name] = idx
		s.data = append(s.data, *d)
		log.FromContext(ctx).Info("index assigned", "claim", c.Name, "index", idx, "metal3data", d.Name)
		return idx, nil
	}
}

// release deletes a deleted claim's Metal3Data, which frees its index,
// then lets the claim go. The Metal3Data's own finalizer keeps it until
// its addresses are released.
func (s *templateScope) release(ctx context.Context, c *infrav1.Metal3DataClaim) error {
	if !controllerutil.ContainsFinalizer(c, infrav1.DataClaimFinalizer) {
		return nil
	}
	ckey := c.Namespace + "/" + c.Name
	for i := range s.data {
		d := &s.data[i]
		if d.Spec.Claim.Name != c.Name {
			continue
		}
		if err := operatorkit.RemoveFinalizer(ctx, s.r.Client, d, infrav1.DataClaimFinalizer); err != nil {
			return fmt.Errorf("Metal3DataClaim %s: %w", ckey, err)
		}
		if d.DeletionTimestamp.IsZero() {
			if err := s.r.Client.Delete(ctx, d); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("Metal3DataClaim %s: deleting Metal3Data %s/%s: %w", ckey, d.Namespace, d.Name, err)
			}
			log.FromContext(ctx).Info("index released", "claim", c.Name, "index", d.Spec.Index, "metal3data", d.Name)
		}
		delete(s.index, c.Name)
	}
	return operatorkit.RemoveFinalizer(ctx, s.r.Client, c, infrav1.DataClaimFinalizer)
}

// letGo removes the template's finalizer from Metal3Data deleted by
// someone else while their claim lives: the claim gets a new one, and the
// old one goes once its addresses are released.
func (s *templateScope) letGo(ctx context.Context) error {
	var errs []error
	for i := range s.data {
		d := &s.data[i]
		if d.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(d, infrav1.DataClaimFinalizer) {
			continue
		}
		if err := operatorkit.RemoveFinalizer(ctx, s.r.Client, d, infrav1.DataClaimFinalizer); err != nil {
			errs = append(errs, fmt.Errorf("Metal3DataTemplate %s: %w", s.key, err))
		}
	}
	return errors.Join(errs...)
}

// setClaimStatus writes a claim's renderedData and errorMessage when they
// changed.
func (s *templateScope) setClaimStatus(ctx context.Context, c *infrav1.Metal3DataClaim, ref *corev1.ObjectReference, msg *string) error {
	return capi.SetClaimStatus(ctx, s.r.Client, c, &c.Status.RenderedData, &c.Status.ErrorMessage, ref, msg)
}

// writeStatus summarizes the indexes in the template's status, stamping
// lastUpdated when they changed.
func (s *templateScope) writeStatus(ctx context.Context, snap *operatorkit.StatusSnapshot) error {
	want := maps.Clone(s.index)
	if len(want) == 0 {
		want = nil
	}
	s.t.Status.Indexes = want
	if snap.Changed(s.t) {
		now := metav1.Now()
		s.t.Status.LastUpdated = &now
	}
	// Past the pass's own (locked) finalizer write.
	snap.Rebase(s.t)
	return snap.Patch(ctx, s.r.Client, s.t)
}

// finish lets a deleted template go once no claim names it and no
// Metal3Data of it is left.
func (s *templateScope) finish(ctx context.Context) (reconcile.Result, error) {
	if s.live {
		log.FromContext(ctx).Info("deleted template still has claims; waiting for them to go")
		return reconcile.Result{}, nil
	}
	if len(s.data) > 0 {
		return reconcile.Result{RequeueAfter: waitRetry}, nil
	}
	return reconcile.Result{}, operatorkit.RemoveFinalizer(ctx, s.r.Client, s.t, infrav1.DataTemplateFinalizer)
}

// ownerOfKind is the first owner reference of that group and kind.
func ownerOfKind(refs []metav1.OwnerReference, group, kind string) (metav1.OwnerReference, bool) {
	for _, o := range refs {
		gv, err := schema.ParseGroupVersion(o.APIVersion)
		if err == nil && gv.Group == group && o.Kind == kind {
			return o, true
		}
	}
	return metav1.OwnerReference{}, false
}
