package capm3

import (
	"errors"
	"fmt"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// ProviderID is the providerID of a machine on host: metal3://<host uid>.
func ProviderID(h *metal3v1alpha1.BareMetalHost) string {
	return infrav1.ProviderIDPrefix + string(h.UID)
}

// providerIDNames reports whether id can name host h for machine m, in
// either upstream form: metal3://<host uid> or
// metal3://<namespace>/<host>/<machine>. A uid that is not h's is
// accepted: a host moved to another cluster gets a new uid, and the
// machine's annotation, not the uid, says which host is its.
func providerIDNames(id string, h *metal3v1alpha1.BareMetalHost, m *infrav1.Metal3Machine) bool {
	rest, ok := strings.CutPrefix(id, infrav1.ProviderIDPrefix)
	if !ok || rest == "" {
		return false
	}
	if !strings.Contains(rest, "/") {
		return true
	}
	return rest == h.Namespace+"/"+h.Name+"/"+m.Name
}

// legacyUID is the host uid of a metal3://<uid> providerID, "" otherwise.
func legacyUID(id string) string {
	rest, ok := strings.CutPrefix(id, infrav1.ProviderIDPrefix)
	if !ok || strings.Contains(rest, "/") {
		return ""
	}
	return rest
}

// nodeAddresses are the host's NIC addresses and hostname, as the
// Metal3Machine reports them.
func nodeAddresses(h *metal3v1alpha1.BareMetalHost) []clusterv1.MachineAddress {
	var out []clusterv1.MachineAddress
	d := h.Status.HardwareDetails
	if d == nil {
		return nil
	}
	for _, nic := range d.NIC {
		if nic.IP != "" {
			out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: nic.IP})
		}
	}
	if d.Hostname != "" {
		out = append(out,
			clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: d.Hostname},
			clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: d.Hostname})
	}
	return out
}

// provisioned waits for the host to be provisioned, then sets the
// providerID (on the workload Node too when no cloud provider does),
// addresses and ready.
func (s *machineScope) provisioned() error {
	m, h := s.m3m, s.host
	if h.Status.ErrorType != "" {
		msg := fmt.Sprintf("BareMetalHost %s/%s: %s: %s", h.Namespace, h.Name, h.Status.ErrorType, h.Status.ErrorMessage)
		return operatorkit.WaitOn(infrav1.HostProvisionedCondition, infrav1.HostErrorReason, 0, "%s", msg)
	}
	if st := h.Status.Provisioning.State; st != metal3v1alpha1.StateProvisioned && st != metal3v1alpha1.StateExternallyProvisioned {
		if st == "" {
			st = "not yet registered"
		}
		return operatorkit.WaitOn(infrav1.HostProvisionedCondition, infrav1.HostProvisioningReason, 0, "BareMetalHost %s/%s is %s", h.Namespace, h.Name, st)
	}
	s.conditions().Set(infrav1.HostProvisionedCondition, metav1.ConditionTrue, infrav1.HostProvisionedReason, "BareMetalHost "+h.Name+" is provisioned")
	m.Status.Addresses = nodeAddresses(h)

	id := ProviderID(h)
	if cur := m.Spec.ProviderID; cur != nil && *cur != "" {
		if !providerIDNames(*cur, h, m) {
			return s.invalid(fmt.Sprintf("spec.providerID %q does not name BareMetalHost %s", *cur, h.Name))
		}
		id = *cur
	}
	// Once ready with a providerID, the Node is not looked up again: only a
	// machine that is not yet ready (new, or moved) needs it.
	settled := m.Status.Ready && m.Spec.ProviderID != nil && *m.Spec.ProviderID == id
	if s.m3c != nil && s.m3c.Spec.SetsNodeProviderID() && !settled {
		if err := s.setNodeProviderID(id); err != nil {
			return err
		}
	}
	if m.Spec.ProviderID == nil || *m.Spec.ProviderID != id {
		patch := client.MergeFromWithOptions(m.DeepCopy(), client.MergeFromWithOptimisticLock{})
		m.Spec.ProviderID = &id
		if err := s.patchMeta(patch); err != nil {
			return fmt.Errorf("setting spec.providerID of Metal3Machine %s/%s: %w", m.Namespace, m.Name, err)
		}
	}
	if !m.Status.Ready {
		s.event(false, "Provisioned", "BareMetalHost %s provisioned; providerID %s", h.Name, id)
	}
	provisioned := true
	m.Status.Ready = true
	m.Status.Initialization.Provisioned = &provisioned
	m.Status.FailureReason, m.Status.FailureMessage = nil, nil
	s.conditions().Set(infrav1.ReadyCondition, metav1.ConditionTrue, infrav1.ProvisionedReason, "BareMetalHost "+h.Name+" provisioned")
	return nil
}

// setNodeProviderID finds the workload cluster's Node of the host by its
// metal3.io/uuid label and sets its spec.providerID.
func (s *machineScope) setNodeProviderID(id string) error {
	m, h := s.m3m, s.host
	cluster := types.NamespacedName{Namespace: s.cluster.Namespace, Name: s.cluster.Name}
	c, err := s.r.Workloads.Client(s.ctx, cluster)
	if err != nil {
		if errors.Is(err, errNoKubeconfig) {
			return operatorkit.WaitOn(infrav1.ReadyCondition, infrav1.WaitingForNodeReason, waitPoll, "%v", err)
		}
		return err
	}
	// The Node carries the uid of the host it booted on: this host's, or,
	// after a move, the uid in the providerID the machine already has.
	uids := []string{string(h.UID)}
	if old := legacyUID(id); old != "" && old != string(h.UID) {
		uids = append(uids, old)
	}
	req, err := labels.NewRequirement(infrav1.UUIDLabel, selection.In, uids)
	if err != nil {
		return fmt.Errorf("selecting Nodes by %s: %w", infrav1.UUIDLabel, err)
	}
	var nodes corev1.NodeList
	if err := c.List(s.ctx, &nodes, client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*req)}); err != nil {
		return operatorkit.WaitOn(infrav1.ReadyCondition, infrav1.WaitingForNodeReason, waitPoll, "listing the Nodes of workload cluster %s: %v", cluster, err)
	}
	switch len(nodes.Items) {
	case 0:
		return operatorkit.WaitOn(infrav1.ReadyCondition, infrav1.WaitingForNodeReason, waitPoll,
			"no Node of workload cluster %s has label %s=%s yet", cluster, infrav1.UUIDLabel, h.UID)
	case 1:
	default:
		return s.invalid(fmt.Sprintf("%d Nodes of workload cluster %s have label %s=%s", len(nodes.Items), cluster, infrav1.UUIDLabel, strings.Join(uids, " or ")))
	}
	node := &nodes.Items[0]
	switch node.Spec.ProviderID {
	case id:
		return nil
	case "":
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.ProviderID = id
		if err := c.Patch(s.ctx, node, patch); err != nil {
			return fmt.Errorf("setting spec.providerID of Node %s in workload cluster %s: %w", node.Name, cluster, err)
		}
		s.event(false, "NodeProviderID", "Node %s of workload cluster %s given providerID %s", node.Name, cluster.Name, id)
		return nil
	default:
		if providerIDNames(node.Spec.ProviderID, h, m) {
			return nil
		}
		return s.invalid(fmt.Sprintf("Node %s of workload cluster %s has providerID %q, not %q", node.Name, cluster, node.Spec.ProviderID, id))
	}
}
