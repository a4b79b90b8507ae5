package capm3

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
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
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Annotations of remediation, upstream's names.
const (
	// RemediationPowerOffPrefix starts the reboot annotation (with a
	// suffix: the host stays off until it goes) a remediation puts on its
	// host: the prefix, then the Metal3Remediation's name.
	RemediationPowerOffPrefix = metal3v1alpha1.RebootAnnotationPrefix + "/metal3-remediation-"
	// NodeLabelsBackupAnnotation and NodeAnnotationsBackupAnnotation on a
	// Metal3Remediation keep the labels and annotations (JSON) of the
	// Node it deleted, given back when the Node registers again.
	NodeLabelsBackupAnnotation      = "remediation.metal3.io/node-labels-backup"
	NodeAnnotationsBackupAnnotation = "remediation.metal3.io/node-annotations-backup"
)

// DefaultRemediationTimeout is how long a try waits for the machine to be
// healthy again when the strategy names no timeout.
const DefaultRemediationTimeout = 600 * time.Second

// remediationPoll: the host's power or the workload Node, which no watch
// of this controller reports.
const remediationPoll = 5 * time.Second

// RemediationReconciler carries out Metal3Remediations: Cluster API's
// MachineHealthCheck creates one, from its Metal3RemediationTemplate, for
// each unhealthy Machine (same name, owned by the Machine) and deletes it
// once the Machine is healthy again.
//
// The Reboot strategy, as upstream: the host is powered off (a suffixed
// reboot annotation), its Node deleted once it is off (its labels and
// annotations kept on the Metal3Remediation), the host powered on again;
// when the Node registers again it gets its labels and annotations back
// and the remediation is done. A try that does not bring the Node back
// within the timeout (counted from the try's start, whether or not the
// host powered on) is repeated, up to retryLimit times; then the host
// is marked unhealthy (no machine claims it again), and the Machine's
// OwnerRemediated condition is set False, so that its MachineSet deletes
// it and creates a new one, on another host.
type RemediationReconciler struct {
	Client   client.Client
	Recorder recorder.EventRecorder
	// Workloads reaches the workload clusters' Nodes.
	Workloads *Workloads
	// Clock is the time source; the real clock when nil.
	Clock clock.PassiveClock
}

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3remediations,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3remediations/status,verbs=patch;update
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3remediations/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines/status,verbs=patch;update

// SetupWithManager registers the controller, woken by its remediations
// and by the hosts they power off and on.
func (r *RemediationReconciler) SetupWithManager(_ context.Context, mgr manager.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Workloads == nil {
		r.Workloads = &Workloads{Reader: mgr.GetClient()}
	}
	return builder.ControllerManagedBy(mgr).
		Named("metal3remediation").
		For(&infrav1.Metal3Remediation{}).
		Watches(&metal3v1alpha1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(hostToRemediations)).
		Complete(r)
}

// hostToRemediations wakes the remediations whose power-off annotation a
// host carries.
func hostToRemediations(_ context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for k := range o.GetAnnotations() {
		if name, ok := strings.CutPrefix(k, RemediationPowerOffPrefix); ok && name != "" {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}})
		}
	}
	return reqs
}

// remediationScope is one pass over a Metal3Remediation.
type remediationScope struct {
	r       *RemediationReconciler
	ctx     context.Context
	rem     *infrav1.Metal3Remediation
	machine *clusterv1.Machine
	host    *metal3v1alpha1.BareMetalHost
}

// Reconcile takes a remediation one step further.
func (r *RemediationReconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	rem := &infrav1.Metal3Remediation{}
	if err := r.Client.Get(ctx, req.NamespacedName, rem); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	s := &remediationScope{r: r, ctx: ctx, rem: rem}
	snap := operatorkit.SnapshotStatus(rem)
	defer func() {
		o := operatorkit.OutcomeOf(err, "RemediationError")
		if o.Kind == operatorkit.Waiting || o.Kind == operatorkit.Stalled {
			log.FromContext(ctx).V(1).Info(strings.ToLower(o.Kind.String()), "reason", o.Reason, "message", o.Message)
			if o.Kind == operatorkit.Stalled {
				r.event(rem, corev1.EventTypeWarning, o.Reason, "%s", o.Message)
			}
			res, err = reconcile.Result{RequeueAfter: o.After}, nil
		}
		var perr error
		if rem.DeletionTimestamp.IsZero() && snap.Changed(rem) {
			perr = snap.Patch(ctx, r.Client, rem)
		}
		res, err = operatorkit.Settle(res, err, perr)
	}()
	if !rem.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, s.finish()
	}
	if err := s.read(); err != nil {
		return reconcile.Result{}, err
	}
	if st := rem.Spec.Strategy; st == nil || st.Type != infrav1.RebootRemediationStrategy {
		rem.Status.Phase = infrav1.RemediationPhaseFailed
		return reconcile.Result{}, operatorkit.Stallf("UnsupportedStrategy", "Metal3Remediation %s/%s: spec.strategy.type must be %q",
			rem.Namespace, rem.Name, infrav1.RebootRemediationStrategy)
	}
	if !s.host.Spec.Online {
		// Upstream's rule: a host that is to be off is not rebooted.
		rem.Status.Phase = infrav1.RemediationPhaseFailed
		return reconcile.Result{}, operatorkit.Stallf("HostOffline", "BareMetalHost %s/%s has spec.online false: not remediated",
			s.host.Namespace, s.host.Name)
	}
	switch rem.Status.Phase {
	case "":
		rem.Status.Phase = infrav1.RemediationPhaseRunning
		rem.Status.LastRemediated = s.now()
		r.event(rem, corev1.EventTypeNormal, "RemediationStarted", "rebooting BareMetalHost %s of Machine %s", s.host.Name, s.machine.Name)
		return reconcile.Result{RequeueAfter: time.Millisecond}, nil
	case infrav1.RemediationPhaseRunning:
		return reconcile.Result{}, s.powerOff()
	case infrav1.RemediationPhaseWaiting:
		return reconcile.Result{}, s.powerOnAndWait()
	}
	// Deleting machine, Failed: the MachineHealthCheck or the MachineSet
	// takes it from here.
	return reconcile.Result{}, nil
}

func (s *remediationScope) now() *metav1.Time {
	t := metav1.NewTime(s.r.Clock.Now())
	return &t
}

func (r *RemediationReconciler) event(obj client.Object, typ, reason, format string, args ...any) {
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, typ, reason, reason, format, args...)
	}
}

// read finds the Machine that owns the remediation, its Metal3Machine and
// that machine's host, all in the remediation's namespace.
func (s *remediationScope) read() error {
	rem := s.rem
	var owner *metav1.OwnerReference
	for i, ref := range rem.OwnerReferences {
		if ref.Kind == "Machine" && strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			owner = &rem.OwnerReferences[i]
		}
	}
	if owner == nil {
		return operatorkit.Stallf("NoOwnerMachine", "Metal3Remediation %s/%s has no owner Machine (a MachineHealthCheck creates it owned by the unhealthy Machine)",
			rem.Namespace, rem.Name)
	}
	s.machine = &clusterv1.Machine{}
	if err := s.r.Client.Get(s.ctx, types.NamespacedName{Namespace: rem.Namespace, Name: owner.Name}, s.machine); err != nil {
		return fmt.Errorf("reading Machine %s/%s of Metal3Remediation %s: %w", rem.Namespace, owner.Name, rem.Name, err)
	}
	ref := s.machine.Spec.InfrastructureRef
	if ref.Kind != "Metal3Machine" || ref.APIGroup != infrav1.GroupVersion.Group {
		return operatorkit.Stallf("NotAMetal3Machine", "Machine %s/%s's infrastructure is %s %s, not a Metal3Machine", rem.Namespace, s.machine.Name, ref.Kind, ref.Name)
	}
	m3m := &infrav1.Metal3Machine{}
	if err := s.r.Client.Get(s.ctx, types.NamespacedName{Namespace: rem.Namespace, Name: ref.Name}, m3m); err != nil {
		return fmt.Errorf("reading Metal3Machine %s/%s: %w", rem.Namespace, ref.Name, err)
	}
	key, ok, err := hostKey(m3m)
	switch {
	case err != nil:
		return operatorkit.Stall("HostInOtherNamespace", err)
	case !ok:
		return operatorkit.Stallf("NoHost", "Metal3Machine %s/%s has no host (annotation %s)", m3m.Namespace, m3m.Name, infrav1.HostAnnotation)
	}
	s.host = &metal3v1alpha1.BareMetalHost{}
	if err := s.r.Client.Get(s.ctx, key, s.host); err != nil {
		return fmt.Errorf("reading BareMetalHost %s of Metal3Machine %s: %w", key, m3m.Name, err)
	}
	return nil
}

func (s *remediationScope) powerOffKey() string { return RemediationPowerOffPrefix + s.rem.Name }

// setPowerOff adds (on) or removes the host's power-off annotation.
func (s *remediationScope) setPowerOff(on bool) error {
	h := s.host
	_, has := h.Annotations[s.powerOffKey()]
	if has == on {
		return nil
	}
	patch := client.MergeFrom(h.DeepCopy())
	if on {
		if h.Annotations == nil {
			h.Annotations = map[string]string{}
		}
		args, err := json.Marshal(metal3v1alpha1.RebootAnnotationArguments{Mode: metal3v1alpha1.RebootModeHard})
		if err != nil {
			return err
		}
		h.Annotations[s.powerOffKey()] = string(args)
	} else {
		delete(h.Annotations, s.powerOffKey())
	}
	if err := s.r.Client.Patch(s.ctx, h, patch); err != nil {
		return fmt.Errorf("annotating BareMetalHost %s/%s: %w", h.Namespace, h.Name, err)
	}
	return nil
}

// powerOff: the host off, then its Node deleted (after backing up its
// labels and annotations), then on to Waiting.
func (s *remediationScope) powerOff() error {
	rem := s.rem
	if controllerutil.AddFinalizer(rem, infrav1.RemediationFinalizer) {
		if err := s.writeMeta(func() error { return s.r.Client.Update(s.ctx, rem) }); err != nil {
			return fmt.Errorf("adding the finalizer to Metal3Remediation %s/%s: %w", rem.Namespace, rem.Name, err)
		}
	}
	if err := s.setPowerOff(true); err != nil {
		return err
	}
	if s.host.Status.PoweredOn {
		return operatorkit.Wait("PoweringOff", remediationPoll, "waiting for BareMetalHost %s/%s to power off", s.host.Namespace, s.host.Name)
	}
	// Only now is the Node deleted: while the host runs, its workloads
	// must not be started elsewhere.
	node, wc, err := s.node()
	if err != nil {
		return err
	}
	if node != nil {
		if err := s.backupNode(node); err != nil {
			return err
		}
		if err := wc.Delete(s.ctx, node); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Node %s of Machine %s/%s: %w", node.Name, rem.Namespace, s.machine.Name, err)
		}
		s.r.event(rem, corev1.EventTypeNormal, "NodeDeleted", "Node %s deleted while BareMetalHost %s is off", node.Name, s.host.Name)
	}
	rem.Status.Phase = infrav1.RemediationPhaseWaiting
	return nil
}

// powerOnAndWait: the host on again, then wait for the Node; give it its
// labels and annotations back, or try again after the timeout, or give
// up.
func (s *remediationScope) powerOnAndWait() error {
	rem := s.rem
	if err := s.setPowerOff(false); err != nil {
		return err
	}
	timeout := DefaultRemediationTimeout
	if st := rem.Spec.Strategy; st != nil && st.Timeout != nil && st.Timeout.Duration > 0 {
		timeout = st.Timeout.Duration
	}
	var since time.Time
	if rem.Status.LastRemediated != nil {
		since = rem.Status.LastRemediated.Time
	}
	left := since.Add(timeout).Sub(s.r.Clock.Now())
	// A host that does not power on within the timeout is a failed try
	// too (upstream waits for it without end).
	if !s.host.Status.PoweredOn && left > 0 {
		return operatorkit.Wait("PoweringOn", min(left, remediationPoll), "waiting for BareMetalHost %s/%s to power on", s.host.Namespace, s.host.Name)
	}
	if s.host.Status.PoweredOn && controllerutil.ContainsFinalizer(rem, infrav1.RemediationFinalizer) {
		node, wc, err := s.node()
		if err != nil {
			return err
		}
		if node != nil {
			if err := s.restoreNode(wc, node); err != nil {
				return err
			}
			s.r.event(rem, corev1.EventTypeNormal, "RemediationDone", "Node %s registered again after BareMetalHost %s was rebooted", node.Name, s.host.Name)
			// The MachineHealthCheck deletes the remediation once the
			// Machine is healthy.
			return s.dropFinalizer()
		}
	}
	if left > 0 {
		return operatorkit.Wait("WaitingForNode", min(left, remediationPoll), "waiting for the Node of Machine %s/%s to register again", rem.Namespace, s.machine.Name)
	}
	if rem.Status.RetryCount < rem.Spec.Strategy.RetryLimit {
		rem.Status.RetryCount++
		rem.Status.Phase = infrav1.RemediationPhaseRunning
		rem.Status.LastRemediated = s.now()
		s.r.event(rem, corev1.EventTypeWarning, "RemediationRetry", "Machine %s not healthy %s after the reboot: retry %d of %d",
			s.machine.Name, timeout, rem.Status.RetryCount, rem.Spec.Strategy.RetryLimit)
		return nil
	}
	// Retries exhausted: the host is kept from machines, and the Machine
	// handed to its owner for deletion.
	if err := s.markHostUnhealthy(); err != nil {
		return err
	}
	if err := s.ownerRemediate(); err != nil {
		return err
	}
	rem.Status.Phase = infrav1.RemediationPhaseDeleting
	s.r.event(rem, corev1.EventTypeWarning, "RemediationFailed", "Machine %s not healthy after %d tries: BareMetalHost %s marked %s, the Machine left to its owner to replace",
		s.machine.Name, rem.Status.RetryCount+1, s.host.Name, infrav1.UnhealthyAnnotation)
	return s.dropFinalizer()
}

// node reads the Machine's Node in the workload cluster; nil when it has
// none or it is gone.
func (s *remediationScope) node() (*corev1.Node, client.Client, error) {
	name := s.machine.Status.NodeRef.Name
	if name == "" {
		return nil, nil, nil
	}
	wc, err := s.r.Workloads.Client(s.ctx, types.NamespacedName{Namespace: s.machine.Namespace, Name: s.machine.Spec.ClusterName})
	if err != nil {
		return nil, nil, operatorkit.WaitErr("NoWorkloadCluster", remediationPoll, err)
	}
	n := &corev1.Node{}
	if err := wc.Get(s.ctx, types.NamespacedName{Name: name}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, wc, nil
		}
		return nil, nil, fmt.Errorf("reading Node %s of cluster %s/%s: %w", name, s.machine.Namespace, s.machine.Spec.ClusterName, err)
	}
	return n, wc, nil
}

// backupNode keeps the Node's labels and annotations on the remediation.
func (s *remediationScope) backupNode(n *corev1.Node) error {
	rem := s.rem
	labels, err := json.Marshal(n.Labels)
	if err != nil {
		return err
	}
	annotations, err := json.Marshal(n.Annotations)
	if err != nil {
		return err
	}
	if rem.Annotations[NodeLabelsBackupAnnotation] == string(labels) && rem.Annotations[NodeAnnotationsBackupAnnotation] == string(annotations) {
		return nil
	}
	patch := client.MergeFrom(rem.DeepCopy())
	if rem.Annotations == nil {
		rem.Annotations = map[string]string{}
	}
	rem.Annotations[NodeLabelsBackupAnnotation], rem.Annotations[NodeAnnotationsBackupAnnotation] = string(labels), string(annotations)
	if err := s.writeMeta(func() error { return s.r.Client.Patch(s.ctx, rem, patch) }); err != nil {
		return fmt.Errorf("keeping Node %s's labels on Metal3Remediation %s/%s: %w", n.Name, rem.Namespace, rem.Name, err)
	}
	return nil
}

// restoreNode gives the registered Node the labels and annotations it had
// (those it has now win), then drops the backup.
func (s *remediationScope) restoreNode(wc client.Client, n *corev1.Node) error {
	rem := s.rem
	var labels, annotations map[string]string
	if v := rem.Annotations[NodeLabelsBackupAnnotation]; v != "" {
		if err := json.Unmarshal([]byte(v), &labels); err != nil {
			return operatorkit.Stallf("BadBackup", "Metal3Remediation %s/%s: annotation %s: %v", rem.Namespace, rem.Name, NodeLabelsBackupAnnotation, err)
		}
	}
	if v := rem.Annotations[NodeAnnotationsBackupAnnotation]; v != "" {
		if err := json.Unmarshal([]byte(v), &annotations); err != nil {
			return operatorkit.Stallf("BadBackup", "Metal3Remediation %s/%s: annotation %s: %v", rem.Namespace, rem.Name, NodeAnnotationsBackupAnnotation, err)
		}
	}
	patch := client.MergeFrom(n.DeepCopy())
	n.Labels = merged(labels, n.Labels)
	n.Annotations = merged(annotations, n.Annotations)
	if err := wc.Patch(s.ctx, n, patch); err != nil {
		return fmt.Errorf("restoring Node %s's labels and annotations: %w", n.Name, err)
	}
	if _, ok := rem.Annotations[NodeLabelsBackupAnnotation]; ok || rem.Annotations[NodeAnnotationsBackupAnnotation] != "" {
		p := client.MergeFrom(rem.DeepCopy())
		delete(rem.Annotations, NodeLabelsBackupAnnotation)
		delete(rem.Annotations, NodeAnnotationsBackupAnnotation)
		if err := s.writeMeta(func() error { return s.r.Client.Patch(s.ctx, rem, p) }); err != nil {
			return fmt.Errorf("dropping the Node backup of Metal3Remediation %s/%s: %w", rem.Namespace, rem.Name, err)
		}
	}
	return nil
}

// merged is base with over's entries on top; nil when both are empty.
func merged(base, over map[string]string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return over
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, over)
	return out
}

// markHostUnhealthy keeps machines off the host.
func (s *remediationScope) markHostUnhealthy() error {
	h := s.host
	if _, ok := h.Annotations[infrav1.UnhealthyAnnotation]; ok {
		return nil
	}
	patch := client.MergeFrom(h.DeepCopy())
	if h.Annotations == nil {
		h.Annotations = map[string]string{}
	}
	h.Annotations[infrav1.UnhealthyAnnotation] = "capm3/UnhealthyNode"
	if err := s.r.Client.Patch(s.ctx, h, patch); err != nil {
		return fmt.Errorf("marking BareMetalHost %s/%s unhealthy: %w", h.Namespace, h.Name, err)
	}
	return nil
}

// ownerRemediate sets the Machine's OwnerRemediated condition False: its
// MachineSet (or control plane) deletes it and makes another.
func (s *remediationScope) ownerRemediate() error {
	m := s.machine
	if c := apimeta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineOwnerRemediatedCondition); c != nil && c.Status == metav1.ConditionFalse &&
		c.Reason == clusterv1.MachineOwnerRemediatedWaitingForRemediationReason && c.Message != "" {
		return nil
	}
	// The whole conditions list goes in a merge patch: with the lock, a
	// write of Cluster API's in between is a conflict, not overwritten.
	patch := client.MergeFromWithOptions(m.DeepCopy(), client.MergeFromWithOptimisticLock{})
	apimeta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{
		Type:               clusterv1.MachineOwnerRemediatedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             clusterv1.MachineOwnerRemediatedWaitingForRemediationReason,
		Message:            fmt.Sprintf("remediation by rebooting BareMetalHost %s failed: the Machine is to be replaced", s.host.Name),
		ObservedGeneration: m.Generation,
	})
	if err := s.r.Client.Status().Patch(s.ctx, m, patch); err != nil {
		return fmt.Errorf("setting Machine %s/%s's %s condition: %w", m.Namespace, m.Name, clusterv1.MachineOwnerRemediatedCondition, err)
	}
	return nil
}

// writeMeta runs a write of the remediation's metadata, keeping the
// status this pass set (the server's answer carries the stored one; the
// pass writes its own at the end).
func (s *remediationScope) writeMeta(write func() error) error {
	st := s.rem.Status.DeepCopy()
	err := write()
	s.rem.Status = *st
	return err
}

func (s *remediationScope) dropFinalizer() error {
	rem := s.rem
	if controllerutil.RemoveFinalizer(rem, infrav1.RemediationFinalizer) {
		if err := s.writeMeta(func() error { return s.r.Client.Update(s.ctx, rem) }); err != nil {
			return fmt.Errorf("removing the finalizer of Metal3Remediation %s/%s: %w", rem.Namespace, rem.Name, err)
		}
	}
	return nil
}

// finish: a deleted remediation leaves no power-off annotation behind, on
// whichever host of its namespace carries it (its Machine may be gone).
func (s *remediationScope) finish() error {
	rem := s.rem
	if !controllerutil.ContainsFinalizer(rem, infrav1.RemediationFinalizer) {
		return nil
	}
	var hosts metal3v1alpha1.BareMetalHostList
	if err := s.r.Client.List(s.ctx, &hosts, client.InNamespace(rem.Namespace)); err != nil {
		return fmt.Errorf("listing the BareMetalHosts of namespace %s: %w", rem.Namespace, err)
	}
	for i := range hosts.Items {
		if _, ok := hosts.Items[i].Annotations[s.powerOffKey()]; ok {
			s.host = &hosts.Items[i]
			if err := s.setPowerOff(false); err != nil {
				return err
			}
		}
	}
	return s.dropFinalizer()
}
