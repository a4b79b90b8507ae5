package capm3

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
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
	ref := c.Spec.InfrastructureRef
	if ref.Kind != "Metal3Cluster" || ref.APIGroup != infrav1.GroupVersion.Group {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: ref.Name}}}
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
	before := m3c.DeepCopy()
	res, err := r.reconcile(ctx, m3c)
	if perr := r.patchStatus(ctx, before, m3c); perr != nil && err == nil {
		err = perr
	}
	return res, err
}

func (r *ClusterReconciler) reconcile(ctx context.Context, m3c *infrav1.Metal3Cluster) (reconcile.Result, error) {
	var owner *metav1.OwnerReference
	for i, ref := range m3c.OwnerReferences {
		if ref.Kind == "Cluster" && groupOf(ref.APIVersion) == clusterv1.GroupVersion.Group {
			owner = &m3c.OwnerReferences[i]
		}
	}
	if !m3c.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, m3c, owner)
	}
	if owner == nil {
		setClusterCondition(m3c, infrav1.ReadyCondition, metav1.ConditionFalse, infrav1.WaitingForClusterOwnerReason, "no Cluster owns this Metal3Cluster yet")
		return reconcile.Result{}, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: m3c.Namespace, Name: owner.Name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			setClusterCondition(m3c, infrav1.ReadyCondition, metav1.ConditionFalse, infrav1.WaitingForClusterOwnerReason, "Cluster "+owner.Name+" not found")
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("reading Cluster %s/%s: %w", m3c.Namespace, owner.Name, err)
	}
	if (cluster.Spec.Paused != nil && *cluster.Spec.Paused) || hasAnnotation(cluster, clusterv1.PausedAnnotation) || hasAnnotation(m3c, clusterv1.PausedAnnotation) {
		setClusterCondition(m3c, infrav1.PausedCondition, metav1.ConditionTrue, "Paused", "the Cluster or the Metal3Cluster is paused")
		return reconcile.Result{}, nil
	}
	apimeta.RemoveStatusCondition(&m3c.Status.Conditions, infrav1.PausedCondition)

	if !controllerutil.ContainsFinalizer(m3c, infrav1.ClusterFinalizer) || (m3c.Spec.ControlPlaneEndpoint.IsZero() && m3c.Spec.APIEndpoint != "") {
		patch := client.MergeFromWithOptions(m3c.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(m3c, infrav1.ClusterFinalizer)
		if m3c.Spec.ControlPlaneEndpoint.IsZero() && m3c.Spec.APIEndpoint != "" {
			ep, err := ParseAPIEndpoint(m3c.Spec.APIEndpoint)
			if err != nil {
				r.invalid(m3c, err.Error())
				return reconcile.Result{}, nil
			}
			m3c.Spec.ControlPlaneEndpoint = ep
		}
		status := m3c.Status.DeepCopy()
		if err := r.Client.Patch(ctx, m3c, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("updating Metal3Cluster %s/%s: %w", m3c.Namespace, m3c.Name, err)
		}
		m3c.Status = *status
	}
	ep := m3c.Spec.ControlPlaneEndpoint
	if ep.Host == "" || ep.Port < 1 || ep.Port > 65535 || net.ParseIP(ep.Host) == nil && !validHostname(ep.Host) {
		r.invalid(m3c, fmt.Sprintf("spec.controlPlaneEndpoint {host: %q, port: %d} is not a host and TCP port (nor is spec.apiEndpoint set)", ep.Host, ep.Port))
		return reconcile.Result{}, nil
	}
	t := true
	m3c.Status.Ready = true
	m3c.Status.Initialization.Provisioned = &t
	m3c.Status.APIEndpoints = []infrav1.APIEndpoint{ep}
	m3c.Status.FailureReason, m3c.Status.FailureMessage = nil, nil
	setClusterCondition(m3c, infrav1.ReadyCondition, metav1.ConditionTrue, infrav1.ReadyReason,
		fmt.Sprintf("control-plane endpoint %s", net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))))
	return reconcile.Result{}, nil
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

func hasAnnotation(o metav1.Object, key string) bool {
	_, ok := o.GetAnnotations()[key]
	return ok
}

func (r *ClusterReconciler) invalid(m3c *infrav1.Metal3Cluster, msg string) {
	reason := "InvalidConfiguration"
	m3c.Status.Ready = false
	m3c.Status.Initialization.Provisioned = nil
	m3c.Status.FailureReason, m3c.Status.FailureMessage = &reason, &msg
	setClusterCondition(m3c, infrav1.ReadyCondition, metav1.ConditionFalse, infrav1.InvalidSpecReason, msg)
}

// reconcileDelete waits for the cluster's Metal3Machines to go.
func (r *ClusterReconciler) reconcileDelete(ctx context.Context, m3c *infrav1.Metal3Cluster, owner *metav1.OwnerReference) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(m3c, infrav1.ClusterFinalizer) {
		return reconcile.Result{}, nil
	}
	if owner != nil {
		var machines infrav1.Metal3MachineList
		if err := r.Client.List(ctx, &machines, client.InNamespace(m3c.Namespace), client.MatchingLabels{clusterv1.ClusterNameLabel: owner.Name}); err != nil {
			return reconcile.Result{}, fmt.Errorf("listing the Metal3Machines of Cluster %s/%s: %w", m3c.Namespace, owner.Name, err)
		}
		if n := len(machines.Items); n > 0 {
			setClusterCondition(m3c, infrav1.ReadyCondition, metav1.ConditionFalse, infrav1.WaitingForMachinesDeletedReason,
				fmt.Sprintf("deleting: %d Metal3Machines of Cluster %s remain", n, owner.Name))
			return reconcile.Result{RequeueAfter: waitPoll}, nil
		}
	}
	patch := client.MergeFromWithOptions(m3c.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(m3c, infrav1.ClusterFinalizer)
	if err := r.Client.Patch(ctx, m3c, patch); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("removing the finalizer of Metal3Cluster %s/%s: %w", m3c.Namespace, m3c.Name, err))
	}
	return reconcile.Result{}, nil
}

func setClusterCondition(m *infrav1.Metal3Cluster, t string, status metav1.ConditionStatus, reason, message string) {
	apimeta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: m.Generation,
	})
}

func (r *ClusterReconciler) patchStatus(ctx context.Context, before, m3c *infrav1.Metal3Cluster) error {
	if !m3c.DeletionTimestamp.IsZero() && !controllerutil.ContainsFinalizer(m3c, infrav1.ClusterFinalizer) {
		return nil
	}
	x, y := before.Status.DeepCopy(), m3c.Status.DeepCopy()
	x.LastUpdated, y.LastUpdated = nil, nil
	for i := range x.Conditions {
		x.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	for i := range y.Conditions {
		y.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	if apiequality.Semantic.DeepEqual(x, y) {
		return nil
	}
	now := metav1.NewTime(r.Clock.Now())
	m3c.Status.LastUpdated = &now
	if err := r.Client.Status().Patch(ctx, m3c, client.MergeFrom(before)); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("writing the status of Metal3Cluster %s/%s: %w", m3c.Namespace, m3c.Name, err))
	}
	return nil
}
