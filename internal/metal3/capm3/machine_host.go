package capm3

import (
	"encoding/json"
	"fmt"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"strings"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// hostKey parses the metal3.io/BareMetalHost annotation.
func hostKey(m *infrav1.Metal3Machine) (types.NamespacedName, bool, error) {
	v, ok := m.Annotations[infrav1.HostAnnotation]
	if !ok {
		return types.NamespacedName{}, false, nil
	}
	ns, name, found := strings.Cut(v, "/")
	if !found {
		ns, name = m.Namespace, v
	}
	if name == "" || ns != m.Namespace {
		return types.NamespacedName{}, true, fmt.Errorf("Metal3Machine %s/%s: annotation %s=%q does not name a BareMetalHost of namespace %s",
			m.Namespace, m.Name, infrav1.HostAnnotation, v, m.Namespace)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true, nil
}

// readHost reads the host the machine claimed. A host that is gone, or
// that another consumer holds, is lost.
func (s *machineScope) readHost() error {
	m := s.m3m
	key, ok, err := hostKey(m)
	if err != nil || !ok {
		return err
	}
	h := &metal3v1alpha1.BareMetalHost{}
	if err := s.r.Client.Get(s.ctx, key, h); err != nil {
		if apierrors.IsNotFound(err) {
			s.hostLost = true
			return nil
		}
		return fmt.Errorf("reading BareMetalHost %s: %w", key, err)
	}
	if !consumedBy(h.Spec.ConsumerRef, m) {
		s.hostLost = true
		return nil
	}
	s.r.claims.release(key)
	s.host = h
	return nil
}

// updateHost writes a host; its resourceVersion makes a stale write fail
// with a conflict.
func (s *machineScope) updateHost(h *metal3v1alpha1.BareMetalHost, what string) error {
	if err := s.r.Client.Update(s.ctx, h); err != nil {
		if apierrors.IsConflict(err) {
			return operatorkit.WaitOn(infrav1.ReadyCondition, "HostChanged", claimRetry, "BareMetalHost %s/%s changed while %s; trying again", h.Namespace, h.Name, what)
		}
		return fmt.Errorf("%s BareMetalHost %s/%s: %w", what, h.Namespace, h.Name, err)
	}
	return nil
}

// reuseName is the node-reuse label value this machine may take back: its
// control plane's or machine deployment's name, when its template asks for
// node reuse.
func (s *machineScope) reuseName() (string, error) {
	m := s.m3m
	if m.Annotations[clusterv1.TemplateClonedFromGroupKindAnnotation] != infrav1.ClonedFromGroupKind {
		return "", nil
	}
	name := m.Annotations[clusterv1.TemplateClonedFromNameAnnotation]
	if name == "" {
		return "", nil
	}
	t := &infrav1.Metal3MachineTemplate{}
	if err := s.r.Client.Get(s.ctx, types.NamespacedName{Namespace: m.Namespace, Name: name}, t); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("reading Metal3MachineTemplate %s/%s: %w", m.Namespace, name, err)
	}
	if !t.Spec.NodeReuse || s.machine == nil {
		return "", nil
	}
	if _, cp := s.machine.Labels[clusterv1.MachineControlPlaneLabel]; cp {
		return s.machine.Labels[clusterv1.MachineControlPlaneNameLabel], nil
	}
	return s.machine.Labels[clusterv1.MachineDeploymentNameLabel], nil
}

// associate claims a host for the machine.
func (s *machineScope) associate() error {
	m := s.m3m
	if s.hostLost {
		msg := fmt.Sprintf("the BareMetalHost in annotation %s is gone or consumed by another machine", infrav1.HostAnnotation)
		s.conditions().Set(infrav1.AssociateBareMetalHostCondition, metav1.ConditionFalse, infrav1.HostLostReason, msg)
		reason := "HostLost"
		m.Status.FailureReason, m.Status.FailureMessage = &reason, &msg
		return operatorkit.WaitOn(infrav1.ReadyCondition, infrav1.HostLostReason, 0, "%s", msg)
	}
	if s.host != nil {
		s.conditions().Set(infrav1.AssociateBareMetalHostCondition, metav1.ConditionTrue, infrav1.AssociateBareMetalHostSuccessReason,
			"BareMetalHost "+s.host.Name)
		return nil
	}
	sel, err := HostSelector(m.Spec.HostSelector)
	if err != nil {
		msg := err.Error()
		s.conditions().Set(infrav1.AssociateBareMetalHostCondition, metav1.ConditionFalse, infrav1.AssociateBareMetalHostFailedReason, msg)
		return operatorkit.Stallf(infrav1.AssociateBareMetalHostFailedReason, "Metal3Machine %s/%s: %s", m.Namespace, m.Name, msg)
	}
	reuse, err := s.reuseName()
	if err != nil {
		return err
	}
	var hosts metal3v1alpha1.BareMetalHostList
	if err := s.r.Client.List(s.ctx, &hosts, client.InNamespace(m.Namespace)); err != nil {
		return fmt.Errorf("listing BareMetalHosts of namespace %s: %w", m.Namespace, err)
	}
	now := s.r.Clock.Now()
	fd := m.Spec.FailureDomain
	if fd == "" && s.machine != nil {
		fd = s.machine.Spec.FailureDomain
	}
	ch := chooseHost(hosts.Items, chooseRequest{
		machine:       m,
		selector:      sel,
		cluster:       types.NamespacedName{Namespace: s.cluster.Namespace, Name: s.cluster.Name},
		reuse:         reuse,
		failureDomain: fd,
		reserved:      func(h types.NamespacedName) bool { return s.r.claims.heldByOther(h, m.UID, now) },
	})
	if ch.Host == nil {
		return operatorkit.WaitOn(infrav1.AssociateBareMetalHostCondition, infrav1.NoHostAvailableReason, noHostPoll, "%s", ch.Why)
	}
	key := types.NamespacedName{Namespace: ch.Host.Namespace, Name: ch.Host.Name}
	h := ch.Host.DeepCopy()
	if !ch.Again {
		if err := s.claim(h, ch.Reused, now); err != nil {
			return err
		}
	}
	patch := client.MergeFromWithOptions(m.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[infrav1.HostAnnotation] = key.String()
	if err := s.patchMeta(patch); err != nil {
		// The host stays claimed: the next pass finds it by its consumerRef.
		return fmt.Errorf("annotating Metal3Machine %s/%s with its host: %w", m.Namespace, m.Name, err)
	}
	s.host = h
	s.conditions().Set(infrav1.AssociateBareMetalHostCondition, metav1.ConditionTrue, infrav1.AssociateBareMetalHostSuccessReason, "BareMetalHost "+h.Name)
	return nil
}

// claim makes h the machine's: its consumerRef, with an update carrying
// the resourceVersion read (two machines never take one host), and in
// this process a reservation (workers do not race for it).
func (s *machineScope) claim(h *metal3v1alpha1.BareMetalHost, reused bool, now time.Time) error {
	m := s.m3m
	key := types.NamespacedName{Namespace: h.Namespace, Name: h.Name}
	if !s.r.claims.reserve(key, m.UID, now) {
		return operatorkit.WaitOn(infrav1.AssociateBareMetalHostCondition, infrav1.NoHostAvailableReason, claimRetry, "BareMetalHost %s is being claimed by another machine", key)
	}
	h.Spec.ConsumerRef = consumerRef(m)
	if h.Labels == nil {
		h.Labels = map[string]string{}
	}
	h.Labels[clusterv1.ClusterNameLabel] = s.cluster.Name
	delete(h.Labels, NodeReuseLabel)
	if err := s.r.Client.Update(s.ctx, h); err != nil {
		s.r.claims.release(key)
		if apierrors.IsConflict(err) {
			return operatorkit.WaitOn(infrav1.AssociateBareMetalHostCondition, infrav1.NoHostAvailableReason, claimRetry,
				"BareMetalHost %s changed while being claimed; choosing again", key)
		}
		return fmt.Errorf("claiming BareMetalHost %s: %w", key, err)
	}
	how := "claimed"
	if reused {
		how = "claimed again (node reuse)"
	}
	s.event(false, "HostAssociated", "BareMetalHost %s %s", key.Name, how)
	return nil
}

// userData is the Secret given to the host as user-data.
func (s *machineScope) userData() *corev1.SecretReference {
	m := s.m3m
	if m.Spec.UserData != nil && m.Spec.UserData.Name != "" {
		return &corev1.SecretReference{Name: m.Spec.UserData.Name, Namespace: m.Namespace}
	}
	if s.machine != nil && s.machine.Spec.Bootstrap.DataSecretName != nil {
		return &corev1.SecretReference{Name: *s.machine.Spec.Bootstrap.DataSecretName, Namespace: m.Namespace}
	}
	return nil
}

func sameNamespace(ref *corev1.SecretReference, ns string) *corev1.SecretReference {
	if ref == nil || ref.Name == "" {
		return nil
	}
	return &corev1.SecretReference{Name: ref.Name, Namespace: ns}
}

// writeHost gives the host what to provision.
func (s *machineScope) writeHost() error {
	m, h := s.m3m, s.host.DeepCopy()
	// Reconcile refused references to other namespaces (machineReferences):
	// the host is given the Metal3Machine's namespace whatever they say.
	m.Status.UserData = s.userData()
	if m.Spec.DataTemplate == nil {
		m.Status.MetaData = sameNamespace(m.Spec.MetaData, m.Namespace)
		m.Status.NetworkData = sameNamespace(m.Spec.NetworkData, m.Namespace)
	}
	if h.Spec.Image == nil && h.Spec.CustomDeploy == nil {
		switch {
		case m.Spec.Image.URL != "":
			h.Spec.Image = &metal3v1alpha1.Image{URL: m.Spec.Image.URL, Checksum: m.Spec.Image.Checksum}
			if m.Spec.Image.ChecksumType != nil {
				h.Spec.Image.ChecksumType = metal3v1alpha1.ChecksumType(*m.Spec.Image.ChecksumType)
			}
			if m.Spec.Image.DiskFormat != nil {
				f := *m.Spec.Image.DiskFormat
				h.Spec.Image.DiskFormat = &f
			}
		case m.Spec.CustomDeploy != nil && m.Spec.CustomDeploy.Method != "":
			h.Spec.CustomDeploy = &metal3v1alpha1.CustomDeploy{Method: m.Spec.CustomDeploy.Method}
		default:
			return s.invalid("neither spec.image.url nor spec.customDeploy.method is set")
		}
		h.Spec.UserData = m.Status.UserData
		// A host's own metaData and networkData (the site's, for hosts
		// without a data template) stay unless the machine has its own.
		if m.Status.MetaData != nil {
			h.Spec.MetaData = m.Status.MetaData
		}
		if m.Status.NetworkData != nil {
			h.Spec.NetworkData = m.Status.NetworkData
		}
	}
	if mode := m.Spec.AutomatedCleaningMode; mode != nil && *mode != "" {
		h.Spec.AutomatedCleaningMode = metal3v1alpha1.AutomatedCleaningMode(*mode)
	}
	h.Spec.Online = true
	if equalHostSpec(s.host, h) {
		return nil
	}
	if err := s.updateHost(h, "writing the image and data of"); err != nil {
		return err
	}
	s.host = h
	s.event(false, "HostProvisioning", "BareMetalHost %s given image and data", h.Name)
	return nil
}

func equalHostSpec(a, b *metal3v1alpha1.BareMetalHost) bool {
	x, _ := json.Marshal(a.Spec)
	y, _ := json.Marshal(b.Spec)
	return string(x) == string(y)
}

// invalid marks a spec that cannot work (status.failureReason, as Cluster
// API reads it); the machine stalls until a change.
func (s *machineScope) invalid(msg string) error {
	m := s.m3m
	reason := "InvalidConfiguration"
	m.Status.FailureReason, m.Status.FailureMessage = &reason, &msg
	return operatorkit.Stallf(reason, "Metal3Machine %s/%s: %s", m.Namespace, m.Name, msg)
}

// waitingStates are the host states a deprovisioning machine waits out.
func hostBusy(h *metal3v1alpha1.BareMetalHost) bool {
	switch h.Status.Provisioning.State {
	case metal3v1alpha1.StateRegistering, metal3v1alpha1.StateMatchProfile, metal3v1alpha1.StateInspecting,
		metal3v1alpha1.StateReady, metal3v1alpha1.StateAvailable, metal3v1alpha1.StateNone, metal3v1alpha1.StateUnmanaged:
		return false
	case metal3v1alpha1.StateExternallyProvisioned:
		return h.Status.PoweredOn
	}
	return true
}

// reconcileDelete deprovisions and releases the host, then lets the
// Metal3Machine go.
func (s *machineScope) reconcileDelete() error {
	m := s.m3m
	s.conditions().Set(infrav1.ReadyCondition, metav1.ConditionFalse, infrav1.MachineDeletingReason, "deleting: deprovisioning and releasing the host")
	m.Status.Ready = false
	if s.host == nil && !s.hostLost {
		var hosts metal3v1alpha1.BareMetalHostList
		if err := s.r.Client.List(s.ctx, &hosts, client.InNamespace(m.Namespace), client.MatchingFields{hostConsumerIndex: m.Name}); err != nil {
			return fmt.Errorf("listing BareMetalHosts consumed by Metal3Machine %s/%s: %w", m.Namespace, m.Name, err)
		}
		for i := range hosts.Items {
			if consumedBy(hosts.Items[i].Spec.ConsumerRef, m) {
				s.host = &hosts.Items[i]
			}
		}
	}
	if h := s.host; h != nil {
		if err := s.deprovision(h); err != nil {
			return err
		}
	}
	if err := s.deleteDataClaim(); err != nil {
		return err
	}
	if controllerutil.ContainsFinalizer(m, infrav1.MachineFinalizer) {
		patch := client.MergeFromWithOptions(m.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.RemoveFinalizer(m, infrav1.MachineFinalizer)
		if err := s.patchMeta(patch); err != nil {
			return client.IgnoreNotFound(fmt.Errorf("removing the finalizer of Metal3Machine %s/%s: %w", m.Namespace, m.Name, err))
		}
	}
	return nil
}

// deprovision takes the image and data off the host, waits until it is
// deprovisioned, then releases it.
func (s *machineScope) deprovision(host *metal3v1alpha1.BareMetalHost) error {
	m := s.m3m
	h := host.DeepCopy()
	h.Spec.Image, h.Spec.CustomDeploy = nil, nil
	// Only the data this machine put there goes; the host's own stays.
	if m.Status.UserData != nil {
		h.Spec.UserData = nil
	}
	if m.Status.MetaData != nil {
		h.Spec.MetaData = nil
	}
	if m.Status.NetworkData != nil {
		h.Spec.NetworkData = nil
	}
	h.Spec.Online = h.Spec.DisablePowerOff
	if !equalHostSpec(host, h) {
		if err := s.updateHost(h, "deprovisioning"); err != nil {
			return err
		}
		s.event(false, "HostDeprovisioning", "BareMetalHost %s deprovisioning", h.Name)
		return operatorkit.WaitOn(infrav1.HostProvisionedCondition, infrav1.HostDeprovisioningReason, 0, "BareMetalHost %s/%s is deprovisioning", h.Namespace, h.Name)
	}
	if hostBusy(h) {
		return operatorkit.WaitOn(infrav1.HostProvisionedCondition, infrav1.HostDeprovisioningReason, 0, "BareMetalHost %s/%s is %s; waiting until it is available",
			h.Namespace, h.Name, h.Status.Provisioning.State)
	}
	reuse, err := s.reuseName()
	if err != nil {
		return err
	}
	clusterName := m.Labels[clusterv1.ClusterNameLabel]
	h.Spec.ConsumerRef = nil
	if reuse != "" && s.cluster != nil && s.cluster.DeletionTimestamp.IsZero() {
		h.Spec.ConsumerRef = reuseConsumer(types.NamespacedName{Namespace: s.cluster.Namespace, Name: s.cluster.Name})
		if h.Labels == nil {
			h.Labels = map[string]string{}
		}
		h.Labels[NodeReuseLabel] = reuse
	}
	if clusterName != "" && h.Labels[clusterv1.ClusterNameLabel] == clusterName && h.Spec.ConsumerRef == nil {
		delete(h.Labels, clusterv1.ClusterNameLabel)
	}
	if h.Annotations[metal3v1alpha1.PausedAnnotation] == PausedAnnotationValue {
		delete(h.Annotations, metal3v1alpha1.PausedAnnotation)
	}
	delete(h.Annotations, clusterctlv1.BlockMoveAnnotation)
	if err := s.updateHost(h, "releasing"); err != nil {
		return err
	}
	s.event(false, "HostReleased", "BareMetalHost %s released", h.Name)
	return nil
}

// pause marks the claimed host paused with a copy of its status, so that
// a move carries both, and in the same write lifts the host's block on a
// clusterctl move (unpauseHost): clusterctl pauses the Cluster, then waits
// for every block-move annotation to go before it moves anything, so no
// host leaves without its status (a host arriving without one would be
// registered, inspected and provisioned anew by the target's Ironic).
func (s *machineScope) pause() error {
	s.conditions().Set(infrav1.PausedCondition, metav1.ConditionTrue, "Paused", "the Cluster or the Metal3Machine is paused")
	h := s.host
	if h == nil {
		return nil
	}
	_, paused := h.Annotations[metal3v1alpha1.PausedAnnotation]
	_, hasStatus := h.Annotations[metal3v1alpha1.StatusAnnotation]
	_, blocked := h.Annotations[clusterctlv1.BlockMoveAnnotation]
	if paused && !blocked {
		return nil
	}
	h = h.DeepCopy()
	if h.Annotations == nil {
		h.Annotations = map[string]string{}
	}
	if !paused {
		h.Annotations[metal3v1alpha1.PausedAnnotation] = PausedAnnotationValue
	}
	if !paused || !hasStatus {
		st, err := json.Marshal(h.Status)
		if err != nil {
			return fmt.Errorf("encoding the status of BareMetalHost %s/%s: %w", h.Namespace, h.Name, err)
		}
		h.Annotations[metal3v1alpha1.StatusAnnotation] = string(st)
	}
	delete(h.Annotations, clusterctlv1.BlockMoveAnnotation)
	if err := s.updateHost(h, "pausing"); err != nil {
		return err
	}
	s.host = h
	return nil
}

// unpauseHost removes the pause this provider set, and marks the claimed
// host as blocking a clusterctl move until pause has copied its status
// (clusterctl's block-move annotation).
func (s *machineScope) unpauseHost() error {
	h := s.host
	if h == nil {
		return nil
	}
	ours := h.Annotations[metal3v1alpha1.PausedAnnotation] == PausedAnnotationValue
	_, blocked := h.Annotations[clusterctlv1.BlockMoveAnnotation]
	if !ours && blocked {
		return nil
	}
	h = h.DeepCopy()
	if h.Annotations == nil {
		h.Annotations = map[string]string{}
	}
	delete(h.Annotations, metal3v1alpha1.PausedAnnotation)
	h.Annotations[clusterctlv1.BlockMoveAnnotation] = PausedAnnotationValue
	if err := s.updateHost(h, "unpausing"); err != nil {
		return err
	}
	s.host = h
	return nil
}
