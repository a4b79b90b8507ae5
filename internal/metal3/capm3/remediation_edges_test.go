package capm3

import (
	"context"
	"fmt"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
)

// TestRemediationEdges runs the Metal3Remediation controller against a real
// API server, with no BMC behind the hosts (their status is written by the
// test): a strategy other than Reboot and a host that is to be off are
// refused (phase Failed) without touching the host; a remediation deleted
// while it keeps its host off removes the power-off annotation, even with
// its Machine gone.
func TestRemediationEdges(t *testing.T) {
	const ns = "site"
	c, create := startReconciler(t, ns, func(ctx context.Context, mgr ctrl.Manager) error {
		return (&RemediationReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("capm3-test")}).SetupWithManager(ctx, mgr)
	})
	ctx := context.Background()
	// machineOn makes a host (online as given), its Metal3Machine and the
	// Machine that owns it, and returns the Machine.
	machineOn := func(name string, online bool) *clusterv1.Machine {
		t.Helper()
		h := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: metal3v1alpha1.BareMetalHostSpec{Online: online, BMC: metal3v1alpha1.BMCDetails{Address: "redfish+http://127.0.0.1:1/redfish/v1/Systems/1", CredentialsName: "bmc"}}}
		create(h)
		h.Status.PoweredOn = online
		if err := c.Status().Update(ctx, h); err != nil {
			t.Fatal(err)
		}
		create(&infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{infrav1.HostAnnotation: ns + "/" + name}}})
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: clusterv1.MachineSpec{ClusterName: "c1", Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("bootstrap")}, InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name}}}
		create(m)
		return m
	}
	remediation := func(m *clusterv1.Machine, strategy infrav1.RemediationType) *infrav1.Metal3Remediation {
		t.Helper()
		r := &infrav1.Metal3Remediation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: m.Name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}}},
			Spec: infrav1.Metal3RemediationSpec{Strategy: &infrav1.RemediationStrategy{Type: strategy, RetryLimit: 1}}}
		create(r)
		return r
	}
	until := func(what string, cond func() (bool, string)) {
		t.Helper()
		last := ""
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			ok, msg := cond()
			last = msg
			return ok, nil
		}); err != nil {
			t.Fatalf("%s: %v; last: %s", what, err, last)
		}
	}
	phase := func(name, want string) func() (bool, string) {
		return func() (bool, string) {
			r := &infrav1.Metal3Remediation{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, r); err != nil {
				return false, err.Error()
			}
			return r.Status.Phase == want, fmt.Sprintf("phase %q", r.Status.Phase)
		}
	}
	host := func(name string) *metal3v1alpha1.BareMetalHost {
		t.Helper()
		h := &metal3v1alpha1.BareMetalHost{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
			t.Fatal(err)
		}
		return h
	}

	t.Run("a strategy other than Reboot is refused", func(t *testing.T) {
		remediation(machineOn("other", true), "Reprovision")
		until("phase Failed", phase("other", infrav1.RemediationPhaseFailed))
		if h := host("other"); len(h.Annotations) != 0 {
			t.Errorf("host annotated: %v", h.Annotations)
		}
	})
	t.Run("a host that is to be off is not rebooted", func(t *testing.T) {
		remediation(machineOn("offline", false), infrav1.RebootRemediationStrategy)
		until("phase Failed", phase("offline", infrav1.RemediationPhaseFailed))
		if h := host("offline"); len(h.Annotations) != 0 {
			t.Errorf("host annotated: %v", h.Annotations)
		}
	})
	t.Run("deleted while the host is kept off: the annotation goes, even with the Machine gone", func(t *testing.T) {
		m := machineOn("kept", true)
		r := remediation(m, infrav1.RebootRemediationStrategy)
		key := RemediationPowerOffPrefix + r.Name
		// The host stays on (no BMC): the remediation waits with the
		// annotation set and its finalizer on.
		until("host annotated, remediation Running", func() (bool, string) {
			_, ok := host("kept").Annotations[key]
			rr := &infrav1.Metal3Remediation{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(r), rr); err != nil {
				return false, err.Error()
			}
			return ok && rr.Status.Phase == infrav1.RemediationPhaseRunning && len(rr.Finalizers) == 1,
				fmt.Sprintf("annotated %v, phase %q, finalizers %v", ok, rr.Status.Phase, rr.Finalizers)
		})
		if err := c.Delete(ctx, m); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, r); err != nil {
			t.Fatal(err)
		}
		until("remediation gone", func() (bool, string) {
			err := c.Get(ctx, client.ObjectKeyFromObject(r), &infrav1.Metal3Remediation{})
			return apierrors.IsNotFound(err), fmt.Sprint(err)
		})
		if _, ok := host("kept").Annotations[key]; ok {
			t.Errorf("host kept annotation %s after its remediation was deleted", key)
		}
	})
}
