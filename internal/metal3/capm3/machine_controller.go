package capm3

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/metal3/capi"
	"github.com/airshipit/airship-go/internal/metal3/refs"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Polling intervals of a Metal3Machine that waits on something no watch
// reports.
const (
	// waitPoll: a host that is not yet available, or a workload Node not
	// yet registered.
	waitPoll = 5 * time.Second
	// noHostPoll: no host fits; host events also wake the machine.
	noHostPoll = 30 * time.Second
	// claimRetry: another machine claimed the host first.
	claimRetry = 50 * time.Millisecond
)

// Index names of the Metal3Machine reconciler.
const (
	// hostConsumerIndex indexes BareMetalHosts by consumer Metal3Machine.
	hostConsumerIndex = "capm3.consumer"
	// unclaimedIndex indexes Metal3Machines that have no host yet ("true").
	unclaimedIndex = "capm3.unclaimed"
	// machineClusterIndex indexes Metal3Machines by cluster name.
	machineClusterIndex = "capm3.cluster"
)

// MachineReconciler reconciles Metal3Machines.
type MachineReconciler struct {
	Client   client.Client
	Recorder recorder.EventRecorder
	// Workloads reaches the workload clusters' Nodes.
	Workloads *Workloads
	// Concurrency is how many Metal3Machines are reconciled at once.
	Concurrency int
	// Clock is the time source; the real clock when nil.
	Clock clock.PassiveClock

	claims reservations
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines/status,verbs=patch;update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines/finalizers,verbs=update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machinetemplates,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3dataclaims,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3datas,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller, woken by its Machine, its
// Cluster, its host and hosts becoming free.
func (r *MachineReconciler) SetupWithManager(ctx context.Context, mgr manager.Manager) error {
	if r.Concurrency < 1 {
		r.Concurrency = 1
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Workloads == nil {
		r.Workloads = &Workloads{Reader: mgr.GetClient()}
	}
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &metal3v1alpha1.BareMetalHost{}, hostConsumerIndex, func(o client.Object) []string {
		ref := o.(*metal3v1alpha1.BareMetalHost).Spec.ConsumerRef
		if ref == nil || ref.Kind != "Metal3Machine" {
			return nil
		}
		return []string{ref.Name}
	}); err != nil {
		return fmt.Errorf("indexing BareMetalHosts by consumer: %w", err)
	}
	if err := idx.IndexField(ctx, &infrav1.Metal3Machine{}, unclaimedIndex, func(o client.Object) []string {
		if _, ok := o.GetAnnotations()[infrav1.HostAnnotation]; ok || !o.GetDeletionTimestamp().IsZero() {
			return nil
		}
		return []string{"true"}
	}); err != nil {
		return fmt.Errorf("indexing Metal3Machines without a host: %w", err)
	}
	if err := idx.IndexField(ctx, &infrav1.Metal3Machine{}, machineClusterIndex, func(o client.Object) []string {
		if v := o.GetLabels()[clusterv1.ClusterNameLabel]; v != "" {
			return []string{v}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing Metal3Machines by cluster: %w", err)
	}
	return builder.ControllerManagedBy(mgr).
		// The controller's own status writes do not wake it; spec, metadata
		// (owner, annotations, finalizers) and deletion do.
		For(&infrav1.Metal3Machine{}, builder.WithPredicates(predicate.Funcs{UpdateFunc: metal3MachineChanged})).
		// A Machine matters when its bootstrap data or deletion changes, not
		// on each of Cluster API's status writes.
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToMetal3Machine),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: machineChanged})).
		// A Cluster matters to its machines when it is paused or unpaused
		// and when its infrastructure becomes provisioned, not on every
		// status write of Cluster API's.
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMetal3Machines),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: clusterChanged})).
		// A host wakes its consumer on any change; it wakes the machines
		// still waiting for a host only when it becomes free.
		Watches(&metal3v1alpha1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(hostToConsumer)).
		Watches(&metal3v1alpha1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(r.hostToWaitingMachines),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: hostFreed, DeleteFunc: func(ctrlevent.DeleteEvent) bool { return false }})).
		Watches(&infrav1.Metal3DataClaim{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &infrav1.Metal3Machine{})).
		Watches(&infrav1.Metal3Data{}, handler.EnqueueRequestsFromMapFunc(dataToMetal3Machine)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Concurrency}).
		Named("metal3machine").
		Complete(r)
}

// machineToMetal3Machine maps a Machine to its infrastructure machine.
func machineToMetal3Machine(_ context.Context, o client.Object) []reconcile.Request {
	m := o.(*clusterv1.Machine)
	return infrastructureRequest(m.Namespace, m.Spec.InfrastructureRef, "Metal3Machine")
}

// clusterToMetal3Machines maps a Cluster to its Metal3Machines (pause,
// unpause, infrastructure ready).
func (r *MachineReconciler) clusterToMetal3Machines(ctx context.Context, o client.Object) []reconcile.Request {
	var list infrav1.Metal3MachineList
	if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{machineClusterIndex: o.GetName()}); err != nil {
		return nil
	}
	return requests(list.Items)
}

// metal3MachineChanged reports an update of a Metal3Machine other than
// its status.
func metal3MachineChanged(e ctrlevent.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*infrav1.Metal3Machine)
	n, ok2 := e.ObjectNew.(*infrav1.Metal3Machine)
	if !ok1 || !ok2 {
		return true
	}
	return o.Generation != n.Generation || !n.DeletionTimestamp.Equal(o.DeletionTimestamp) ||
		!maps.Equal(o.Annotations, n.Annotations) || !maps.Equal(o.Labels, n.Labels) ||
		!slices.Equal(o.Finalizers, n.Finalizers) || !apiequality.Semantic.DeepEqual(o.OwnerReferences, n.OwnerReferences)
}

// machineChanged reports a Machine update its Metal3Machine acts on.
func machineChanged(e ctrlevent.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*clusterv1.Machine)
	n, ok2 := e.ObjectNew.(*clusterv1.Machine)
	if !ok1 || !ok2 {
		return true
	}
	secret := func(m *clusterv1.Machine) string {
		if m.Spec.Bootstrap.DataSecretName == nil {
			return ""
		}
		return *m.Spec.Bootstrap.DataSecretName
	}
	return secret(o) != secret(n) || !n.DeletionTimestamp.Equal(o.DeletionTimestamp) || o.Spec.ClusterName != n.Spec.ClusterName ||
		!maps.Equal(o.Labels, n.Labels) || o.Spec.FailureDomain != n.Spec.FailureDomain
}

// clusterChanged reports a Cluster update its machines act on: pause,
// unpause, infrastructure provisioned.
func clusterChanged(e ctrlevent.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*clusterv1.Cluster)
	n, ok2 := e.ObjectNew.(*clusterv1.Cluster)
	if !ok1 || !ok2 {
		return true
	}
	_, oldPaused := o.Annotations[clusterv1.PausedAnnotation]
	_, newPaused := n.Annotations[clusterv1.PausedAnnotation]
	return oldPaused != newPaused || !ptrEqual(o.Spec.Paused, n.Spec.Paused) ||
		!ptrEqual(o.Status.Initialization.InfrastructureProvisioned, n.Status.Initialization.InfrastructureProvisioned) ||
		!n.DeletionTimestamp.Equal(o.DeletionTimestamp)
}

func ptrEqual(a, b *bool) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// free reports a host a waiting machine could take.
func free(h *metal3v1alpha1.BareMetalHost) bool {
	st := h.Status.Provisioning.State
	return (st == metal3v1alpha1.StateAvailable || st == metal3v1alpha1.StateReady) && h.Spec.ConsumerRef == nil
}

// hostFreed reports an update after which a host is free and was not.
func hostFreed(e ctrlevent.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*metal3v1alpha1.BareMetalHost)
	n, ok2 := e.ObjectNew.(*metal3v1alpha1.BareMetalHost)
	if !ok1 || !ok2 {
		return true
	}
	return free(n) && (!free(o) || !maps.Equal(o.Labels, n.Labels) || !maps.Equal(o.Annotations, n.Annotations))
}

// hostToConsumer maps a host to the Metal3Machine consuming it.
func hostToConsumer(_ context.Context, o client.Object) []reconcile.Request {
	h := o.(*metal3v1alpha1.BareMetalHost)
	ref := h.Spec.ConsumerRef
	if ref == nil || ref.Kind != "Metal3Machine" {
		return nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = h.Namespace
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: ref.Name}}}
}

// hostToWaitingMachines maps a free host to the machines of its namespace
// that wait for one.
func (r *MachineReconciler) hostToWaitingMachines(ctx context.Context, o client.Object) []reconcile.Request {
	h := o.(*metal3v1alpha1.BareMetalHost)
	if !free(h) {
		return nil
	}
	var list infrav1.Metal3MachineList
	if err := r.Client.List(ctx, &list, client.InNamespace(h.Namespace), client.MatchingFields{unclaimedIndex: "true"}); err != nil {
		return nil
	}
	return requests(list.Items)
}

// dataToMetal3Machine maps a Metal3Data to the machine its claim names.
func dataToMetal3Machine(_ context.Context, o client.Object) []reconcile.Request {
	d := o.(*infrav1.Metal3Data)
	if d.Spec.Claim.Name == "" {
		return nil
	}
	ns := d.Spec.Claim.Namespace
	if ns == "" {
		ns = d.Namespace
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: d.Spec.Claim.Name}}}
}

func requests(ms []infrav1.Metal3Machine) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(ms))
	for _, m := range ms {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
	}
	return out
}

// machineScope is one pass over one Metal3Machine.
type machineScope struct {
	r        *MachineReconciler
	ctx      context.Context
	m3m      *infrav1.Metal3Machine
	machine  *clusterv1.Machine
	cluster  *clusterv1.Cluster
	m3c      *infrav1.Metal3Cluster
	host     *metal3v1alpha1.BareMetalHost
	events   []event
	hostLost bool
	// snap is the Metal3Machine as read, for the status write at the end.
	snap *operatorkit.StatusSnapshot
}

type event struct {
	warning bool
	reason  string
	note    string
}

// Reconcile moves one Metal3Machine on.
func (r *MachineReconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	m3m := &infrav1.Metal3Machine{}
	if err := r.Client.Get(ctx, req.NamespacedName, m3m); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	s := &machineScope{r: r, ctx: ctx, m3m: m3m, snap: operatorkit.SnapshotStatus(m3m, "lastUpdated")}
	defer func() {
		o := operatorkit.OutcomeOf(err, "ReconcileError")
		perr := s.patchStatus(o)
		s.record()
		if o.Kind == operatorkit.Waiting || o.Kind == operatorkit.Stalled {
			// Not failures: no error log, no backoff; a watch, or After,
			// brings the machine back.
			log.FromContext(ctx).V(1).Info(strings.ToLower(o.Kind.String()), "reason", o.Reason, "message", o.Message)
			res, err = reconcile.Result{RequeueAfter: o.After}, nil
		}
		res, err = operatorkit.Settle(res, err, perr)
	}()
	if err := s.readOwners(); err != nil {
		return reconcile.Result{}, err
	}
	if err := s.readHost(); err != nil {
		return reconcile.Result{}, err
	}
	if capi.Paused(s.cluster, m3m) {
		return reconcile.Result{}, s.pause()
	}
	s.conditions().Remove(infrav1.PausedCondition)
	if err := s.unpauseHost(); err != nil {
		return reconcile.Result{}, err
	}
	if !m3m.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, s.reconcileDelete()
	}
	// References to other namespaces, and a hostSelector no host can be
	// chosen by, are refused before the finalizer and before a host is
	// claimed or anything is read.
	if err := machineReferences(m3m); err != nil {
		return reconcile.Result{}, s.invalid(err.Error())
	}
	if _, err := HostSelector(m3m.Spec.HostSelector); err != nil {
		return reconcile.Result{}, s.invalid(err.Error())
	}
	if s.machine == nil {
		return reconcile.Result{}, operatorkit.WaitOn(infrav1.ReadyCondition, infrav1.WaitingForMachineOwnerReason, 0,
			"no Machine owns Metal3Machine %s/%s yet", m3m.Namespace, m3m.Name)
	}
	if err := s.ensureFinalizer(); err != nil {
		return reconcile.Result{}, err
	}
	for _, step := range []func() error{s.waitForInfrastructure, s.associate, s.renderData, s.writeHost, s.provisioned} {
		if err := step(); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// machineReferences checks that spec.userData, spec.metaData,
// spec.networkData and spec.dataTemplate name objects of the
// Metal3Machine's namespace (or none).
func machineReferences(m *infrav1.Metal3Machine) error {
	var rs []refs.Ref
	for field, ref := range map[string]*corev1.SecretReference{"spec.userData": m.Spec.UserData, "spec.metaData": m.Spec.MetaData, "spec.networkData": m.Spec.NetworkData} {
		if ref != nil {
			rs = append(rs, refs.Ref{Field: field, Namespace: ref.Namespace})
		}
	}
	if m.Spec.DataTemplate != nil {
		rs = append(rs, refs.Ref{Field: "spec.dataTemplate", Namespace: m.Spec.DataTemplate.Namespace})
	}
	slices.SortFunc(rs, func(a, b refs.Ref) int { return strings.Compare(a.Field, b.Field) })
	return refs.Check("Metal3Machine", m.Namespace, rs...)
}

// readOwners reads the Machine, Cluster and Metal3Cluster; any may be nil.
func (s *machineScope) readOwners() error {
	m := s.m3m
	for _, ref := range m.OwnerReferences {
		if ref.Kind != "Machine" || groupOf(ref.APIVersion) != clusterv1.GroupVersion.Group {
			continue
		}
		machine := &clusterv1.Machine{}
		if err := s.r.Client.Get(s.ctx, types.NamespacedName{Namespace: m.Namespace, Name: ref.Name}, machine); err != nil {
			if apierrors.IsNotFound(err) {
				break
			}
			return fmt.Errorf("reading Machine %s/%s: %w", m.Namespace, ref.Name, err)
		}
		s.machine = machine
		break
	}
	name := m.Labels[clusterv1.ClusterNameLabel]
	if s.machine != nil {
		name = s.machine.Spec.ClusterName
	}
	if name == "" {
		return nil
	}
	cluster := &clusterv1.Cluster{}
	if err := s.r.Client.Get(s.ctx, types.NamespacedName{Namespace: m.Namespace, Name: name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading Cluster %s/%s: %w", m.Namespace, name, err)
	}
	s.cluster = cluster
	ref := cluster.Spec.InfrastructureRef
	if ref.Kind == "Metal3Cluster" && ref.APIGroup == infrav1.GroupVersion.Group {
		m3c := &infrav1.Metal3Cluster{}
		if err := s.r.Client.Get(s.ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: ref.Name}, m3c); err == nil {
			s.m3c = m3c
		} else if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading Metal3Cluster %s/%s: %w", cluster.Namespace, ref.Name, err)
		}
	}
	return nil
}

func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ""
	}
	return gv.Group
}

// ensureFinalizer adds the finalizer and the cluster-name label.
func (s *machineScope) ensureFinalizer() error {
	m := s.m3m
	want := s.machine.Spec.ClusterName
	if controllerutil.ContainsFinalizer(m, infrav1.MachineFinalizer) && m.Labels[clusterv1.ClusterNameLabel] == want {
		return nil
	}
	patch := client.MergeFromWithOptions(m.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(m, infrav1.MachineFinalizer)
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[clusterv1.ClusterNameLabel] = want
	if err := s.patchMeta(patch); err != nil {
		return fmt.Errorf("adding the finalizer to Metal3Machine %s/%s: %w", m.Namespace, m.Name, err)
	}
	return nil
}

// patchMeta patches the Metal3Machine's metadata or spec, keeping the
// status of this pass (the patch response carries the stored one).
func (s *machineScope) patchMeta(patch client.Patch) error {
	status := s.m3m.Status.DeepCopy()
	if err := s.r.Client.Patch(s.ctx, s.m3m, patch); err != nil {
		return err
	}
	s.m3m.Status = *status
	return nil
}

// waitForInfrastructure: the Cluster's infrastructure and the bootstrap
// data must be ready before a host is claimed.
func (s *machineScope) waitForInfrastructure() error {
	m := s.m3m
	if s.cluster == nil {
		return operatorkit.WaitOn(infrav1.ReadyCondition, infrav1.WaitingForClusterInfrastructureReason, waitPoll,
			"Cluster %s/%s not found", m.Namespace, s.machine.Spec.ClusterName)
	}
	if _, claimed := m.Annotations[infrav1.HostAnnotation]; claimed {
		// Past this point once: a moved or restarted machine carries on.
		return nil
	}
	if p := s.cluster.Status.Initialization.InfrastructureProvisioned; p == nil || !*p {
		return operatorkit.WaitOn(infrav1.ReadyCondition, infrav1.WaitingForClusterInfrastructureReason, 0,
			"waiting for the infrastructure of Cluster %s/%s", s.cluster.Namespace, s.cluster.Name)
	}
	if m.Spec.UserData == nil && (s.machine.Spec.Bootstrap.DataSecretName == nil || *s.machine.Spec.Bootstrap.DataSecretName == "") {
		return operatorkit.WaitOn(infrav1.ReadyCondition, infrav1.WaitingForBootstrapDataReason, 0,
			"waiting for the bootstrap data Secret of Machine %s/%s", s.machine.Namespace, s.machine.Name)
	}
	return nil
}

// patchStatus writes the status of the pass: conditions from its outcome
// o, phase, lastUpdated when anything else changed.
func (s *machineScope) patchStatus(o operatorkit.Outcome) error {
	m := s.m3m
	setOutcome(m, o)
	if s.snap.Changed(m) {
		now := metav1.NewTime(s.r.Clock.Now())
		m.Status.LastUpdated = &now
	}
	// Past the pass's own (locked) metadata and spec writes: patchMeta.
	s.snap.Rebase(m)
	return s.snap.Patch(s.ctx, s.r.Client, m)
}

// setOutcome puts the outcome of a pass in m's conditions and phase. A
// step sets its own condition when it succeeds; a wait sets the condition
// it names; Ready says why the machine is not ready yet, and keeps saying
// it is once it is (a later wait or failure shows in the step's condition
// only). A conflict is someone else's write: the retry decides.
func setOutcome(m *infrav1.Metal3Machine, o operatorkit.Outcome) {
	conds := operatorkit.Conditions{List: &m.Status.Conditions, Generation: m.Generation}
	switch {
	case o.Kind == operatorkit.Succeeded:
	case o.Kind == operatorkit.Failed && apierrors.IsConflict(o.Err):
	default:
		if o.Condition != "" && o.Condition != infrav1.ReadyCondition {
			conds.Set(o.Condition, metav1.ConditionFalse, o.Reason, o.Message)
		}
		if !m.Status.Ready {
			conds.Set(infrav1.ReadyCondition, metav1.ConditionFalse, o.Reason, o.Message)
		}
	}
	m.Status.Phase = phase(m)
}

// phase summarizes the machine in one word.
func phase(m *infrav1.Metal3Machine) string {
	switch {
	case !m.DeletionTimestamp.IsZero():
		return infrav1.PhaseDeleting
	case m.Status.FailureReason != nil:
		return infrav1.PhaseFailed
	case m.Status.Ready:
		return infrav1.PhaseProvisioned
	}
	if _, ok := m.Annotations[infrav1.HostAnnotation]; !ok {
		if c := apimeta.FindStatusCondition(m.Status.Conditions, infrav1.AssociateBareMetalHostCondition); c != nil {
			return infrav1.PhaseAssociating
		}
		return infrav1.PhasePending
	}
	return infrav1.PhaseProvisioning
}

// conditions writes the Metal3Machine's conditions for the generation
// read.
func (s *machineScope) conditions() operatorkit.Conditions {
	return operatorkit.Conditions{List: &s.m3m.Status.Conditions, Generation: s.m3m.Generation}
}

func (s *machineScope) event(warning bool, reason, format string, args ...any) {
	s.events = append(s.events, event{warning: warning, reason: reason, note: fmt.Sprintf(format, args...)})
}

// record emits the pass's events, after its status write. Notes are built
// by this package and carry no secret.
func (s *machineScope) record() {
	ev := operatorkit.Events{Recorder: s.r.Recorder}
	for _, e := range s.events {
		t := corev1.EventTypeNormal
		if e.warning {
			t = corev1.EventTypeWarning
		}
		ev.Record(s.m3m, t, e.reason, "", e.note)
	}
}
