package ipam

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/metal3/capi"
	"github.com/airshipit/airship-go/internal/metal3/refs"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// poolIndex indexes IPClaims and IPAddresses by the name of their pool.
const poolIndex = "spec.pool.name"

// ProviderLabelValue is the cluster.x-k8s.io/provider label upstream puts
// on a pool of a Cluster.
const ProviderLabelValue = "ipam-metal3"

// pausedRecheck is how soon a paused pool is looked at again: unpausing a
// Cluster is not an event of the pool.
const pausedRecheck = 30 * time.Second

// conflictRetry is how soon a pass that lost a write race runs again.
const conflictRetry = 200 * time.Millisecond

// Options configure the IPPool controller.
type Options struct {
	// Concurrency is how many pools are reconciled at once (default 1).
	// One pool is never reconciled twice at once.
	Concurrency int
}

// Reconciler serves the IPClaims of one IPPool per call.
type Reconciler struct {
	Client client.Client
	// APIReader confirms, uncached, that a claim is gone before its
	// address is reclaimed without it.
	APIReader client.Reader
}

// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools/status,verbs=update
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ippools/finalizers,verbs=update
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipclaims,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipclaims/status,verbs=patch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipaddresses,verbs=get;list;watch;create;patch;delete
// A pool's Cluster pauses it and owns it.
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch

// SetupWithManager registers the IPPool controller and the indexes it
// lists claims and addresses by.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	for _, o := range []client.Object{&ipamv1.IPClaim{}, &ipamv1.IPAddress{}} {
		if err := mgr.GetFieldIndexer().IndexField(ctx, o, poolIndex, poolOf); err != nil {
			return fmt.Errorf("indexing %T by %s: %w", o, poolIndex, err)
		}
	}
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
	concurrency := max(opts.Concurrency, 1)
	return builder.ControllerManagedBy(mgr).
		For(&ipamv1.IPPool{}).
		Watches(&ipamv1.IPClaim{}, handler.EnqueueRequestsFromMapFunc(poolRequest)).
		Watches(&ipamv1.IPAddress{}, handler.EnqueueRequestsFromMapFunc(poolRequest)).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("ippool").
		Complete(r)
}

func poolOf(o client.Object) []string {
	switch v := o.(type) {
	case *ipamv1.IPClaim:
		return []string{v.Spec.Pool.Name}
	case *ipamv1.IPAddress:
		return []string{v.Spec.Pool.Name}
	}
	return nil
}

// poolRequest maps a claim or an address to its pool, which is in its
// namespace.
func poolRequest(_ context.Context, o client.Object) []reconcile.Request {
	names := poolOf(o)
	if len(names) == 0 || names[0] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: names[0]}}}
}

// poolScope is one reconcile of one pool: what was read and what is to be
// done.
type poolScope struct {
	r      *Reconciler
	pool   *ipamv1.IPPool
	key    string
	claims map[string]*ipamv1.IPClaim
	addrs  map[string]*ipamv1.IPAddress // by name
	// alloc is the pool's record being built: claim name → address.
	alloc map[string]netip.Addr
	inUse InUse
	// claimErr is the error message of each claim that got no address.
	claimErr map[string]string
	// released are deleted claims whose address is back in the pool.
	released []*ipamv1.IPClaim
}

// Reconcile serves the claims of one pool.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pool := &ipamv1.IPPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	key := req.String()
	clusterName := ptr.Deref(pool.Spec.ClusterName, "")
	cluster, err := capi.Cluster(ctx, r.Client, pool.Namespace, clusterName)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("IPPool %s spec.clusterName: %w", key, err)
	}
	if capi.Paused(cluster, pool) {
		log.FromContext(ctx).V(1).Info("paused")
		return reconcile.Result{RequeueAfter: pausedRecheck}, nil
	}
	deleting := !pool.DeletionTimestamp.IsZero()
	if !deleting {
		if err := r.ensureMeta(ctx, pool, cluster); err != nil {
			if apierrors.IsConflict(err) {
				return reconcile.Result{RequeueAfter: conflictRetry}, nil
			}
			return reconcile.Result{}, fmt.Errorf("IPPool %s: %w", key, err)
		}
	} else if !controllerutil.ContainsFinalizer(pool, ipamv1.IPPoolFinalizer) {
		return reconcile.Result{}, nil
	}

	s := &poolScope{r: r, pool: pool, key: key, claimErr: map[string]string{}}
	if err := s.read(ctx); err != nil {
		return claimConflict(err)
	}
	if err := s.prune(ctx); err != nil {
		return reconcile.Result{}, err
	}
	if err := s.release(ctx); err != nil {
		return reconcile.Result{}, err
	}
	if err := s.allocate(ctx, deleting); err != nil {
		return reconcile.Result{}, err
	}
	if err := s.writeStatus(ctx); err != nil {
		if apierrors.IsConflict(err) {
			// A stale read of the pool: nothing was given out. The
			// retry reads again, once the cache has caught up.
			log.FromContext(ctx).V(1).Info("pool changed since read; retrying")
			return reconcile.Result{RequeueAfter: conflictRetry}, nil
		}
		return reconcile.Result{}, fmt.Errorf("IPPool %s: writing status.indexes: %w", key, err)
	}
	if err := s.publish(ctx); err != nil {
		return claimConflict(err)
	}
	if deleting && len(s.alloc) == 0 {
		if err := operatorkit.RemoveFinalizer(ctx, r.Client, pool, ipamv1.IPPoolFinalizer); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// claimConflict settles an error of the claims' status writes: a claim
// listed from a stale cache conflicts, and the pool is looked at again
// after conflictRetry, as after a conflict of its own; any other error is
// returned.
func claimConflict(err error) (reconcile.Result, error) {
	if errors.Is(err, operatorkit.ErrStatusConflict) {
		return reconcile.Result{RequeueAfter: conflictRetry}, nil
	}
	return reconcile.Result{}, err
}

// ensureMeta puts the finalizer, and for a pool of a Cluster the Cluster's
// labels and owner reference, on the pool, as upstream does.
func (r *Reconciler) ensureMeta(ctx context.Context, pool *ipamv1.IPPool, cluster *clusterv1.Cluster) error {
	before := pool.DeepCopy()
	controllerutil.AddFinalizer(pool, ipamv1.IPPoolFinalizer)
	if name := ptr.Deref(pool.Spec.ClusterName, ""); name != "" {
		if pool.Labels == nil {
			pool.Labels = map[string]string{}
		}
		pool.Labels[clusterv1.ClusterNameLabel] = name
		pool.Labels[clusterv1.ProviderNameLabel] = ProviderLabelValue
	}
	if cluster != nil {
		ref := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}
		if !slices.ContainsFunc(pool.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == ref.UID }) {
			pool.OwnerReferences = append(pool.OwnerReferences, ref)
		}
	}
	if equalMeta(before, pool) {
		return nil
	}
	if err := r.Client.Patch(ctx, pool, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding the finalizer and Cluster labels: %w", err)
	}
	return nil
}

func equalMeta(a, b *ipamv1.IPPool) bool {
	return slices.Equal(a.Finalizers, b.Finalizers) && maps.Equal(a.Labels, b.Labels) && len(a.OwnerReferences) == len(b.OwnerReferences)
}

// read lists the pool's claims and addresses and builds the record of
// what is allocated: the pool's status.indexes, plus IPAddresses of live
// claims it lacks (a pool restored without status, as after clusterctl
// move).
func (s *poolScope) read(ctx context.Context) error {
	var claims ipamv1.IPClaimList
	if err := s.r.Client.List(ctx, &claims, client.InNamespace(s.pool.Namespace), client.MatchingFields{poolIndex: s.pool.Name}); err != nil {
		return fmt.Errorf("IPPool %s: listing IPClaims: %w", s.key, err)
	}
	var addrs ipamv1.IPAddressList
	if err := s.r.Client.List(ctx, &addrs, client.InNamespace(s.pool.Namespace), client.MatchingFields{poolIndex: s.pool.Name}); err != nil {
		return fmt.Errorf("IPPool %s: listing IPAddresses: %w", s.key, err)
	}
	s.claims = make(map[string]*ipamv1.IPClaim, len(claims.Items))
	for i := range claims.Items {
		c := &claims.Items[i]
		if err := refs.Check("IPClaim", c.Namespace, refs.Ref{Field: "spec.pool", Namespace: c.Spec.Pool.Namespace}); err != nil {
			// A pool of that name elsewhere: never served across
			// namespaces; the claim says why.
			if c.DeletionTimestamp.IsZero() {
				if serr := s.setClaimStatus(ctx, c, nil, ptr.To(err.Error())); serr != nil {
					return serr
				}
			}
			continue
		}
		s.claims[c.Name] = c
	}
	s.addrs = make(map[string]*ipamv1.IPAddress, len(addrs.Items))
	for i := range addrs.Items {
		s.addrs[addrs.Items[i].Name] = &addrs.Items[i]
	}

	s.alloc = make(map[string]netip.Addr, len(s.pool.Status.Allocations))
	s.inUse = InUse{}
	for claim, v := range s.pool.Status.Allocations {
		a, err := ParseAddr(v)
		if err != nil {
			return fmt.Errorf("IPPool %s: status.indexes[%s]: %w", s.key, claim, err)
		}
		s.alloc[claim] = a
		s.inUse[a] = claim
	}
	for _, ia := range sortedAddrs(s.addrs) {
		a, err := ParseAddr(ia.Spec.Address)
		if err != nil {
			continue
		}
		claim := ia.Spec.Claim.Name
		if holder, taken := s.inUse[a]; taken {
			if holder != claim {
				log.FromContext(ctx).Info("IPAddress conflicts with the pool's record; it stays in use until deleted", "ipaddress", ia.Name, "claim", claim, "holder", holder)
			}
			continue
		}
		// Not in the record: an address of an earlier life of the pool.
		// It is in use whatever happens next.
		s.inUse[a] = claim
		if c, ok := s.claims[claim]; ok && c.DeletionTimestamp.IsZero() && ia.DeletionTimestamp.IsZero() {
			if _, has := s.alloc[claim]; !has {
				s.alloc[claim] = a
			}
		}
	}
	if s.pool.DeletionTimestamp.IsZero() {
		for claim, v := range s.pool.Spec.PreAllocations {
			a, err := ParseAddr(v)
			if err != nil {
				return fmt.Errorf("IPPool %s: spec.preAllocations[%s]: %w", s.key, claim, err)
			}
			if _, taken := s.inUse[a]; !taken {
				s.inUse[a] = claim
			}
		}
	}
	return nil
}

func sortedAddrs(m map[string]*ipamv1.IPAddress) []*ipamv1.IPAddress {
	out := slices.Collect(maps.Values(m))
	slices.SortFunc(out, func(a, b *ipamv1.IPAddress) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return out
}

// prune forgets allocations and deletes IPAddresses of claims that are
// gone without having been released (their finalizer removed by hand).
// Gone is asked of the API server, not the cache.
func (s *poolScope) prune(ctx context.Context) error {
	gone := map[string]bool{}
	isGone := func(claim string) (bool, error) {
		if v, ok := gone[claim]; ok {
			return v, nil
		}
		if _, ok := s.claims[claim]; ok {
			return false, nil
		}
		err := s.r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.pool.Namespace, Name: claim}, &ipamv1.IPClaim{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("IPPool %s: reading IPClaim %s/%s: %w", s.key, s.pool.Namespace, claim, err)
		}
		gone[claim] = apierrors.IsNotFound(err)
		return gone[claim], nil
	}
	for _, ia := range sortedAddrs(s.addrs) {
		g, err := isGone(ia.Spec.Claim.Name)
		if err != nil {
			return err
		}
		if g {
			if err := s.deleteAddress(ctx, ia); err != nil {
				return err
			}
		}
	}
	for _, claim := range slices.Sorted(maps.Keys(s.alloc)) {
		g, err := isGone(claim)
		if err != nil {
			return err
		}
		if g {
			log.FromContext(ctx).Info("forgetting the address of a claim that is gone", "claim", claim, "address", s.alloc[claim])
			delete(s.alloc, claim)
		}
	}
	return nil
}

// release returns the addresses of deleted claims: their IPAddress is
// deleted and their entry dropped from the record. A claim still used by
// someone else (another finalizer than the pool's) keeps its address.
func (s *poolScope) release(ctx context.Context) error {
	for _, name := range slices.Sorted(maps.Keys(s.claims)) {
		c := s.claims[name]
		if c.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(c, ipamv1.IPClaimFinalizer) {
			continue
		}
		if len(c.Finalizers) > 1 {
			log.FromContext(ctx).V(1).Info("deleted IPClaim still in use", "claim", c.Name, "finalizers", c.Finalizers)
			continue
		}
		if a, ok := s.alloc[c.Name]; ok {
			if ia := s.addrs[AddressName(s.pool.Spec.NamePrefix, s.pool.Name, a)]; ia != nil && ia.Spec.Claim.Name == c.Name {
				if err := s.deleteAddress(ctx, ia); err != nil {
					return err
				}
			}
			delete(s.alloc, c.Name)
		}
		for _, ia := range s.addrs {
			if ia.Spec.Claim.Name == c.Name && ia.DeletionTimestamp.IsZero() {
				if err := s.deleteAddress(ctx, ia); err != nil {
					return err
				}
			}
		}
		s.released = append(s.released, c)
	}
	return nil
}

// deleteAddress removes the pool's finalizer from an IPAddress and deletes it.
func (s *poolScope) deleteAddress(ctx context.Context, ia *ipamv1.IPAddress) error {
	if err := operatorkit.RemoveFinalizer(ctx, s.r.Client, ia, ipamv1.IPAddressFinalizer); err != nil {
		return fmt.Errorf("IPPool %s: %w", s.key, err)
	}
	if ia.DeletionTimestamp.IsZero() {
		if err := s.r.Client.Delete(ctx, ia); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("IPPool %s: deleting IPAddress %s/%s: %w", s.key, ia.Namespace, ia.Name, err)
		}
	}
	log.FromContext(ctx).Info("released address", "ipaddress", ia.Name, "claim", ia.Spec.Claim.Name)
	return nil
}

// allocate gives an address to every live claim without one, oldest
// claim first. A claim must carry the pool's finalizer before it gets an
// address, so its deletion always comes back here.
func (s *poolScope) allocate(ctx context.Context, deleting bool) error {
	pending := make([]*ipamv1.IPClaim, 0)
	for _, c := range s.claims {
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		if _, ok := s.alloc[c.Name]; ok {
			continue
		}
		pending = append(pending, c)
	}
	slices.SortFunc(pending, func(a, b *ipamv1.IPClaim) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	pool := Pool{Key: s.key, Spec: s.pool.Spec}
	for _, c := range pending {
		if deleting {
			s.claimErr[c.Name] = fmt.Sprintf("IPPool %s is being deleted", s.key)
			continue
		}
		if _, err := operatorkit.EnsureFinalizer(ctx, s.r.Client, c, ipamv1.IPClaimFinalizer); err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				// Changed or gone since read: its event brings it back.
				continue
			}
			return fmt.Errorf("IPPool %s: %w", s.key, err)
		}
		got, err := Allocate(pool, Request{Claim: c.Name, Address: c.Annotations[ipamv1.IPAddressAnnotation]}, s.inUse)
		if err != nil {
			s.claimErr[c.Name] = err.Error()
			continue
		}
		s.alloc[c.Name] = got.Address
		s.inUse[got.Address] = c.Name
		log.FromContext(ctx).Info("allocated address", "claim", c.Name, "address", got.Address)
	}
	return nil
}

// writeStatus writes the record when it changed, with the resourceVersion
// read: a conflict means another pass got there first, and nothing of this
// one is published.
//
// It is an Update, not the kit's status patch, on purpose: this write is
// what hands the addresses out, so it is the record exactly as this pass
// built it, under the resourceVersion read, rather than a difference from
// a snapshot; and its conflict is the allocator's own retry (see
// Reconcile), not a status write gone stale.
func (s *poolScope) writeStatus(ctx context.Context) error {
	want := make(map[string]ipamv1.IPAddressStr, len(s.alloc))
	for claim, a := range s.alloc {
		want[claim] = ipamv1.IPAddressStr(a.String())
	}
	if len(want) == 0 {
		want = nil
	}
	if maps.Equal(want, s.pool.Status.Allocations) {
		return nil
	}
	s.pool.Status.Allocations = want
	now := metav1.Now()
	s.pool.Status.LastUpdated = &now
	return s.r.Client.Status().Update(ctx, s.pool)
}

// publish makes the record visible once it is written: the IPAddress of
// each allocation, the claims' status, and the released claims' finalizer.
func (s *poolScope) publish(ctx context.Context) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.claims)) {
		c := s.claims[name]
		if !c.DeletionTimestamp.IsZero() {
			continue
		}
		a, ok := s.alloc[name]
		if !ok {
			if msg, failed := s.claimErr[name]; failed {
				errs = append(errs, s.setClaimStatus(ctx, c, nil, &msg))
			}
			continue
		}
		ref, err := s.ensureAddress(ctx, c, a)
		if err != nil {
			errs = append(errs, err, s.setClaimStatus(ctx, c, c.Status.Address, ptr.To(err.Error())))
			continue
		}
		errs = append(errs, s.setClaimStatus(ctx, c, ref, nil))
	}
	for _, c := range s.released {
		if err := operatorkit.RemoveFinalizer(ctx, s.r.Client, c, ipamv1.IPClaimFinalizer); err != nil {
			errs = append(errs, fmt.Errorf("IPPool %s: %w", s.key, err))
		}
	}
	return errors.Join(errs...)
}

// ensureAddress creates the IPAddress of an allocation unless it exists.
func (s *poolScope) ensureAddress(ctx context.Context, c *ipamv1.IPClaim, a netip.Addr) (*corev1.ObjectReference, error) {
	name := AddressName(s.pool.Spec.NamePrefix, s.pool.Name, a)
	ref := &corev1.ObjectReference{Name: name, Namespace: s.pool.Namespace}
	if ia, ok := s.addrs[name]; ok {
		if ia.Spec.Claim.Name != c.Name {
			return nil, fmt.Errorf("IPPool %s: IPAddress %s/%s of %s belongs to IPClaim %s, not %s", s.key, ia.Namespace, name, a, ia.Spec.Claim.Name, c.Name)
		}
		return ref, nil
	}
	r := Settings(s.pool.Spec, a)
	ia := &ipamv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name:       name,
			Namespace:  s.pool.Namespace,
			Labels:     c.Labels,
			Finalizers: []string{ipamv1.IPAddressFinalizer},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPPool", Name: s.pool.Name, UID: s.pool.UID},
				{APIVersion: ipamv1.GroupVersion.String(), Kind: "IPClaim", Name: c.Name, UID: c.UID},
			},
		},
		Spec: ipamv1.IPAddressSpec{
			Claim:      corev1.ObjectReference{Name: c.Name, Namespace: c.Namespace},
			Pool:       corev1.ObjectReference{Name: s.pool.Name, Namespace: s.pool.Namespace},
			Address:    ipamv1.IPAddressStr(a.String()),
			Prefix:     r.Prefix,
			Gateway:    r.Gateway,
			DNSServers: r.DNSServers,
		},
	}
	err := s.r.Client.Create(ctx, ia)
	if apierrors.IsAlreadyExists(err) {
		existing := &ipamv1.IPAddress{}
		if gerr := s.r.APIReader.Get(ctx, client.ObjectKeyFromObject(ia), existing); gerr != nil {
			return nil, fmt.Errorf("IPPool %s: reading IPAddress %s/%s: %w", s.key, ia.Namespace, name, gerr)
		}
		if existing.Spec.Claim.Name != c.Name {
			return nil, fmt.Errorf("IPPool %s: IPAddress %s/%s of %s belongs to IPClaim %s, not %s", s.key, ia.Namespace, name, a, existing.Spec.Claim.Name, c.Name)
		}
		return ref, nil
	}
	if err != nil {
		return nil, fmt.Errorf("IPPool %s: creating IPAddress %s/%s for IPClaim %s: %w", s.key, ia.Namespace, name, c.Name, err)
	}
	return ref, nil
}

// setClaimStatus writes a claim's address and error message when they
// changed.
func (s *poolScope) setClaimStatus(ctx context.Context, c *ipamv1.IPClaim, ref *corev1.ObjectReference, msg *string) error {
	if err := capi.SetClaimStatus(ctx, s.r.Client, c, &c.Status.Address, &c.Status.ErrorMessage, ref, msg); err != nil {
		return fmt.Errorf("IPPool %s: %w", s.key, err)
	}
	return nil
}
