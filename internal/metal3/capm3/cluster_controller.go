package capm3

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/metal3/capi"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// ClusterReconciler reconciles Metal3Clusters.
type ClusterReconciler struct {
	Client client.Client
	// Clock is the time source; the real clock when nil.
	Clock clock.PassiveClock
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3clusters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3clusters/status,verbs=patch;update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3clusters/finalizers,verbs=update

// SetupWithManager registers the controller, woken by its Cluster.
func (r *ClusterReconciler) SetupWithManager(_ context.Context, mgr manager.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return builder.ControllerManagedBy(mgr).
		For(&infrav1.Metal3Cluster{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToMetal3Cluster)).
		Watches(&infrav1.Metal3Machine{}, handler.EnqueueRequestsFromMapFunc(r.machineToMetal3Cluster)).
		Named("metal3cluster").
		Complete(r)
}

func clusterToMetal3Cluster(_ context.Context, o client.Object) []reconcile.Request {
	c := o.(*clusterv1.Cluster)
	return infrastructureRequest(c.Namespace, c.Spec.InfrastructureRef, "Metal3Cluster")
}

// infrastructureRequest wakes the object of kind that a Cluster API
// object in namespace names as its infrastructure, and nothing for a
// reference to another provider's kind: Clusters and Machines of other
// providers share the watch.
func infrastructureRequest(namespace string, ref clusterv1.ContractVersionedObjectReference, kind string) []reconcile.Request {
	if ref.Kind != kind || ref.APIGroup != infrav1.GroupVersion.Group {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: namespace, Name: ref.Name}}}
}

// machineToMetal3Cluster wakes a deleting Metal3Cluster when one of its
// machines goes.
func (r *ClusterReconciler) machineToMetal3Cluster(ctx context.Context, o client.Object) []reconcile.Request {
	if o.GetDeletionTimestamp().IsZero() {
		return nil
	}
	name := o.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil
	}
	c := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: name}, c); err != nil {
		return nil
	}
	return clusterToMetal3Cluster(ctx, c)
}

// ParseAPIEndpoint reads the https URL form of spec.apiEndpoint.
func ParseAPIEndpoint(s string) (infrav1.APIEndpoint, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return infrav1.APIEndpoint{}, fmt.Errorf("spec.apiEndpoint %q is not a URL like https://<host>:<port>", s)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "6443"
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return infrav1.APIEndpoint{}, fmt.Errorf("spec.apiEndpoint %q: port %q is not a TCP port", s, port)
	}
	return infrav1.APIEndpoint{Host: host, Port: p}, nil
}

// Reconcile brings one Metal3Cluster to ready.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	m3c := &infrav1.Metal3Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, m3c); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	snap := operatorkit.SnapshotStatus(m3c, "lastUpdated")
	res, err := r.reconcile(ctx, m3c)
	res, err = settleCluster(ctx, m3c, res, err)
	return operatorkit.Settle(res, err, r.patchStatus(ctx, snap, m3c))
}

func (r *ClusterReconciler) reconcile(ctx context.Context, m3c *infrav1.Metal3Cluster) (reconcile.Result, error) {
	var owner *metav1.OwnerReference
	for i, ref := range m3c.OwnerReferences {
		if ref.Kind == "Cluster" && groupOf(ref.APIVersion) == clusterv1.GroupVersion.Group {
			owner = &m3c.OwnerReferences[i]
		}
	}
	if !m3c.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.reconcileDelete(ctx, m3c, owner)
	}
	if owner == nil {
		return reconcile.Result{}, operatorkit.Wait(infrav1.WaitingForClusterOwnerReason, 0, "no Cluster owns this Metal3Cluster yet")
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: m3c.Namespace, Name: owner.Name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, operatorkit.Wait(infrav1.WaitingForClusterOwnerReason, 0, "Cluster %s not found", owner.Name)
		}
		return reconcile.Result{}, fmt.Errorf("reading Cluster %s/%s: %w", m3c.Namespace, owner.Name, err)
	}
	conds := clusterConditions(m3c)
	if capi.Paused(cluster, m3c) {
		conds.Set(infrav1.PausedCondition, metav1.ConditionTrue, "Paused", "the Cluster or the Metal3Cluster is paused")
		return reconcile.Result{}, nil
	}
	conds.Remove(infrav1.PausedCondition)
	if err := r.ensureMeta(ctx, m3c); err != nil {
		return reconcile.Result{}, err
	}
	ep := m3c.Spec.ControlPlaneEndpoint
	if ep.Host == "" || ep.Port < 1 || ep.Port > 65535 || net.ParseIP(ep.Host) == nil && !validHostname(ep.Host) {
		return reconcile.Result{}, operatorkit.Stallf(infrav1.InvalidSpecReason,
			"spec.controlPlaneEndpoint {host: %q, port: %d} is not a host and TCP port (nor is spec.apiEndpoint set)", ep.Host, ep.Port)
	}
	t := true
	m3c.Status.Ready = true
	m3c.Status.Initialization.Provisioned = &t
	m3c.Status.APIEndpoints = []infrav1.APIEndpoint{ep}
	m3c.Status.FailureReason, m3c.Status.FailureMessage = nil, nil
	conds.Set(infrav1.ReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
		fmt.Sprintf("control-plane endpoint %s", net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))))
	return reconcile.Result{}, nil
}

// ensureMeta adds the finalizer and copies the older spec.apiEndpoint into
// spec.controlPlaneEndpoint, in one patch with the lock, keeping the
// status of the pass (the patch response carries the stored one). An
// apiEndpoint that is not a URL stalls before the finalizer.
func (r *ClusterReconciler) ensureMeta(ctx context.Context, m3c *infrav1.Metal3Cluster) error {
	convert := m3c.Spec.ControlPlaneEndpoint.IsZero() && m3c.Spec.APIEndpoint != ""
	if controllerutil.ContainsFinalizer(m3c, infrav1.ClusterFinalizer) && !convert {
		return nil
	}
	patch := client.MergeFromWithOptions(m3c.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(m3c, infrav1.ClusterFinalizer)
	if convert {
		ep, err := ParseAPIEndpoint(m3c.Spec.APIEndpoint)
		if err != nil {
			return operatorkit.Stall(infrav1.InvalidSpecReason, err)
		}
		m3c.Spec.ControlPlaneEndpoint = ep
	}
	status := m3c.Status.DeepCopy()
	if err := r.Client.Patch(ctx, m3c, patch); err != nil {
		return fmt.Errorf("updating Metal3Cluster %s/%s: %w", m3c.Namespace, m3c.Name, err)
	}
	m3c.Status = *status
	return nil
}

// settleCluster writes the outcome of a pass in the status and decides
// when to look again: a wait shows in Ready and is retried when asked; a
// spec that cannot work marks the cluster failed (status.failureReason,
// as Cluster API reads it) and waits for a change; a failure is returned
// for the work queue's backoff, its conditions unchanged.
func settleCluster(ctx context.Context, m3c *infrav1.Metal3Cluster, res reconcile.Result, err error) (reconcile.Result, error) {
	o := operatorkit.OutcomeOf(err, "")
	switch o.Kind {
	case operatorkit.Waiting:
		clusterConditions(m3c).Set(infrav1.ReadyCondition, metav1.ConditionFalse, o.Reason, o.Message)
		log.FromContext(ctx).V(1).Info("waiting", "reason", o.Reason, "message", o.Message)
		return reconcile.Result{RequeueAfter: o.After}, nil
	case operatorkit.Stalled:
		reason, msg := "InvalidConfiguration", o.Message
		m3c.Status.Ready = false
		m3c.Status.Initialization.Provisioned = nil
		m3c.Status.FailureReason, m3c.Status.FailureMessage = &reason, &msg
		clusterConditions(m3c).Set(infrav1.ReadyCondition, metav1.ConditionFalse, o.Reason, msg)
		return reconcile.Result{}, nil
	}
	return res, err
}

func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, c := range h {
		if !(c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// reconcileDelete waits for the cluster's Metal3Machines to go.
func (r *ClusterReconciler) reconcileDelete(ctx context.Context, m3c *infrav1.Metal3Cluster, owner *metav1.OwnerReference) error {
	if !controllerutil.ContainsFinalizer(m3c, infrav1.ClusterFinalizer) {
		return nil
	}
	if owner != nil {
		var machines infrav1.Metal3MachineList
		if err := r.Client.List(ctx, &machines, client.InNamespace(m3c.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: owner.Name}); err != nil {
			return fmt.Errorf("listing the Metal3Machines of Cluster %s/%s: %w", m3c.Namespace, owner.Name, err)
		}
		if n := len(machines.Items); n > 0 {
			return operatorkit.Wait(infrav1.WaitingForMachinesDeletedReason, waitPoll, "deleting: %d Metal3Machines of Cluster %s remain", n, owner.Name)
		}
	}
	return operatorkit.RemoveFinalizer(ctx, r.Client, m3c, infrav1.ClusterFinalizer)
}

func clusterConditions(m *infrav1.Metal3Cluster) operatorkit.Conditions {
	return operatorkit.Conditions{List: &m.Status.Conditions, Generation: m.Generation}
}

// patchStatus writes the status of the pass when it changed, stamping
// lastUpdated. A Metal3Cluster whose finalizer this pass removed is left
// alone.
func (r *ClusterReconciler) patchStatus(ctx context.Context, snap *operatorkit.StatusSnapshot, m3c *infrav1.Metal3Cluster) error {
	if !m3c.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(m3c, infrav1.ClusterFinalizer) {
		return nil
	}
	if snap.Changed(m3c) {
		now := metav1.NewTime(r.Clock.Now())
		m3c.Status.LastUpdated = &now
	}
	// Past the pass's own (locked) finalizer and endpoint write.
	snap.Rebase(m3c)
	return snap.Patch(ctx, r.Client, m3c)
}
