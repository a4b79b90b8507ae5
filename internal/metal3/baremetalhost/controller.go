package baremetalhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
)

// credentialsIndex indexes hosts by the name of their BMC Secret, so a
// changed Secret wakes the hosts that use it.
const credentialsIndex = "spec.bmc.credentialsName"

// Defaults of the Reconciler's timings.
const (
	DefaultPowerPollInterval = time.Minute
	DefaultMaxBackoff        = 5 * time.Minute
	baseBackoff              = 2 * time.Second
	// nextStateDelay is the wait before the handler of a state just
	// entered runs.
	nextStateDelay = 100 * time.Millisecond
)

// Reconciler reconciles BareMetalHosts.
type Reconciler struct {
	Client   client.Client
	Factory  provisioner.Factory
	Recorder recorder.EventRecorder
	// Clock stamps lastUpdated and the operation history; nil is the real clock.
	Clock clock.PassiveClock
	// PowerPollInterval is how often a settled host's power state is read
	// again to notice changes made behind the controller's back.
	PowerPollInterval time.Duration
	// MaxBackoff bounds the wait between retries of a failing step.
	MaxBackoff time.Duration
	// Concurrency is how many hosts are reconciled at once.
	Concurrency int
}

// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts/finalizers,verbs=update
// BMC credentials, user-data, network-data and meta-data are Secrets the
// hosts name; a host becomes an owner of its BMC credentials Secret.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the controller, its Secret index and watches.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr manager.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.PowerPollInterval <= 0 {
		r.PowerPollInterval = DefaultPowerPollInterval
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = DefaultMaxBackoff
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
func (r *Reconciler) hostsOfSecret(ctx context.Context, o client.Object) []reconcile.Request {
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

// Reconcile moves one host one step on.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	host := &metal3v1alpha1.BareMetalHost{}
	if err := r.Client.Get(ctx, req.NamespacedName, host); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	logger := log.FromContext(ctx).WithValues("state", host.Status.Provisioning.State)
	ctx = log.IntoContext(ctx, logger)

	// A host moved from another cluster carries its status in an
	// annotation: restore it before anything else looks at the status.
	// While the host is paused (the Cluster API provider pauses it and
	// writes the annotation before a move) the annotation stays, so that
	// the move carries it.
	_, paused := host.Annotations[metal3v1alpha1.PausedAnnotation]
	if restored, err := r.restoreStatus(ctx, host, paused); err != nil || restored {
		return reconcile.Result{}, err
	}
	if paused {
		logger.V(1).Info("paused: not reconciling")
		return reconcile.Result{}, nil
	}
	deleting := !host.DeletionTimestamp.IsZero()
	// References to other namespaces are refused before anything is read
	// or sent, and before the finalizer: such a host is always deletable.
	if err := HostReferences(host); err != nil && !deleting {
		return reconcile.Result{}, r.refuse(ctx, host, err)
	}
	if !deleting && !controllerutil.ContainsFinalizer(host, metal3v1alpha1.BareMetalHostFinalizer) {
		patch := client.MergeFromWithOptions(host.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(host, metal3v1alpha1.BareMetalHostFinalizer)
		if err := r.Client.Patch(ctx, host, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
	}
	if deleting && !controllerutil.ContainsFinalizer(host, metal3v1alpha1.BareMetalHostFinalizer) {
		return reconcile.Result{}, nil
	}
	if !deleting {
		if err := r.ownCredentials(ctx, host); err != nil {
			return reconcile.Result{}, err
		}
	}

	before := host.Status.DeepCopy()
	s := &step{r: r, host: host, ctx: ctx}
	res := s.run(deleting)

	if s.removeFinalizer {
		patch := client.MergeFromWithOptions(host.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.RemoveFinalizer(host, metal3v1alpha1.BareMetalHostFinalizer)
		if err := r.Client.Patch(ctx, host, patch); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(fmt.Errorf("removing the finalizer: %w", err))
		}
		r.events(host, s.events)
		return reconcile.Result{}, nil
	}
	if s.clearRebootAnnotation != "" {
		// The patch reads the stored host back, status included: keep the
		// pass's status to write next.
		status := host.Status.DeepCopy()
		patch := client.MergeFromWithOptions(host.DeepCopy(), client.MergeFromWithOptimisticLock{})
		delete(host.Annotations, s.clearRebootAnnotation)
		if err := r.Client.Patch(ctx, host, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("removing annotation %s: %w", s.clearRebootAnnotation, err)
		}
		host.Status = *status
	}
	if !statusEqual(before, &host.Status) {
		now := metav1.NewTime(r.Clock.Now())
		host.Status.LastUpdated = &now
		// A conflict (the cache had not yet seen the last write, or someone
		// else wrote the host) is returned: the work queue retries with its
		// backoff, from a fresh read.
		if err := r.Client.Status().Update(ctx, host); err != nil {
			return reconcile.Result{}, fmt.Errorf("writing status: %w", err)
		}
	}
	// Events go out once every write of the pass succeeded, whether or not
	// the status changed (a reboot changes nothing in it).
	r.events(host, s.events)
	if s.stateChanged {
		// Go on to the next state's handler; the short wait lets the
		// cache see the status just written.
		return reconcile.Result{RequeueAfter: nextStateDelay}, nil
	}
	return res, nil
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

// refuse records a host the controller will not act on: its status says
// why (an error of type registration error naming the field) and a warning
// event repeats it once. Nothing else is done until the spec changes.
func (r *Reconciler) refuse(ctx context.Context, host *metal3v1alpha1.BareMetalHost, err error) error {
	msg := err.Error()
	log.FromContext(ctx).Info("refusing the host", "error", msg)
	st := &host.Status
	if st.ErrorType == metal3v1alpha1.RegistrationError && st.ErrorMessage == msg && st.OperationalStatus == metal3v1alpha1.OperationalStatusError {
		return nil
	}
	st.ErrorType = metal3v1alpha1.RegistrationError
	st.ErrorMessage = msg
	st.OperationalStatus = metal3v1alpha1.OperationalStatusError
	now := metav1.NewTime(r.Clock.Now())
	st.LastUpdated = &now
	if err := r.Client.Status().Update(ctx, host); err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	r.events(host, []hostEvent{{reason: "InvalidReference", message: msg, warning: true}})
	return nil
}

// ownCredentials makes the host an owner of its BMC credentials Secret, as
// upstream does: clusterctl move then carries the Secret with the host,
// and the Secret goes when its last host does.
func (r *Reconciler) ownCredentials(ctx context.Context, host *metal3v1alpha1.BareMetalHost) error {
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
func (r *Reconciler) restoreStatus(ctx context.Context, host *metal3v1alpha1.BareMetalHost, paused bool) (bool, error) {
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
			if host.Status.LastUpdated.IsZero() {
				now := metav1.NewTime(r.Clock.Now())
				host.Status.LastUpdated = &now
			}
			if err := r.Client.Status().Update(ctx, host); err != nil {
				return false, fmt.Errorf("restoring status from annotation %s: %w", metal3v1alpha1.StatusAnnotation, err)
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
		return false, fmt.Errorf("removing annotation %s: %w", metal3v1alpha1.StatusAnnotation, err)
	}
	return true, nil
}

// events records a pass's events on the host. Messages are built by this
// package and never hold credentials or user-data.
func (r *Reconciler) events(host *metal3v1alpha1.BareMetalHost, events []hostEvent) {
	if r.Recorder == nil {
		return
	}
	for _, e := range events {
		typ := corev1.EventTypeNormal
		if e.warning {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(host, nil, typ, e.reason, e.reason, "%s", e.message)
	}
}

// credentials reads the host's BMC Secret. A missing or incomplete Secret
// is the host's registration error, not the controller's.
func (r *Reconciler) credentials(ctx context.Context, host *metal3v1alpha1.BareMetalHost) (*corev1.Secret, provisioner.Credentials, error) {
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

// open parses the host's BMC address and opens its provisioner.
func (r *Reconciler) open(ctx context.Context, host *metal3v1alpha1.BareMetalHost, c provisioner.Credentials) (provisioner.Provisioner, error) {
	access, err := bmc.Parse(host.Spec.BMC.Address)
	if err != nil {
		return nil, fmt.Errorf("spec.bmc.address: %w", err)
	}
	return r.Factory.Open(ctx, provisioner.Target{Access: access, Credentials: c, InsecureSkipVerify: host.Spec.BMC.DisableCertificateVerification})
}

// backoff is the wait before the n-th retry of a failing step.
func (r *Reconciler) backoff(n int) time.Duration {
	d := baseBackoff
	for i := 1; i < n && d < r.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, r.MaxBackoff)
}

// statusEqual compares statuses ignoring lastUpdated.
func statusEqual(a, b *metal3v1alpha1.BareMetalHostStatus) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	a.LastUpdated, b.LastUpdated = nil, nil
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
