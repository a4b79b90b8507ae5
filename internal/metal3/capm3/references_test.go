package capm3_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// TestMachineReferencesToOtherNamespaces: clusterctl init installs the
// admission policies of config/metal3; with their bindings removed (a
// cluster where someone took them away), a Metal3Machine whose userData,
// metaData, networkData or dataTemplate names another namespace is refused
// by the controller: its failureMessage names the field, it gets no
// finalizer, no host is claimed for it and nothing reaches a BMC.
func TestMachineReferencesToOtherNamespaces(t *testing.T) {
	hosts := emulator.Generate(1, 1)
	s := startSite(t, hosts, nil)
	const ns, cluster, victimNS, victim = "tenant", "tenant", "victim", "VICTIM-secret-value"

	var policies admissionv1.ValidatingAdmissionPolicyList
	if err := s.c.List(s.ctx, &policies); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range policies.Items {
		names = append(names, p.Name)
	}
	for _, want := range []string{"metal3-operator-baremetalhost-references", "metal3-operator-metal3machine-references"} {
		if !slices.Contains(names, want) {
			t.Fatalf("clusterctl init installed the policies %v, not %s", names, want)
		}
	}
	var bindings admissionv1.ValidatingAdmissionPolicyBindingList
	if err := s.c.List(s.ctx, &bindings); err != nil {
		t.Fatal(err)
	}
	for i := range bindings.Items {
		if strings.HasPrefix(bindings.Items[i].Name, "metal3-operator-") {
			if err := s.c.Delete(s.ctx, &bindings.Items[i]); err != nil {
				t.Fatal(err)
			}
		}
	}

	s.namespace(ns)
	s.namespace(victimNS)
	for _, sec := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: victimNS, Name: "victim"}, Data: map[string][]byte{"value": []byte(victim), "metaData": []byte("v: " + victim), "networkData": []byte(victim)}},
	} {
		if err := s.c.Create(s.ctx, sec); err != nil {
			t.Fatal(err)
		}
	}
	s.hosts(ns, hosts, nil)
	s.workerCluster(ns, cluster)
	s.step("policies' bindings removed, host available")

	tests := []struct {
		field string
		set   func(*infrav1.Metal3MachineSpec)
	}{
		{"spec.userData", func(m *infrav1.Metal3MachineSpec) {
			m.UserData = &corev1.SecretReference{Name: "victim", Namespace: victimNS}
		}},
		{"spec.metaData", func(m *infrav1.Metal3MachineSpec) {
			m.MetaData = &corev1.SecretReference{Name: "victim", Namespace: victimNS}
		}},
		{"spec.networkData", func(m *infrav1.Metal3MachineSpec) {
			m.NetworkData = &corev1.SecretReference{Name: "victim", Namespace: victimNS}
		}},
		{"spec.dataTemplate", func(m *infrav1.Metal3MachineSpec) {
			m.DataTemplate = &corev1.ObjectReference{Name: "tpl", Namespace: victimNS}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			name := fmt.Sprintf("m-%d", i)
			spec := s.machineSpec()
			tt.set(&spec)
			// The API server drops the policies a moment after their
			// bindings are gone.
			err := wait.PollUntilContextTimeout(s.ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
				err := s.worker(ns, cluster, name, spec)
				if err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
					return false, nil
				}
				return true, err
			})
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(`%s.namespace: must be the Metal3Machine's namespace %q, not %q`, tt.field, ns, victimNS)
			until(t, s, name+" refused", func() (bool, string) {
				m := &infrav1.Metal3Machine{}
				if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
					return false, err.Error()
				}
				msg := ptr.Deref(m.Status.FailureMessage, "")
				return strings.Contains(msg, want), msg
			})
			m := &infrav1.Metal3Machine{}
			if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
				t.Fatal(err)
			}
			if len(m.Finalizers) != 0 {
				t.Errorf("a refused Metal3Machine has finalizers %v", m.Finalizers)
			}
			if _, ok := m.Annotations[infrav1.HostAnnotation]; ok {
				t.Errorf("a refused Metal3Machine was given a host: %v", m.Annotations)
			}
			h := s.host(ns, hosts[0].Name)
			if h.Spec.ConsumerRef != nil || h.Spec.Image != nil || h.Spec.UserData != nil {
				t.Errorf("the host was claimed for a refused Metal3Machine: consumerRef %+v image %+v userData %+v", h.Spec.ConsumerRef, h.Spec.Image, h.Spec.UserData)
			}
			// Nothing was provisioned: the host's disk (erased by
			// Ironic's cleaning when the host became available) holds no
			// config drive.
			if d, err := configdrive.ReadFile(s.emu.DiskPath(hosts[0].Name, "sda")); err == nil {
				t.Errorf("the host's disk holds a config drive for a refused Metal3Machine (%d bytes of user-data)", len(d.UserData))
			}
			if st, _ := s.emu.State(hosts[0].Name); st.Media.Inserted || st.PowerOn {
				t.Errorf("the host was booted for a refused Metal3Machine: %+v", st)
			}
			// Deleted, it goes: it holds nothing.
			if err := s.c.Delete(s.ctx, m); err != nil {
				t.Fatal(err)
			}
			until(t, s, name+" gone", func() (bool, string) {
				err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, &infrav1.Metal3Machine{})
				return apierrors.IsNotFound(err), fmt.Sprint(err)
			})
		})
	}
}

// until polls cond for up to a minute, failing the (sub)test t.
func until(t *testing.T, s *site, what string, cond func() (bool, string)) {
	t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(s.ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, msg := cond()
		last = msg
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last: %s", what, err, last)
	}
}
