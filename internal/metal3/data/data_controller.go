package data

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/metal3/capi"
	"github.com/airshipit/airship-go/internal/metal3/refs"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Suffixes of the rendered Secrets' names, after the Metal3Machine's name
// as upstream names them.
const (
	MetaDataSuffix    = "-metadata"
	NetworkDataSuffix = "-networkdata"
)

// DataReconciler renders the Secrets of each Metal3Data.
type DataReconciler struct {
	Client client.Client
	// APIReader reads Secrets uncached: the controller does not keep every
	// Secret of the cluster in memory.
	APIReader client.Reader
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas/status,verbs=patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas/finalizers,verbs=update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datatemplates;metal3dataclaims;metal3machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=ipam.metal3.io,resources=ipaddresses,verbs=get;list;watch
// The rendered Secrets are read one by one, created, and deleted with
// their Metal3Data.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;delete

func (r *DataReconciler) setup(mgr ctrl.Manager, concurrency int) error {
	return builder.ControllerManagedBy(mgr).
		For(&infrav1.Metal3Data{}).
		Watches(&ipamv1.IPClaim{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &infrav1.Metal3Data{}, handler.OnlyControllerOwner())).
		Watches(&infrav1.Metal3DataClaim{}, handler.EnqueueRequestsFromMapFunc(r.dataOfClaim)).
		// The claim has the Metal3Machine's name; only the host
		// annotation of the machine matters here.
		Watches(&infrav1.Metal3Machine{}, handler.EnqueueRequestsFromMapFunc(r.dataOfClaim), builder.WithPredicates(predicate.AnnotationChangedPredicate{})).
		Watches(&infrav1.Metal3DataTemplate{}, handler.EnqueueRequestsFromMapFunc(r.dataOfTemplate), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrency}).
		Named("metal3data").
		Complete(r)
}

func (r *DataReconciler) dataOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	return r.list(ctx, o.GetNamespace(), claimIndex, o.GetName())
}

func (r *DataReconciler) dataOfTemplate(ctx context.Context, o client.Object) []reconcile.Request {
	return r.list(ctx, o.GetNamespace(), templateIndex, o.GetName())
}

func (r *DataReconciler) list(ctx context.Context, ns, index, value string) []reconcile.Request {
	var list infrav1.Metal3DataList
	if err := r.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingFields{index: value}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, d := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: d.Namespace, Name: d.Name}})
	}
	return out
}

// Reasons of this package's outcome errors. Metal3Data and claims have no
// conditions: a reason shows in the log, the message in
// status.errorMessage.
const (
	// waitingReason: another object is not there or not ready yet.
	waitingReason = "Waiting"
	// invalidReason: the template cannot be rendered as the objects are.
	invalidReason = "CannotRender"
	// noOwnerReason: a claim no Metal3Machine owns is never served.
	noOwnerReason = "NoMetal3Machine"
)

func waitf(format string, a ...any) error {
	return operatorkit.Wait(waitingReason, waitRetry, format, a...)
}

func invalidf(format string, a ...any) error { return operatorkit.Stallf(invalidReason, format, a...) }

func invalid(err error) error { return operatorkit.Stall(invalidReason, err) }

// Reconcile renders one Metal3Data's Secrets, or releases what it holds
// once deleted.
func (r *DataReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	d := &infrav1.Metal3Data{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	snap := operatorkit.SnapshotStatus(d)
	cluster, err := capi.Cluster(ctx, r.Client, d.Namespace, d.Labels[clusterv1.ClusterNameLabel])
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("Metal3Data %s: %w", req, err)
	}
	if capi.Paused(cluster, d) {
		return reconcile.Result{RequeueAfter: pausedRecheck}, nil
	}
	if !d.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, d)
	}
	res, err := r.settle(ctx, d, r.reconcileNormal(ctx, d))
	// The pass's own finalizer and spec writes moved the resourceVersion.
	snap.Rebase(d)
	return operatorkit.Settle(res, err, snap.Patch(ctx, r.Client, d))
}

// reconcileNormal refuses references to other namespaces before anything
// is read, and before the finalizer; then renders.
func (r *DataReconciler) reconcileNormal(ctx context.Context, d *infrav1.Metal3Data) error {
	if err := dataReferences(d); err != nil {
		return err
	}
	if _, err := operatorkit.EnsureFinalizer(ctx, r.Client, d, infrav1.DataFinalizer); err != nil {
		return err
	}
	return r.render(ctx, d)
}

// settle puts the outcome of a pass in the status (ready, or the error
// message) and decides when to look again: a wait after waitRetry, a
// template that cannot be rendered after invalidRetry (the host or the
// machine may change without an event of this object), a failure with the
// work queue's backoff (its error returned).
func (r *DataReconciler) settle(ctx context.Context, d *infrav1.Metal3Data, stepErr error) (reconcile.Result, error) {
	d.Status.Ready, d.Status.ErrorMessage = stepErr == nil, nil
	if stepErr != nil {
		// The whole text: it names the field of the template.
		d.Status.ErrorMessage = ptr.To(stepErr.Error())
	}
	switch o := operatorkit.OutcomeOf(stepErr, ""); o.Kind {
	case operatorkit.Waiting:
		log.FromContext(ctx).V(1).Info("waiting", "reason", stepErr.Error())
		return reconcile.Result{RequeueAfter: o.After}, nil
	case operatorkit.Stalled:
		log.FromContext(ctx).Info("cannot render", "reason", stepErr.Error())
		return reconcile.Result{RequeueAfter: invalidRetry}, nil
	default:
		return reconcile.Result{}, stepErr
	}
}

// render makes the Metal3Data's Secrets, in the steps upstream takes:
// template, Metal3Machine, Secret names, then (for missing Secrets only:
// a Secret once written is kept, so a host is reprovisioned the same)
// Machine, host, addresses, rendering.
func (r *DataReconciler) render(ctx context.Context, d *infrav1.Metal3Data) error {
	key := d.Namespace + "/" + d.Name
	t, err := r.template(ctx, d)
	if err != nil {
		return err
	}
	m3m, err := r.metal3Machine(ctx, d, t)
	if err != nil {
		return err
	}
	if err := r.nameSecrets(ctx, d, t, m3m); err != nil {
		return err
	}
	missing := map[string]*corev1.SecretReference{}
	for k, ref := range map[string]*corev1.SecretReference{infrav1.MetaDataSecretKey: d.Spec.MetaData, infrav1.NetworkDataSecretKey: d.Spec.NetworkData} {
		if ref == nil {
			continue
		}
		sec := &corev1.Secret{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: ref.Name}, sec)
		switch {
		case apierrors.IsNotFound(err):
			missing[k] = ref
		case err != nil:
			return fmt.Errorf("Metal3Data %s: reading Secret %s/%s: %w", key, d.Namespace, ref.Name, err)
		default:
			// A Secret of an earlier Metal3Data of the same machine goes
			// with it; one made by hand is used as it is.
			if o := metav1.GetControllerOf(sec); o != nil && o.Kind == "Metal3Data" && o.UID != d.UID {
				return waitf("spec.%s: Secret %s/%s belongs to Metal3Data %s; waiting for it to go", k, d.Namespace, ref.Name, o.Name)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}

	machine, err := r.machine(ctx, m3m)
	if err != nil {
		return err
	}
	host, err := r.host(ctx, m3m)
	if err != nil {
		return err
	}
	in := Input{Template: &t.Spec, Namespace: d.Namespace, Index: d.Spec.Index, Metal3Machine: m3m, Machine: machine, Host: host}
	refs, err := Pools(in)
	if err != nil {
		return invalid(err)
	}
	if in.Pools, err = r.addresses(ctx, d, refs); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(missing)) {
		render := RenderMetaData
		if k == infrav1.NetworkDataSecretKey {
			render = RenderNetworkData
		}
		content, err := render(in)
		if err != nil {
			return invalid(err)
		}
		if err := r.createSecret(ctx, d, missing[k].Name, machine.Spec.ClusterName, k, content); err != nil {
			return err
		}
	}
	log.FromContext(ctx).Info("rendered", "metal3machine", m3m.Name, "host", host.Name)
	return nil
}

// dataReferences checks that spec.template, spec.claim, spec.metaData and
// spec.networkData name objects of the Metal3Data's namespace (or none).
func dataReferences(d *infrav1.Metal3Data) error {
	rs := []refs.Ref{{Field: "spec.template", Namespace: d.Spec.Template.Namespace}, {Field: "spec.claim", Namespace: d.Spec.Claim.Namespace}}
	if d.Spec.MetaData != nil {
		rs = append(rs, refs.Ref{Field: "spec.metaData", Namespace: d.Spec.MetaData.Namespace})
	}
	if d.Spec.NetworkData != nil {
		rs = append(rs, refs.Ref{Field: "spec.networkData", Namespace: d.Spec.NetworkData.Namespace})
	}
	if err := refs.Check("Metal3Data", d.Namespace, rs...); err != nil {
		return invalid(err)
	}
	return nil
}

// template is the Metal3Data's template, of its Cluster, in its namespace
// (dataReferences refused any other).
func (r *DataReconciler) template(ctx context.Context, d *infrav1.Metal3Data) (*infrav1.Metal3DataTemplate, error) {
	ns := d.Namespace
	t := &infrav1.Metal3DataTemplate{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: d.Spec.Template.Name}, t); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, waitf("spec.template: Metal3DataTemplate %s/%s not found", ns, d.Spec.Template.Name)
		}
		return nil, fmt.Errorf("spec.template: reading Metal3DataTemplate %s/%s: %w", ns, d.Spec.Template.Name, err)
	}
	if cn := d.Labels[clusterv1.ClusterNameLabel]; cn != "" && cn != t.Spec.ClusterName {
		return nil, invalidf("spec.template: Metal3DataTemplate %s/%s is of Cluster %q (spec.clusterName), not of this Metal3Data's %q", ns, t.Name, t.Spec.ClusterName, cn)
	}
	return t, nil
}

// metal3Machine is the Metal3Machine owning the Metal3Data's claim; its
// spec.dataTemplate must name the template.
func (r *DataReconciler) metal3Machine(ctx context.Context, d *infrav1.Metal3Data, t *infrav1.Metal3DataTemplate) (*infrav1.Metal3Machine, error) {
	claim := &infrav1.Metal3DataClaim{}
	ckey := client.ObjectKey{Namespace: d.Namespace, Name: d.Spec.Claim.Name}
	if err := r.Client.Get(ctx, ckey, claim); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, waitf("spec.claim: Metal3DataClaim %s not found", ckey)
		}
		return nil, fmt.Errorf("spec.claim: reading Metal3DataClaim %s: %w", ckey, err)
	}
	owner, ok := ownerOfKind(claim.OwnerReferences, infrav1.GroupVersion.Group, "Metal3Machine")
	if !ok {
		return nil, invalidf("spec.claim: Metal3DataClaim %s has no Metal3Machine in metadata.ownerReferences", ckey)
	}
	m3m := &infrav1.Metal3Machine{}
	mkey := client.ObjectKey{Namespace: d.Namespace, Name: owner.Name}
	if err := r.Client.Get(ctx, mkey, m3m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, waitf("spec.claim: Metal3Machine %s owning Metal3DataClaim %s not found", mkey, ckey)
		}
		return nil, fmt.Errorf("spec.claim: reading Metal3Machine %s: %w", mkey, err)
	}
	dt := m3m.Spec.DataTemplate
	if dt == nil || dt.Name != t.Name || (dt.Namespace != "" && dt.Namespace != t.Namespace) {
		return nil, invalidf("spec.template: Metal3Machine %s spec.dataTemplate does not name Metal3DataTemplate %s/%s", mkey, t.Namespace, t.Name)
	}
	return m3m, nil
}

// nameSecrets sets spec.metaData and spec.networkData to the Secrets the
// template renders, named after the Metal3Machine, unless set.
func (r *DataReconciler) nameSecrets(ctx context.Context, d *infrav1.Metal3Data, t *infrav1.Metal3DataTemplate, m3m *infrav1.Metal3Machine) error {
	before := d.DeepCopy()
	if t.Spec.MetaData != nil && (d.Spec.MetaData == nil || d.Spec.MetaData.Name == "") {
		d.Spec.MetaData = &corev1.SecretReference{Name: m3m.Name + MetaDataSuffix, Namespace: d.Namespace}
	}
	if t.Spec.NetworkData != nil && (d.Spec.NetworkData == nil || d.Spec.NetworkData.Name == "") {
		d.Spec.NetworkData = &corev1.SecretReference{Name: m3m.Name + NetworkDataSuffix, Namespace: d.Namespace}
	}
	if ptr.Equal(before.Spec.MetaData, d.Spec.MetaData) && ptr.Equal(before.Spec.NetworkData, d.Spec.NetworkData) {
		return nil
	}
	if err := r.Client.Patch(ctx, d, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("spec.metaData, spec.networkData: naming the Secrets: %w", err)
	}
	return nil
}

// machine is the Cluster API Machine owning the Metal3Machine.
func (r *DataReconciler) machine(ctx context.Context, m3m *infrav1.Metal3Machine) (*clusterv1.Machine, error) {
	owner, ok := ownerOfKind(m3m.OwnerReferences, clusterv1.GroupVersion.Group, "Machine")
	if !ok {
		return nil, waitf("waiting for Cluster API to make a Machine the owner of Metal3Machine %s/%s", m3m.Namespace, m3m.Name)
	}
	m := &clusterv1.Machine{}
	key := client.ObjectKey{Namespace: m3m.Namespace, Name: owner.Name}
	if err := r.Client.Get(ctx, key, m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, waitf("Machine %s owning Metal3Machine %s/%s not found", key, m3m.Namespace, m3m.Name)
		}
		return nil, fmt.Errorf("reading Machine %s: %w", key, err)
	}
	return m, nil
}

// host is the BareMetalHost the Metal3Machine's annotation names.
func (r *DataReconciler) host(ctx context.Context, m3m *infrav1.Metal3Machine) (*metal3v1alpha1.BareMetalHost, error) {
	v := m3m.Annotations[infrav1.HostAnnotation]
	if v == "" {
		return nil, waitf("waiting for Metal3Machine %s/%s to be given a BareMetalHost (annotation %s)", m3m.Namespace, m3m.Name, infrav1.HostAnnotation)
	}
	ns, name, err := cache.SplitMetaNamespaceKey(v)
	if err != nil || name == "" {
		return nil, invalidf("Metal3Machine %s/%s annotation %s: %q is not <namespace>/<name>", m3m.Namespace, m3m.Name, infrav1.HostAnnotation, v)
	}
	if err := refs.Check("Metal3Machine", m3m.Namespace, refs.Ref{Field: "metadata.annotations[" + infrav1.HostAnnotation + "]", Namespace: ns}); err != nil {
		return nil, invalid(err)
	}
	ns = m3m.Namespace
	h := &metal3v1alpha1.BareMetalHost{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, waitf("BareMetalHost %s/%s of Metal3Machine %s/%s not found", ns, name, m3m.Namespace, m3m.Name)
		}
		return nil, fmt.Errorf("reading BareMetalHost %s/%s: %w", ns, name, err)
	}
	return h, nil
}

// ClaimName is the name of the IPClaim a Metal3Data makes on a pool.
func ClaimName(data, pool string) string { return data + "-" + pool }

// addresses claims an address from every pool and returns those given.
func (r *DataReconciler) addresses(ctx context.Context, d *infrav1.Metal3Data, refs map[string]PoolRef) (map[string]PoolAddress, error) {
	out := make(map[string]PoolAddress, len(refs))
	var pending []string
	for _, name := range slices.Sorted(maps.Keys(refs)) {
		ref := refs[name]
		if !ref.IsIPPool() {
			return nil, invalidf("%s: pool %s is a %s.%s; only %s IPPools are served", ref.Field, name, ref.Kind, ref.APIGroup, ipamv1.GroupVersion.Group)
		}
		c, err := r.ipClaim(ctx, d, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref.Field, err)
		}
		if c == nil {
			pending = append(pending, name)
			continue
		}
		if msg := ptr.Deref(c.Status.ErrorMessage, ""); msg != "" {
			return nil, waitf("%s: IPClaim %s/%s: %s", ref.Field, c.Namespace, c.Name, msg)
		}
		if c.Status.Address == nil || c.Status.Address.Name == "" {
			pending = append(pending, name)
			continue
		}
		a := &ipamv1.IPAddress{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: c.Status.Address.Name}, a); err != nil {
			if apierrors.IsNotFound(err) {
				pending = append(pending, name)
				continue
			}
			return nil, fmt.Errorf("%s: reading IPAddress %s/%s: %w", ref.Field, d.Namespace, c.Status.Address.Name, err)
		}
		p := PoolAddress{Address: string(a.Spec.Address), Prefix: a.Spec.Prefix, DNSServers: strs(a.Spec.DNSServers)}
		if a.Spec.Gateway != nil {
			p.Gateway = string(*a.Spec.Gateway)
		}
		out[name] = p
	}
	if len(pending) > 0 {
		return nil, waitf("waiting for addresses from IPPools %s", strings.Join(pending, ", "))
	}
	return out, nil
}

// ipClaim makes sure the Metal3Data has an IPClaim on the pool, and
// returns it, or nil while it is not usable yet.
func (r *DataReconciler) ipClaim(ctx context.Context, d *infrav1.Metal3Data, pool string) (*ipamv1.IPClaim, error) {
	c := &ipamv1.IPClaim{}
	key := client.ObjectKey{Namespace: d.Namespace, Name: ClaimName(d.Name, pool)}
	err := r.Client.Get(ctx, key, c)
	if apierrors.IsNotFound(err) {
		c = &ipamv1.IPClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name:            key.Name,
				Namespace:       key.Namespace,
				Labels:          d.Labels,
				Finalizers:      []string{infrav1.DataFinalizer},
				OwnerReferences: []metav1.OwnerReference{dataOwner(d)},
			},
			Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: pool, Namespace: d.Namespace}},
		}
		if err := r.Client.Create(ctx, c); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating IPClaim %s: %w", key, err)
		}
		log.FromContext(ctx).Info("claimed an address", "ipclaim", key.Name, "pool", pool)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading IPClaim %s: %w", key, err)
	}
	if !metav1.IsControlledBy(c, d) {
		// An IPClaim of an earlier Metal3Data of the same name: let it go
		// if it is going, and wait.
		if !c.DeletionTimestamp.IsZero() {
			if err := operatorkit.RemoveFinalizer(ctx, r.Client, c, infrav1.DataFinalizer); err != nil {
				return nil, fmt.Errorf("letting the old IPClaim go: %w", err)
			}
		}
		return nil, waitf("IPClaim %s belongs to another Metal3Data; waiting for it to go", key)
	}
	return c, nil
}

func dataOwner(d *infrav1.Metal3Data) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}
}

// createSecret writes one rendered Secret, owned by the Metal3Data.
func (r *DataReconciler) createSecret(ctx context.Context, d *infrav1.Metal3Data, name, clusterName, key string, content []byte) error {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       d.Namespace,
			Labels:          map[string]string{clusterv1.ClusterNameLabel: clusterName},
			OwnerReferences: []metav1.OwnerReference{dataOwner(d)},
		},
		Type: infrav1.DataSecretType,
		Data: map[string][]byte{key: content},
	}
	if err := r.Client.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Secret %s/%s: %w", s.Namespace, name, err)
	}
	return nil
}

// reconcileDelete releases a deleted Metal3Data's IPClaims and Secrets,
// once its claim is gone or has another Metal3Data.
func (r *DataReconciler) reconcileDelete(ctx context.Context, d *infrav1.Metal3Data) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(d, infrav1.DataFinalizer) {
		return reconcile.Result{}, nil
	}
	key := d.Namespace + "/" + d.Name
	claim := &infrav1.Metal3DataClaim{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: d.Spec.Claim.Name}, claim)
	if err == nil && claim.DeletionTimestamp.IsZero() && claim.Status.RenderedData != nil && claim.Status.RenderedData.Name == d.Name {
		// Still the claim's data: it goes when the claim goes.
		return reconcile.Result{RequeueAfter: waitRetry}, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("Metal3Data %s: reading Metal3DataClaim: %w", key, err)
	}

	var claims ipamv1.IPClaimList
	if err := r.Client.List(ctx, &claims, client.InNamespace(d.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("Metal3Data %s: listing IPClaims: %w", key, err)
	}
	for i := range claims.Items {
		c := &claims.Items[i]
		if !metav1.IsControlledBy(c, d) {
			continue
		}
		if err := operatorkit.RemoveFinalizer(ctx, r.Client, c, infrav1.DataFinalizer); err != nil {
			return reconcile.Result{}, fmt.Errorf("Metal3Data %s: %w", key, err)
		}
		if c.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, c); err != nil && !apierrors.IsNotFound(err) {
				return reconcile.Result{}, fmt.Errorf("Metal3Data %s: deleting IPClaim %s: %w", key, c.Name, err)
			}
			log.FromContext(ctx).Info("released address claim", "ipclaim", c.Name, "pool", c.Spec.Pool.Name)
		}
	}
	// Owned Secrets would go with the Metal3Data through garbage
	// collection; deleting them here does not depend on it.
	for _, ref := range []*corev1.SecretReference{d.Spec.MetaData, d.Spec.NetworkData} {
		if ref == nil || ref.Name == "" {
			continue
		}
		s := &corev1.Secret{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: ref.Name}, s)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return reconcile.Result{}, fmt.Errorf("Metal3Data %s: reading Secret %s: %w", key, ref.Name, err)
		}
		if !metav1.IsControlledBy(s, d) {
			continue
		}
		if err := r.Client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); err != nil && !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("Metal3Data %s: deleting Secret %s: %w", key, ref.Name, err)
		}
	}
	return reconcile.Result{}, operatorkit.RemoveFinalizer(ctx, r.Client, d, infrav1.DataFinalizer)
}
