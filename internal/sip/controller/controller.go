package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/sip/netdata"
	"github.com/airshipit/airship-go/internal/sip/schedule"
	"github.com/airshipit/airship-go/internal/sip/services"
)

// DefaultResync is how often a SIPCluster is reconciled without an event.
const DefaultResync = time.Minute

// FieldOwner is the field manager of everything the controller applies.
const FieldOwner = "sip-operator"

// servicesPoll is how soon a cluster whose services are not yet available
// is looked at again (Deployment events also wake it).
const servicesPoll = 5 * time.Second

// Reconciler reconciles SIPClusters.
type Reconciler struct {
	Client client.Client
	// APIReader reads Secrets uncached: the operator does not keep every
	// Secret of the cluster in memory.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// Resync is how often a cluster is reconciled without an event.
	Resync time.Duration
}

// +kubebuilder:rbac:groups=airship.airshipit.org,resources=sipclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=airship.airshipit.org,resources=sipclusters/status,verbs=patch
// +kubebuilder:rbac:groups=airship.airshipit.org,resources=sipclusters/finalizers,verbs=update
// Hosts are read and labelled; nothing else of them is changed.
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;patch
// networkData, BMC credentials and SSH keys are read; the jump host's BMC Secret is written.
// Service objects are applied (server-side: create and patch) and pruned
// uncached: list, not watch.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;create;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps;services,verbs=get;list;create;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller: one SIPCluster at a time,
// woken by its hosts and its Deployments.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr manager.Manager) error {
	if r.Resync <= 0 {
		r.Resync = DefaultResync
	}
	return builder.ControllerManagedBy(mgr).
		For(&sipv1.SIPCluster{}).
		Owns(&appsv1.Deployment{}).
		Watches(&metal3v1alpha1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(r.clustersOfHost)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Named("sipcluster").
		Complete(r)
}

// clustersOfHost maps a host to the cluster it is labelled for, or, for a
// free host, to every cluster that is not Ready (it may now fit).
func (r *Reconciler) clustersOfHost(ctx context.Context, o client.Object) []reconcile.Request {
	l := o.GetLabels()
	if name, ns := l[sipv1.ClusterNameLabel], l[sipv1.ClusterNamespaceLabel]; name != "" && ns != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
	}
	var list sipv1.SIPClusterList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, c := range list.Items {
		if !apimeta.IsStatusConditionTrue(c.Status.Conditions, sipv1.ConditionTypeReady) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Name}})
		}
	}
	return out
}

// Reconcile runs one pass over one SIPCluster: decommission a deleted
// one, or check it, add the finalizer and run the pass. Whatever the pass
// ends with, finish turns it into the Ready condition and writes the
// status once.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	c := &sipv1.SIPCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, c); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	deleting := !c.DeletionTimestamp.IsZero()
	// Check first: an invalid cluster gets no pass and no finalizer, so
	// one that never held anything is deleted at once; one that has the
	// finalizer (it was valid and holds hosts) keeps it and what it holds.
	var (
		sreq schedule.Request
		verr error
	)
	if !deleting {
		if sreq, verr = validate(c); verr == nil {
			if _, err := operatorkit.EnsureFinalizer(ctx, r.Client, c, sipv1.Finalizer); err != nil {
				return reconcile.Result{}, err
			}
		}
	}
	// Taken after the finalizer's write: the status write is locked on the
	// resourceVersion that write left.
	snap := operatorkit.SnapshotStatus(c)
	var done string
	defer func() { res, err = r.finish(ctx, c, snap, done, err) }()
	switch {
	case deleting:
		return reconcile.Result{}, r.decommission(ctx, c)
	case verr != nil:
		c.Status.ObservedGeneration = c.Generation
		return reconcile.Result{}, operatorkit.Stall(sipv1.ReasonTypeInvalidSpec, verr)
	}
	c.Status.ObservedGeneration = c.Generation
	done, err = r.pass(ctx, c, sreq)
	return reconcile.Result{}, err
}

// validate checks the whole object (its name, spec.nodes and
// spec.services; the CRD's schema refuses most of it already, but an
// object stored before the schema did is checked here) and returns the
// scheduling request. Every problem is reported, each naming its field.
func validate(c *sipv1.SIPCluster) (schedule.Request, error) {
	req, err := schedule.NewRequest(c)
	if verr := services.Validate(c.Spec); verr != nil {
		err = errors.Join(err, verr)
	}
	return req, err
}

// pass is gather, schedule, extract, deploy services, label, wait, for a
// valid cluster. It returns the Ready message of a cluster with every host
// labelled and every service available, or the outcome that stopped it:
// a wait (no host fits, a host's data is missing or wrong, a service is
// not yet available) or a failure to retry with backoff.
func (r *Reconciler) pass(ctx context.Context, c *sipv1.SIPCluster, req schedule.Request) (string, error) {
	hosts, err := r.gather(ctx)
	if err != nil {
		return "", err
	}
	plan, err := r.schedule(ctx, c, req, hosts)
	if err != nil {
		return "", err
	}
	in, err := r.inputs(ctx, c, plan, hosts)
	if err != nil {
		return "", err
	}
	statuses, oidc, err := r.deploy(ctx, c, in)
	if err != nil {
		return "", err
	}
	if err := r.label(ctx, c, plan, hosts.byKey); err != nil {
		return "", operatorkit.Fail(sipv1.ReasonTypeUnableToApplyLabels, err)
	}
	c.Status.Nodes = nodeStatus(req, plan)
	c.Status.OIDC = oidc
	if err := r.awaitServices(ctx, c, statuses); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d hosts labelled, %d services available", len(plan.Picks), len(statuses)), nil
}

// hostIndex is every BareMetalHost as the cache holds it, and the same
// hosts by namespace/name.
type hostIndex struct {
	items []metal3v1alpha1.BareMetalHost
	byKey map[string]*metal3v1alpha1.BareMetalHost
}

// gather lists every BareMetalHost. The cache's own objects, not copies
// (a copy of 10,000 hosts costs more than scheduling them): nothing
// changes them in place; setLabels works on a copy.
func (r *Reconciler) gather(ctx context.Context) (hostIndex, error) {
	var bmhs metal3v1alpha1.BareMetalHostList
	if err := r.Client.List(ctx, &bmhs, client.UnsafeDisableDeepCopy); err != nil {
		return hostIndex{}, fmt.Errorf("listing BareMetalHosts: %w", err)
	}
	idx := hostIndex{items: bmhs.Items, byKey: make(map[string]*metal3v1alpha1.BareMetalHost, len(bmhs.Items))}
	for i := range bmhs.Items {
		b := &bmhs.Items[i]
		idx.byKey[b.Namespace+"/"+b.Name] = b
	}
	return idx, nil
}

// schedule picks the cluster's hosts. A cluster no plan fits waits, as
// Unschedulable, for a host to change; one that was never scheduled
// first loses the labels an unfinished earlier pass wrote, so that it
// holds no host while it waits.
func (r *Reconciler) schedule(ctx context.Context, c *sipv1.SIPCluster, req schedule.Request, hosts hostIndex) (schedule.Plan, error) {
	candidates := make([]schedule.Host, len(hosts.items))
	for i := range hosts.items {
		b := &hosts.items[i]
		candidates[i] = schedule.Host{Namespace: b.Namespace, Name: b.Name, Labels: b.Labels, Unusable: unusable(b)}
	}
	plan, err := schedule.Schedule(req, candidates)
	var ue *schedule.UnschedulableError
	if err == nil || !errors.As(err, &ue) {
		return plan, err
	}
	msg := err.Error()
	if len(c.Status.Nodes) == 0 {
		if rerr := r.release(ctx, c, hosts.items); rerr != nil {
			msg += "; releasing its hosts: " + rerr.Error()
		}
	}
	log.FromContext(ctx).Info("unschedulable", "reason", msg)
	return plan, operatorkit.Wait(sipv1.ReasonTypeUnschedulable, 0, "%s", msg)
}

// inputs reads what the services are built from: each picked host's
// addresses and BMC credentials, the jump hosts' keys and the Dex
// connectors' Secrets. A Secret or host datum that is missing or wrong is
// waited for, as InfraServiceFailure naming it, rather than retried with
// backoff: Secrets are not watched, and the resync sees the fix.
func (r *Reconciler) inputs(ctx context.Context, c *sipv1.SIPCluster, plan schedule.Plan, hosts hostIndex) (services.Inputs, error) {
	in := services.Inputs{Cluster: c}
	for _, pk := range plan.Picks {
		h, err := r.extract(ctx, hosts.byKey[pk.Host.Key()], pk, c.Spec.Services)
		if err != nil {
			return in, waitForInput(err)
		}
		in.Hosts = append(in.Hosts, h)
	}
	slices.SortFunc(in.Hosts, func(a, b services.Host) int { return strings.Compare(a.Name, b.Name) })
	var err error
	if in.SSHKeys, err = r.sshKeys(ctx, c); err != nil {
		return in, waitForInput(err)
	}
	if in.ConnectorSecrets, err = r.connectorSecrets(ctx, c); err != nil {
		return in, waitForInput(err)
	}
	return in, nil
}

// waitForInput is the outcome of a pass whose inputs cannot be used (see
// inputs).
func waitForInput(err error) error {
	return operatorkit.Wait(sipv1.ReasonTypeInfraServiceFailure, 0, "%s", err)
}

// deploy builds the services' objects, applies them and prunes the
// cluster's objects no longer wanted. A build error (a host without an
// address on a service's network, a connector Secret without its key) is
// waited for as inputs' errors are; an apply or prune error is retried
// with backoff.
func (r *Reconciler) deploy(ctx context.Context, c *sipv1.SIPCluster, in services.Inputs) ([]sipv1.ServiceStatus, *sipv1.OIDCStatus, error) {
	objs, statuses, oidc, err := services.Build(in)
	if err != nil {
		return nil, nil, waitForInput(err)
	}
	if err := r.applyServices(ctx, c, objs); err != nil {
		return nil, nil, operatorkit.Fail(sipv1.ReasonTypeInfraServiceFailure, err)
	}
	return statuses, oidc, nil
}

// awaitServices records each service's readiness in the status and waits,
// as Progressing, until every one is available; Deployment events wake
// the cluster too.
func (r *Reconciler) awaitServices(ctx context.Context, c *sipv1.SIPCluster, statuses []sipv1.ServiceStatus) error {
	ready, waiting := r.servicesReady(ctx, c, statuses)
	c.Status.Services = statuses
	c.Status.ServicesSummary = fmt.Sprintf("%d/%d", ready, len(statuses))
	if len(waiting) > 0 {
		return operatorkit.Wait(sipv1.ReasonTypeProgressing, servicesPoll, "waiting for services to be available: %s", strings.Join(waiting, ", "))
	}
	return nil
}

// unusable says why a host cannot be given to a cluster.
func unusable(b *metal3v1alpha1.BareMetalHost) string {
	st := b.Status
	switch {
	case !b.DeletionTimestamp.IsZero():
		return "being deleted"
	case hasAnnotation(b, metal3v1alpha1.DetachedAnnotation) || st.OperationalStatus == metal3v1alpha1.OperationalStatusDetached:
		return "detached"
	case st.ErrorType != "":
		return "in error (" + string(st.ErrorType) + ")"
	case st.OperationalStatus == metal3v1alpha1.OperationalStatusError:
		return "in error"
	case foreignNetworkData(b):
		// Secrets a host names are its own namespace's: SIP never reads
		// another namespace's Secret on a host's word.
		return "spec.networkData names a Secret of another namespace (" + b.Spec.NetworkData.Namespace + ")"
	}
	switch st.Provisioning.State {
	case metal3v1alpha1.StateDeprovisioning, metal3v1alpha1.StateDeleting, metal3v1alpha1.StatePoweringOffBeforeDelete:
		return "being deprovisioned"
	case metal3v1alpha1.StateProvisioned, metal3v1alpha1.StateExternallyProvisioned:
		if b.Spec.Online && !st.PoweredOn {
			return "powered off"
		}
	}
	return ""
}

// foreignNetworkData: the host's networkData names a namespace other
// than its own.
func foreignNetworkData(b *metal3v1alpha1.BareMetalHost) bool {
	ref := b.Spec.NetworkData
	return ref != nil && ref.Namespace != "" && ref.Namespace != b.Namespace
}

func hasAnnotation(o metav1.Object, k string) bool {
	_, ok := o.GetAnnotations()[k]
	return ok
}

// extract reads a picked host's addresses and BMC credentials.
func (r *Reconciler) extract(ctx context.Context, b *metal3v1alpha1.BareMetalHost, pk schedule.Pick, svc sipv1.SIPClusterServices) (services.Host, error) {
	h := services.Host{Name: b.Name, Role: pk.Role, Standby: pk.Standby, BMCAddress: b.Spec.BMC.Address}
	id := fmt.Sprintf("BareMetalHost %s/%s", b.Namespace, b.Name)
	if needsAddresses(svc) {
		ref := b.Spec.NetworkData
		if ref == nil || ref.Name == "" {
			return h, fmt.Errorf("%s: spec.networkData is not set: SIP reads the host's addresses from it", id)
		}
		if foreignNetworkData(b) {
			return h, fmt.Errorf("%s: spec.networkData.namespace %q: must be the host's own namespace", id, ref.Namespace)
		}
		ns := b.Namespace
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, sec); err != nil {
			if apierrors.IsNotFound(err) {
				return h, fmt.Errorf("%s: spec.networkData: Secret %s/%s not found", id, ns, ref.Name)
			}
			return h, fmt.Errorf("%s: spec.networkData: reading Secret %s/%s: %w", id, ns, ref.Name, err)
		}
		ips, err := netdata.Parse(sec.Data[netdata.SecretKey])
		if err != nil {
			return h, fmt.Errorf("%s: spec.networkData: Secret %s/%s key %s: %w", id, ns, ref.Name, netdata.SecretKey, err)
		}
		h.IPs = ips
	}
	if len(svc.JumpHost) > 0 && b.Spec.BMC.CredentialsName != "" {
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: b.Spec.BMC.CredentialsName}, sec); err != nil {
			return h, fmt.Errorf("%s: spec.bmc.credentialsName: Secret %s/%s: %w", id, b.Namespace, b.Spec.BMC.CredentialsName, err)
		}
		h.BMCUsername, h.BMCPassword = string(sec.Data["username"]), string(sec.Data["password"])
	}
	return h, nil
}

// needsAddresses reports whether any service uses the hosts' addresses.
func needsAddresses(s sipv1.SIPClusterServices) bool {
	return len(s.LoadBalancerControlPlane)+len(s.LoadBalancerWorker)+len(s.JumpHost) > 0
}

// sshKeys reads the Secrets the jump hosts' nodeSSHPrivateKeys name.
func (r *Reconciler) sshKeys(ctx context.Context, c *sipv1.SIPCluster) ([]map[string][]byte, error) {
	var out []map[string][]byte
	for i, j := range c.Spec.Services.JumpHost {
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: j.NodeSSHPrivateKeys}, sec); err != nil {
			if apierrors.IsNotFound(err) {
				// The jump host is built without keys and its status says
				// so; its pod waits for the Secret.
				out = append(out, nil)
				continue
			}
			return nil, fmt.Errorf("spec.services.jumpHost[%d].nodeSSHPrivateKeys: %w", i, err)
		}
		out = append(out, sec.Data)
	}
	return out, nil
}

// connectorSecrets reads the Secrets the Dex connectors' configSecrets
// name, always in the cluster's namespace. A missing one is left out:
// services.Build reports it by its field.
func (r *Reconciler) connectorSecrets(ctx context.Context, c *sipv1.SIPCluster) (map[string]*corev1.Secret, error) {
	out := map[string]*corev1.Secret{}
	for i, a := range c.Spec.Services.Auth {
		for j, conn := range a.Connectors {
			for k, cs := range conn.ConfigSecrets {
				name := cs.SecretRef.Name
				if _, done := out[name]; done {
					continue
				}
				sec := &corev1.Secret{}
				if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: name}, sec); err != nil {
					if apierrors.IsNotFound(err) {
						continue
					}
					return nil, fmt.Errorf("spec.services.auth[%d].connectors[%d].configSecrets[%d].secretRef: reading Secret %s/%s: %w", i, j, k, c.Namespace, name, err)
				}
				out[name] = sec
			}
		}
	}
	return out, nil
}

// applyServices applies the services' objects and deletes the cluster's
// objects that are no longer wanted.
func (r *Reconciler) applyServices(ctx context.Context, c *sipv1.SIPCluster, objs []client.Object) error {
	want := map[string]bool{}
	for _, o := range objs {
		gvk, err := gvkOf(r.Client, o)
		if err != nil {
			return err
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		o.SetManagedFields(nil)
		o.SetResourceVersion("")
		if err := r.Client.Patch(ctx, o, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
		want[gvk.Kind+"/"+o.GetName()] = true
	}
	return r.pruneServices(ctx, c, want)
}

// serviceKinds are the kinds services.Build makes, for pruning.
func serviceKinds() []client.ObjectList {
	return []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{}, &corev1.SecretList{}}
}

// pruneServices deletes the cluster's service objects not in want (all
// of them when want is empty).
func (r *Reconciler) pruneServices(ctx context.Context, c *sipv1.SIPCluster, want map[string]bool) error {
	for _, list := range serviceKinds() {
		if err := r.APIReader.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{sipv1.ClusterNameLabel: c.Name}, client.HasLabels{services.ServiceLabel}); err != nil {
			return fmt.Errorf("listing the cluster's services: %w", err)
		}
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, it := range items {
			o := it.(client.Object)
			gvk, err := gvkOf(r.Client, o)
			if err != nil {
				return err
			}
			if want[gvk.Kind+"/"+o.GetName()] {
				continue
			}
			if err := r.Client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
			}
		}
	}
	return nil
}

// labelWriters bounds the label patches in flight at once.
const labelWriters = 8

// label writes the plan: released hosts lose SIP's labels, picked hosts
// get the cluster's. Patches go out labelWriters at a time (a cluster of
// a hundred hosts is otherwise a hundred round trips in a row); every
// patch is tried, and the errors are reported together.
func (r *Reconciler) label(ctx context.Context, c *sipv1.SIPCluster, plan schedule.Plan, byKey map[string]*metal3v1alpha1.BareMetalHost) error {
	type write struct {
		b    *metal3v1alpha1.BareMetalHost
		want map[string]string
	}
	var writes []write
	for _, pk := range plan.Picks {
		want := map[string]string{sipv1.ClusterNamespaceLabel: c.Namespace, sipv1.ClusterNameLabel: c.Name, sipv1.NodeTypeLabel: string(pk.Role)}
		if pk.Standby {
			want[sipv1.StandbyLabel] = "true"
		}
		writes = append(writes, write{byKey[pk.Host.Key()], want})
	}
	for _, h := range plan.Release {
		writes = append(writes, write{byKey[h.Key()], nil})
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, labelWriters)
	)
	for _, w := range writes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := r.setLabels(ctx, w.b, w.want); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sipLabels are the labels SIP owns on a host.
var sipLabels = []string{sipv1.ClusterNamespaceLabel, sipv1.ClusterNameLabel, sipv1.NodeTypeLabel, sipv1.StandbyLabel}

// setLabels makes SIP's labels on b exactly want (none when nil), with a
// patch only when they differ.
func (r *Reconciler) setLabels(ctx context.Context, b *metal3v1alpha1.BareMetalHost, want map[string]string) error {
	same := true
	for _, k := range sipLabels {
		if b.Labels[k] != want[k] {
			same = false
		}
	}
	if same {
		return nil
	}
	b = b.DeepCopy() // b may be the cache's own object
	patch := client.MergeFrom(b.DeepCopy())
	l := maps.Clone(b.Labels)
	if l == nil {
		l = map[string]string{}
	}
	for _, k := range sipLabels {
		delete(l, k)
	}
	maps.Copy(l, want)
	b.Labels = l
	if err := r.Client.Patch(ctx, b, patch); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted since the list: nothing to label; the next pass,
			// woken by the deletion, schedules without it.
			return nil
		}
		return fmt.Errorf("labelling BareMetalHost %s/%s: %w", b.Namespace, b.Name, err)
	}
	return nil
}

// release removes SIP's labels from every host labelled for c.
func (r *Reconciler) release(ctx context.Context, c *sipv1.SIPCluster, hosts []metal3v1alpha1.BareMetalHost) error {
	var errs []error
	for i := range hosts {
		b := &hosts[i]
		if b.Labels[sipv1.ClusterNameLabel] != c.Name || b.Labels[sipv1.ClusterNamespaceLabel] != c.Namespace {
			continue
		}
		if err := r.setLabels(ctx, b, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// DeleteForMoveAnnotation is what clusterctl move puts on each object it
// deletes from the source cluster once the target cluster has a copy.
const DeleteForMoveAnnotation = "clusterctl.cluster.x-k8s.io/delete-for-move"

// decommission removes a deleted cluster's services and releases its
// hosts, then lets it go. A cluster deleted by a move keeps its hosts:
// only its services here go. A failure is UnableToDecommission, retried
// with backoff.
func (r *Reconciler) decommission(ctx context.Context, c *sipv1.SIPCluster) error {
	if !controllerutil.ContainsFinalizer(c, sipv1.Finalizer) {
		return nil
	}
	if err := r.releaseAll(ctx, c); err != nil {
		return operatorkit.Fail(sipv1.ReasonTypeUnableToDecommission, err)
	}
	return operatorkit.RemoveFinalizer(ctx, r.Client, c, sipv1.Finalizer)
}

// releaseAll deletes the cluster's service objects and, unless a move
// deletes it, removes its labels from its hosts.
func (r *Reconciler) releaseAll(ctx context.Context, c *sipv1.SIPCluster) error {
	// A name that is no label value (an object stored before the schema
	// refused it, finalized by an older operator) is on no host and no
	// service object: there is nothing to release, and a selector on it
	// would only fail. Such a cluster just loses its finalizer.
	if len(validation.IsValidLabelValue(c.Name)) != 0 {
		return nil
	}
	if err := r.pruneServices(ctx, c, nil); err != nil {
		return err
	}
	// Deleted by clusterctl move (a pivot): the cluster lives on in the
	// cluster it was moved to, and its hosts keep their labels there.
	if _, moving := c.Annotations[DeleteForMoveAnnotation]; moving {
		return nil
	}
	var bmhs metal3v1alpha1.BareMetalHostList
	if err := r.Client.List(ctx, &bmhs, client.MatchingLabels{sipv1.ClusterNamespaceLabel: c.Namespace, sipv1.ClusterNameLabel: c.Name}); err != nil {
		return fmt.Errorf("listing the hosts of SIPCluster %s/%s: %w", c.Namespace, c.Name, err)
	}
	return r.release(ctx, c, bmhs.Items)
}

// servicesReady marks each service ready when its Deployment is
// Available with its current generation; it returns how many are and the
// names of the others.
func (r *Reconciler) servicesReady(ctx context.Context, c *sipv1.SIPCluster, statuses []sipv1.ServiceStatus) (int, []string) {
	ready := 0
	var waiting []string
	for i := range statuses {
		s := &statuses[i]
		d := &appsv1.Deployment{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: s.Name}, d)
		switch {
		case err != nil:
			s.Ready, s.Message = false, "Deployment: "+err.Error()
		case d.Status.ObservedGeneration < d.Generation:
			s.Ready, s.Message = false, "Deployment not yet observed by its controller"
		case !deploymentAvailable(d):
			s.Ready, s.Message = false, fmt.Sprintf("Deployment %d/%d available", d.Status.AvailableReplicas, ptrVal(d.Spec.Replicas))
		default:
			// Ready; Build's message (such as a load balancer without
			// backends yet) stays.
			s.Ready = true
		}
		if s.Ready {
			ready++
		} else {
			waiting = append(waiting, s.Name)
		}
	}
	return ready, waiting
}

func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue && d.Status.UpdatedReplicas == ptrVal(d.Spec.Replicas)
		}
	}
	return false
}

func ptrVal(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// nodeStatus summarises the plan per role.
func nodeStatus(req schedule.Request, plan schedule.Plan) map[sipv1.BMHRole]sipv1.RoleStatus {
	out := map[sipv1.BMHRole]sipv1.RoleStatus{}
	for _, role := range req.Roles {
		a, s := plan.Role(role.Role)
		rs := sipv1.RoleStatus{Summary: fmt.Sprintf("%d/%d active, %d/%d standby", len(a), role.Active, len(s), role.Standby)}
		for _, h := range a {
			rs.Active = append(rs.Active, h.Name)
		}
		for _, h := range s {
			rs.Standby = append(rs.Standby, h.Name)
		}
		out[role.Role] = rs
	}
	return out
}

// maxMessage bounds a condition's message: the API server refuses a status
// with one over 32768 characters, and a message listing the faults of
// thousands of hosts could be longer.
const maxMessage = operatorkit.MaxMessage

// finish ends every pass: Ready (and Stalled) from the outcome, an event
// when Ready changed, the one status write, and when to look again.
func (r *Reconciler) finish(ctx context.Context, c *sipv1.SIPCluster, snap *operatorkit.StatusSnapshot, done string, err error) (reconcile.Result, error) {
	o := operatorkit.OutcomeOf(err, "")
	if status, reason, msg, ok := readyOf(o, done); ok {
		msg = truncateMessage(msg)
		setReady(c, status, reason, msg)
		before := snap.Before().(*sipv1.SIPCluster).Status.Conditions
		changed := operatorkit.ConditionChanged(before, c.Status.Conditions, sipv1.ConditionTypeReady)
		operatorkit.Events{Recorder: r.Recorder}.OnTransition(changed, c, eventType(status, reason), reason, "", msg)
	}
	res, err := r.next(c, o)
	return operatorkit.Settle(res, err, snap.Patch(ctx, r.Client, c))
}

// readyOf is the Ready condition an outcome sets: True with done (the
// pass's summary) when it succeeded, False with the outcome's reason and
// message otherwise. A plain error (the hosts could not be listed) and a
// decommission that let the cluster go (done is "") say nothing about
// the cluster: Ready stays as it was.
func readyOf(o operatorkit.Outcome, done string) (status metav1.ConditionStatus, reason, msg string, ok bool) {
	switch {
	case o.Kind == operatorkit.Succeeded:
		return metav1.ConditionTrue, sipv1.ReasonTypeReconciliationSucceeded, done, done != ""
	case o.Reason == "":
		return "", "", "", false
	default:
		return metav1.ConditionFalse, o.Reason, o.Message, true
	}
}

// next is when to look at the cluster again: a failure's error goes to
// the work queue, which retries with backoff; a wait with a delay of its
// own (services becoming available) looks again then; anything else,
// stalled too, at the resync (Secrets are not watched). A deleted
// cluster needs no further look.
func (r *Reconciler) next(c *sipv1.SIPCluster, o operatorkit.Outcome) (reconcile.Result, error) {
	switch {
	case o.Kind == operatorkit.Failed:
		return reconcile.Result{}, o.Err
	case !c.DeletionTimestamp.IsZero():
		return reconcile.Result{}, nil
	case o.Kind == operatorkit.Waiting && o.After > 0:
		return reconcile.Result{RequeueAfter: o.After}, nil
	default:
		return reconcile.Result{RequeueAfter: r.Resync}, nil
	}
}

// setReady sets the Ready condition, its message cut to maxMessage, and
// Stalled beside it while the spec is invalid (the API has Stalled for
// that reason only).
func setReady(c *sipv1.SIPCluster, status metav1.ConditionStatus, reason, msg string) {
	msg = truncateMessage(msg)
	conds := operatorkit.Conditions{List: &c.Status.Conditions, Generation: c.Generation}
	conds.Set(sipv1.ConditionTypeReady, status, reason, msg)
	if reason == sipv1.ReasonTypeInvalidSpec {
		conds.Set(sipv1.ConditionTypeStalled, metav1.ConditionTrue, reason, msg)
	} else {
		conds.Remove(sipv1.ConditionTypeStalled)
	}
}

// truncateMessage cuts msg to maxMessage bytes at a character boundary,
// marking the cut.
//
// KIT: operatorkit.Truncate cuts at a byte, which can split a multi-byte
// character and leave a message that is not UTF-8 (the API server
// refuses it); this cuts at the last character start instead.
func truncateMessage(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage - len(" ...")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + " ..."
}

// eventType is Normal for a ready cluster and one progressing as it
// should, Warning for everything else.
func eventType(status metav1.ConditionStatus, reason string) string {
	if status == metav1.ConditionTrue || reason == sipv1.ReasonTypeProgressing {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}
