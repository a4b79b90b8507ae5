package capm3

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
)

// TestMachineHostSelectorOperatorRefused: a Metal3Machine whose
// hostSelector has an operator the CRD accepts but no selector does
// (metav1's DoesNotExist) fails at once, though its Machine, Cluster,
// bootstrap data and a matching available host are all there: its
// failureReason is InvalidConfiguration, its failureMessage names the
// field and the operator, it gets no finalizer and the host is not
// claimed. The same selector with "!" claims the host, so the site would
// have given the first machine one.
func TestMachineHostSelectorOperatorRefused(t *testing.T) {
	const ns = "site"
	c, create := startReconciler(t, ns, func(ctx context.Context, mgr ctrl.Manager) error {
		return (&MachineReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("capm3-test")}).SetupWithManager(ctx, mgr)
	})
	ctx := context.Background()
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: "c1"}}}
	create(cluster)
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	if err := c.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	host := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "node-1", Labels: map[string]string{"rack": "r1"}},
		Spec: metal3v1alpha1.BareMetalHostSpec{BMC: metal3v1alpha1.BMCDetails{Address: "redfish+http://127.0.0.1:1/redfish/v1/Systems/1", CredentialsName: "bmc"}}}
	create(host)
	host.Status.Provisioning.State = metal3v1alpha1.StateAvailable
	host.Status.OperationalStatus = metal3v1alpha1.OperationalStatusOK
	if err := c.Status().Update(ctx, host); err != nil {
		t.Fatal(err)
	}
	create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bootstrap"}, Data: map[string][]byte{"value": []byte("#cloud-config\n")}})
	machine := func(name string, absence infrav1.HostSelectorRequirement) *infrav1.Metal3Machine {
		t.Helper()
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
			Spec: clusterv1.MachineSpec{ClusterName: "c1", Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("bootstrap")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name}}}
		create(m)
		m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID}}},
			Spec: infrav1.Metal3MachineSpec{Image: infrav1.Image{URL: "http://img.test/node.iso", DiskFormat: ptr.To("live-iso")},
				HostSelector: infrav1.HostSelector{MatchExpressions: []infrav1.HostSelectorRequirement{{Key: "rack", Operator: "In", Values: []string{"r1"}}, absence}}}}
		create(m3m)
		return m3m
	}
	poll := func(what string, cond func(ctx context.Context) (bool, string)) {
		t.Helper()
		last := ""
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			// The outer ctx: at the deadline, the last message is still the object's.
			ok, msg := cond(ctx)
			last = msg
			return ok, nil
		}); err != nil {
			t.Fatalf("%s: %v; last: %s", what, err, last)
		}
	}

	refused := machine("refused", infrav1.HostSelectorRequirement{Key: "retired", Operator: "DoesNotExist"})
	const want = `spec.hostSelector.matchExpressions[1].operator: "DoesNotExist" is not one of`
	poll("the machine refused", func(ctx context.Context) (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(refused), refused); err != nil {
			return false, err.Error()
		}
		msg := ptr.Deref(refused.Status.FailureMessage, "")
		return ptr.Deref(refused.Status.FailureReason, "") == "InvalidConfiguration" && strings.Contains(msg, want) && refused.Status.Phase == infrav1.PhaseFailed,
			fmt.Sprintf("phase %s, failure %v: %s", refused.Status.Phase, ptr.Deref(refused.Status.FailureReason, ""), msg)
	})
	if len(refused.Finalizers) != 0 {
		t.Errorf("the refused machine has finalizers %v", refused.Finalizers)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(host), host); err != nil {
		t.Fatal(err)
	}
	if host.Spec.ConsumerRef != nil {
		t.Errorf("the host was claimed for the refused machine: %+v", host.Spec.ConsumerRef)
	}

	chosen := machine("chosen", infrav1.HostSelectorRequirement{Key: "retired", Operator: "!"})
	poll("the host claimed with !", func(ctx context.Context) (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(host), host); err != nil {
			return false, err.Error()
		}
		return host.Spec.ConsumerRef != nil && host.Spec.ConsumerRef.Name == chosen.Name, fmt.Sprintf("consumerRef %+v", host.Spec.ConsumerRef)
	})
}
