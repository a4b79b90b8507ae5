package sipcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/operatorkit"
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

// SIPClusterReconciler reconciles SIPClusters.
type SIPClusterReconciler struct {
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
func (r *SIPClusterReconciler) SetupWithManager(_ context.Context, mgr manager.Manager) error {
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
func (r *SIPClusterReconciler) clustersOfHost(ctx context.Context, o client.Object) []reconcile.Request {
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
func (r *SIPClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
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

// DeleteForMoveAnnotation is what clusterctl move puts on each object it
// deletes from the source cluster once the target cluster has a copy.
const DeleteForMoveAnnotation = "clusterctl.cluster.x-k8s.io/delete-for-move"

// decommission removes a deleted cluster's services and releases its
// hosts, then lets it go. A cluster deleted by a move keeps its hosts:
// only its services here go. A failure is UnableToDecommission, retried
// with backoff.
func (r *SIPClusterReconciler) decommission(ctx context.Context, c *sipv1.SIPCluster) error {
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
func (r *SIPClusterReconciler) releaseAll(ctx context.Context, c *sipv1.SIPCluster) error {
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
