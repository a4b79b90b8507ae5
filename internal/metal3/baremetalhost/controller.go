package baremetalhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/refs"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// credentialsIndex indexes hosts by the name of their BMC Secret, so a
// changed Secret wakes the hosts that use it.
const credentialsIndex = "spec.bmc.credentialsName"

// Defaults of the BareMetalHostReconciler's timings.
const (
	DefaultPowerPollInterval = time.Minute
	DefaultMaxBackoff        = 5 * time.Minute
	// DefaultProvisionPollInterval is when a step the provisioner reports
	// under way (Dirty) is looked at again, when it does not say.
	DefaultProvisionPollInterval = 10 * time.Second
	// baseBackoff is the wait after a step's first failure, doubled
	// for each one after (status.errorCount counts them).
	baseBackoff = 2 * time.Second
	// nextStateDelay is the wait before the handler of a state just
	// entered runs.
	nextStateDelay = 100 * time.Millisecond
)

// BareMetalHostReconciler reconciles BareMetalHosts.
type BareMetalHostReconciler struct {
	Client client.Client
	// Factory opens the host lifecycle provisioner (Ironic's, or the
	// direct one over the host's BMC) for a host.
	Factory  provisioner.Factory
	Recorder recorder.EventRecorder
	// Clock stamps lastUpdated and the operation history; nil is the real clock.
	Clock clock.PassiveClock
	// PowerPollInterval is how often a settled host's power state is read
	// again to notice changes made behind the controller's back.
	PowerPollInterval time.Duration
	// ProvisionPollInterval is when a step the provisioner reports under
	// way is looked at again, when the provisioner does not say.
	ProvisionPollInterval time.Duration
	// MaxBackoff bounds the wait between retries of a failing step.
	MaxBackoff time.Duration
	// Concurrency is how many hosts are reconciled at once.
	Concurrency int

	// powerRequests holds, per host UID, the power-on or power-off a
	// provisioner answered Dirty (under way), until a pass sees the power
	// reach its target: its event is recorded then (power.go).
	powerRequests sync.Map
}

// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts/finalizers,verbs=update
// BMC credentials, user-data, network-data and meta-data are Secrets the
// hosts name; a host becomes an owner of its BMC credentials Secret.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller, its Secret index and watches.
func (r *BareMetalHostReconciler) SetupWithManager(ctx context.Context, mgr manager.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.PowerPollInterval <= 0 {
		r.PowerPollInterval = DefaultPowerPollInterval
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = DefaultMaxBackoff
	}
	if r.ProvisionPollInterval <= 0 {
		r.ProvisionPollInterval = DefaultProvisionPollInterval
	}
	if r.Concurrency < 1 {
		r.Concurrency = 1
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &metal3v1alpha1.BareMetalHost{}, credentialsIndex, func(o client.Object) []string {
		h := o.(*metal3v1alpha1.BareMetalHost)
		if h.Spec.BMC.CredentialsName == "" {
			return nil
		}
		return []string{h.Spec.BMC.CredentialsName}
	}); err != nil {
		return fmt.Errorf("indexing BareMetalHosts by credentials Secret: %w", err)
	}
	return builder.ControllerManagedBy(mgr).
		// Status writes of the controller itself must not wake it: a
		// failing step waits for its backoff.
		For(&metal3v1alpha1.BareMetalHost{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.hostsOfSecret)).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.Concurrency}).
		Named("baremetalhost").
		Complete(r)
}

// hostsOfSecret maps a Secret to the hosts whose BMC credentials it holds.
func (r *BareMetalHostReconciler) hostsOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
	var hosts metal3v1alpha1.BareMetalHostList
	if err := r.Client.List(ctx, &hosts, client.InNamespace(o.GetNamespace()), client.MatchingFields{credentialsIndex: o.GetName()}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(hosts.Items))
	for _, h := range hosts.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: h.Namespace, Name: h.Name}})
	}
	return out
}

// Reconcile moves one host one step on: admit it, run the handler of its
// state (states.go), then write what the handler changed and say when to
// look again.
func (r *BareMetalHostReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	host := &metal3v1alpha1.BareMetalHost{}
	if err := r.Client.Get(ctx, req.NamespacedName, host); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithValues("state", host.Status.Provisioning.State))
	if run, err := r.admit(ctx, host); err != nil || !run {
		return reconcile.Result{}, err
	}

	snap := operatorkit.SnapshotStatus(host, "lastUpdated")
	s := &hostScope{r: r, host: host, ctx: ctx}
	outcome := operatorkit.OutcomeOf(s.run(!host.DeletionTimestamp.IsZero()), "")
	if s.removeFinalizer {
		if err := operatorkit.RemoveFinalizer(ctx, r.Client, host, metal3v1alpha1.BareMetalHostFinalizer); err != nil {
			return reconcile.Result{}, err
		}
		r.record(host, s.events)
		r.powerRequests.Delete(host.UID) // the host is gone: nothing to report
		return reconcile.Result{}, nil
	}
	if err := r.write(ctx, s, snap); err != nil {
		return reconcile.Result{}, err
	}
	// Events go out once every write of the pass succeeded, whether or not
	// the status changed (a reboot changes nothing in it).
	r.record(host, s.events)
	return s.requeue(outcome), nil
}

// admit readies a host for its state's handler and reports whether the
// handler is to run. A host moved from another cluster carries its status
// in an annotation: it is restored before anything else looks at the
// status. While the host is paused (the Cluster API provider pauses it and
// writes the annotation before a move) the annotation stays, so that the
// move carries it, and nothing else is done. References to other
// namespaces are refused before anything is read or sent, and before the
// finalizer: such a host is always deletable. A host being deleted without
// the finalizer has nothing left to undo.
func (r *BareMetalHostReconciler) admit(ctx context.Context, host *metal3v1alpha1.BareMetalHost) (bool, error) {
	_, paused := host.Annotations[metal3v1alpha1.PausedAnnotation]
	if restored, err := r.restoreStatus(ctx, host, paused); err != nil || restored {
		return false, err
	}
	if paused {
		log.FromContext(ctx).V(1).Info("paused: not reconciling")
		return false, nil
	}
	if !host.DeletionTimestamp.IsZero() {
		return controllerutil.ContainsFinalizer(host, metal3v1alpha1.BareMetalHostFinalizer), nil
	}
	if err := HostReferences(host); err != nil {
		return false, r.refuse(ctx, host, operatorkit.Stall("InvalidReference", err))
	}
	if _, err := operatorkit.EnsureFinalizer(ctx, r.Client, host, metal3v1alpha1.BareMetalHostFinalizer); err != nil {
		return false, err
	}
	if err := r.ownCredentials(ctx, host); err != nil {
		return false, err
	}
	return true, nil
}

// write stores what a pass changed: the annotations a handler consumed
// (reboot, inspect), then the status when it differs from the snapshot
// taken before the handler ran (lastUpdated aside).
func (r *BareMetalHostReconciler) write(ctx context.Context, s *hostScope, snap *operatorkit.StatusSnapshot) error {
	host := s.host
	if len(s.clearAnnotations) > 0 {
		// The patch reads the stored host back, status included: keep the
		// pass's status to write next.
		status := host.Status.DeepCopy()
		patch := client.MergeFromWithOptions(host.DeepCopy(), client.MergeFromWithOptimisticLock{})
		for _, a := range s.clearAnnotations {
			delete(host.Annotations, a)
		}
		if err := r.Client.Patch(ctx, host, patch); err != nil {
			return fmt.Errorf("removing annotations %s from %s: %w", strings.Join(s.clearAnnotations, ", "), operatorkit.ObjectName(host), err)
		}
		host.Status = *status
	}
	if !snap.Changed(host) {
		return nil
	}
	return r.updateStatus(ctx, host)
}

// updateStatus stamps lastUpdated and writes the host's whole status with
// Update, not with the kit's merge patch: in upstream's model the status
// is one record of the provisioning state machine (state, operation
// history, error fields, credentials) that moves together, stamped with
// its own lastUpdated. An Update conflicts as an optimistic-lock patch
// does: a conflict (the cache had not yet seen the last write, or someone
// else wrote the host) is returned, and the work queue retries with its
// backoff, from a fresh read.
func (r *BareMetalHostReconciler) updateStatus(ctx context.Context, host *metal3v1alpha1.BareMetalHost) error {
	now := metav1.NewTime(r.Clock.Now())
	host.Status.LastUpdated = &now
	if err := r.Client.Status().Update(ctx, host); err != nil {
		return fmt.Errorf("writing the status of %s: %w", operatorkit.ObjectName(host), err)
	}
	return nil
}

// HostReferences checks the host's Secret references: each resolves in the
// host's namespace. spec.bmc.credentialsName and
// spec.preprovisioningNetworkDataName take a name only; spec.userData,
// spec.networkData and spec.metaData may give a namespace, which must then
// be the host's (as upstream's webhook requires).
func HostReferences(host *metal3v1alpha1.BareMetalHost) error {
	var rs []refs.Ref
	for _, f := range []struct {
		field string
		ref   *corev1.SecretReference
	}{{"spec.userData", host.Spec.UserData}, {"spec.networkData", host.Spec.NetworkData}, {"spec.metaData", host.Spec.MetaData}} {
		if f.ref != nil {
			rs = append(rs, refs.Ref{Field: f.field, Namespace: f.ref.Namespace})
		}
	}
	return refs.Check("BareMetalHost", host.Namespace, rs...)
}

// refuse records a host the controller will not act on; err is the
// stalled outcome that says why. The status says it too (an error of type
// registration error naming the field) and a warning event repeats it
// once. Nothing else is done until the spec changes: no requeue, the
// watch brings the host back.
func (r *BareMetalHostReconciler) refuse(ctx context.Context, host *metal3v1alpha1.BareMetalHost, err error) error {
	o := operatorkit.OutcomeOf(err, "")
	log.FromContext(ctx).Info("refusing the host", "error", o.Message)
	st := &host.Status
	if st.ErrorType == metal3v1alpha1.RegistrationError && st.ErrorMessage == o.Message && st.OperationalStatus == metal3v1alpha1.OperationalStatusError {
		return nil
	}
	st.ErrorType = metal3v1alpha1.RegistrationError
	st.ErrorMessage = o.Message
	st.OperationalStatus = metal3v1alpha1.OperationalStatusError
	if err := r.updateStatus(ctx, host); err != nil {
		return err
	}
	r.record(host, []hostEvent{{reason: o.Reason, message: o.Message, warning: true}})
	return nil
}

// ownCredentials makes the host an owner of its BMC credentials Secret, as
// upstream does: clusterctl move then carries the Secret with the host,
// and the Secret goes when its last host does.
func (r *BareMetalHostReconciler) ownCredentials(ctx context.Context, host *metal3v1alpha1.BareMetalHost) error {
	name := host.Spec.BMC.CredentialsName
	if name == "" {
		return nil
	}
	sec := &corev1.Secret{}
	if err := r.Client.Get(ctx, clientKey(host.Namespace, name), sec); err != nil {
		// A missing Secret is a registration error the state machine reports.
		return client.IgnoreNotFound(err)
	}
	for _, ref := range sec.OwnerReferences {
		if ref.UID == host.UID {
			return nil
		}
	}
	patch := client.MergeFromWithOptions(sec.DeepCopy(), client.MergeFromWithOptimisticLock{})
	sec.OwnerReferences = append(sec.OwnerReferences, metav1.OwnerReference{
		APIVersion: metal3v1alpha1.GroupVersion.String(), Kind: "BareMetalHost", Name: host.Name, UID: host.UID,
	})
	if err := r.Client.Patch(ctx, sec, patch); err != nil {
		return fmt.Errorf("owning the BMC credentials Secret %s/%s: %w", host.Namespace, name, err)
	}
	return nil
}

// restoreStatus copies the status annotation into an empty status (a host
// that moved between clusters), then drops the annotation unless the host
// is paused.
func (r *BareMetalHostReconciler) restoreStatus(ctx context.Context, host *metal3v1alpha1.BareMetalHost, paused bool) (bool, error) {
	raw, ok := host.Annotations[metal3v1alpha1.StatusAnnotation]
	if !ok {
		return false, nil
	}
	restored := false
	if host.Status.LastUpdated.IsZero() {
		var st metal3v1alpha1.BareMetalHostStatus
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			log.FromContext(ctx).Error(err, "the status annotation is not a BareMetalHost status; ignoring it", "annotation", metal3v1alpha1.StatusAnnotation)
		} else {
			host.Status = st
			// The carried record is written whole, as updateStatus writes
			// every status, keeping its own lastUpdated when it has one.
			if host.Status.LastUpdated.IsZero() {
				now := metav1.NewTime(r.Clock.Now())
				host.Status.LastUpdated = &now
			}
			if err := r.Client.Status().Update(ctx, host); err != nil {
				return false, fmt.Errorf("restoring the status of %s from annotation %s: %w", operatorkit.ObjectName(host), metal3v1alpha1.StatusAnnotation, err)
			}
			restored = true
		}
	}
	if paused {
		return restored, nil
	}
	patch := client.MergeFromWithOptions(host.DeepCopy(), client.MergeFromWithOptimisticLock{})
	delete(host.Annotations, metal3v1alpha1.StatusAnnotation)
	if err := r.Client.Patch(ctx, host, patch); err != nil {
		return false, fmt.Errorf("removing annotation %s from %s: %w", metal3v1alpha1.StatusAnnotation, operatorkit.ObjectName(host), err)
	}
	return true, nil
}

// record emits a pass's events on the host. Messages are built by this
// package and never hold credentials or user-data.
func (r *BareMetalHostReconciler) record(host *metal3v1alpha1.BareMetalHost, events []hostEvent) {
	rec := operatorkit.Events{Recorder: r.Recorder}
	for _, e := range events {
		typ := corev1.EventTypeNormal
		if e.warning {
			typ = corev1.EventTypeWarning
		}
		rec.Record(host, typ, e.reason, "", e.message)
	}
}

// credentials reads the host's BMC Secret. A missing or incomplete Secret
// is the host's registration error, not the controller's.
func (r *BareMetalHostReconciler) credentials(ctx context.Context, host *metal3v1alpha1.BareMetalHost) (*corev1.Secret, provisioner.Credentials, error) {
	if host.Spec.BMC.CredentialsName == "" {
		return nil, provisioner.Credentials{}, errors.New("spec.bmc.credentialsName is empty")
	}
	sec := &corev1.Secret{}
	if err := r.Client.Get(ctx, host.CredentialsKey(), sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, provisioner.Credentials{}, fmt.Errorf("BMC credentials Secret %s/%s (spec.bmc.credentialsName) not found", host.Namespace, host.Spec.BMC.CredentialsName)
		}
		return nil, provisioner.Credentials{}, fmt.Errorf("reading BMC credentials Secret %s/%s: %w", host.Namespace, host.Spec.BMC.CredentialsName, err)
	}
	c := provisioner.Credentials{Username: string(sec.Data["username"]), Password: string(sec.Data["password"])}
	switch {
	case c.Username == "":
		return sec, c, fmt.Errorf("BMC credentials Secret %s/%s has no username", sec.Namespace, sec.Name)
	case c.Password == "":
		return sec, c, fmt.Errorf("BMC credentials Secret %s/%s has no password", sec.Namespace, sec.Name)
	}
	return sec, c, nil
}

// open parses the host's BMC address and opens its provisioner, telling
// it of the host: its identity, its engine id (status.provisioning.ID),
// BMC, boot MAC address, boot mode and known inventory.
func (r *BareMetalHostReconciler) open(ctx context.Context, host *metal3v1alpha1.BareMetalHost, c provisioner.Credentials) (provisioner.Provisioner, error) {
	access, err := bmc.Parse(host.Spec.BMC.Address)
	if err != nil {
		return nil, fmt.Errorf("spec.bmc.address: %w", err)
	}
	return r.Factory.Open(ctx, provisioner.Host{
		Namespace:      host.Namespace,
		Name:           host.Name,
		UID:            string(host.UID),
		ID:             host.Status.Provisioning.ID,
		BMC:            provisioner.Target{Access: access, Credentials: c, InsecureSkipVerify: host.Spec.BMC.DisableCertificateVerification},
		BootMACAddress: host.Spec.BootMACAddress,
		BootMode:       host.BootMode(),
		Hardware:       host.Status.HardwareDetails.DeepCopy(),
	})
}

// backoff is the wait before retrying a failing step, by the host's
// status.errorCount.
func (r *BareMetalHostReconciler) backoff() operatorkit.Backoff {
	return operatorkit.Backoff{Base: baseBackoff, Max: r.MaxBackoff}
}
