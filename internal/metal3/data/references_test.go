package data_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
)

// TestDataReferencesToOtherNamespaces: a Metal3Data whose template, claim,
// metaData or networkData names another namespace (where a template of
// that name exists) is refused by the controller with no admission policy
// installed: its status names the field, it gets no finalizer and no Secret
// is rendered.
func TestDataReferencesToOtherNamespaces(t *testing.T) {
	startManager(t)
	other := newSite(t, "other")
	other.template("tpl", "clusterName: test1\nmetaData:\n  strings: [{key: k, value: other-namespace-value}]\n")
	tests := []struct {
		field string
		set   func(d *infrav1.Metal3Data, ns string)
	}{
		{"spec.template", func(d *infrav1.Metal3Data, ns string) { d.Spec.Template.Namespace = ns }},
		{"spec.claim", func(d *infrav1.Metal3Data, ns string) { d.Spec.Claim.Namespace = ns }},
		{"spec.metaData", func(d *infrav1.Metal3Data, ns string) {
			d.Spec.MetaData = &corev1.SecretReference{Name: "m-metadata", Namespace: ns}
		}},
		{"spec.networkData", func(d *infrav1.Metal3Data, ns string) {
			d.Spec.NetworkData = &corev1.SecretReference{Name: "m-networkdata", Namespace: ns}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			s := newSite(t, "xns")
			d := &infrav1.Metal3Data{ObjectMeta: metav1.ObjectMeta{Name: "tpl-0", Labels: map[string]string{clusterv1.ClusterNameLabel: "test1"}},
				Spec: infrav1.Metal3DataSpec{Template: corev1.ObjectReference{Name: "tpl"}, Claim: corev1.ObjectReference{Name: "m"}}}
			tt.set(d, other.ns)
			s.create(d)
			want := fmt.Sprintf(`%s.namespace: must be the Metal3Data's namespace %q, not %q`, tt.field, s.ns, other.ns)
			eventually(t, "refused", func() (bool, error) {
				got := &infrav1.Metal3Data{}
				if err := s.get("tpl-0", got); err != nil {
					return false, err
				}
				msg := ptr.Deref(got.Status.ErrorMessage, "")
				if !strings.Contains(msg, want) {
					return false, fmt.Errorf("status %q, want %q", msg, want)
				}
				if got.Status.Ready || slices.Contains(got.Finalizers, infrav1.DataFinalizer) {
					return false, fmt.Errorf("a refused Metal3Data is ready %v or has the finalizer %v", got.Status.Ready, got.Finalizers)
				}
				return true, nil
			})
			var secs corev1.SecretList
			if err := env.Client.List(context.Background(), &secs, client.InNamespace(s.ns)); err != nil {
				t.Fatal(err)
			}
			if len(secs.Items) != 0 {
				t.Errorf("a refused Metal3Data rendered %d Secrets", len(secs.Items))
			}
		})
	}
}

// TestClaimsNamingOtherNamespaces: an IPClaim whose spec.pool, and a
// Metal3DataClaim whose spec.template, names another namespace is never
// served by the pool or template there, nor by the one of that name in its
// own namespace, which writes why in the claim's status.errorMessage,
// naming the field.
func TestClaimsNamingOtherNamespaces(t *testing.T) {
	startManager(t)
	other := newSite(t, "other")
	s := newSite(t, "tenant")
	tpl := "clusterName: test1\nmetaData:\n  strings: [{key: k, value: v}]\n"
	for _, site := range []*site{other, s} {
		site.pool("pool", "10.1.0.10", "10.1.0.20")
		site.template("tpl", tpl)
	}
	s.create(
		&ipamv1.IPClaim{ObjectMeta: metav1.ObjectMeta{Name: "ipc"}, Spec: ipamv1.IPClaimSpec{Pool: corev1.ObjectReference{Name: "pool", Namespace: other.ns}}},
		&infrav1.Metal3DataClaim{ObjectMeta: metav1.ObjectMeta{Name: "dc"}, Spec: infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: "tpl", Namespace: other.ns}}},
	)
	tests := []struct {
		name, field, kind string
		obj               client.Object
		status            func(client.Object) (*string, bool)
	}{
		{"ipc", "spec.pool", "IPClaim", &ipamv1.IPClaim{}, func(o client.Object) (*string, bool) {
			c := o.(*ipamv1.IPClaim)
			return c.Status.ErrorMessage, c.Status.Address != nil
		}},
		{"dc", "spec.template", "Metal3DataClaim", &infrav1.Metal3DataClaim{}, func(o client.Object) (*string, bool) {
			c := o.(*infrav1.Metal3DataClaim)
			return c.Status.ErrorMessage, c.Status.RenderedData != nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			want := fmt.Sprintf(`%s.namespace: must be the %s's namespace %q, not %q`, tt.field, tt.kind, s.ns, other.ns)
			eventually(t, "refused", func() (bool, error) {
				if err := s.get(tt.name, tt.obj); err != nil {
					return false, err
				}
				msg, served := tt.status(tt.obj)
				if served {
					return false, fmt.Errorf("served: %+v", tt.obj)
				}
				return strings.Contains(ptr.Deref(msg, ""), want), fmt.Errorf("status %q, want %q", ptr.Deref(msg, ""), want)
			})
		})
	}
	for _, site := range []*site{other, s} {
		pool := &ipamv1.IPPool{}
		if err := site.get("pool", pool); err != nil {
			t.Fatal(err)
		}
		tmpl := &infrav1.Metal3DataTemplate{}
		if err := site.get("tpl", tmpl); err != nil {
			t.Fatal(err)
		}
		if len(pool.Status.Allocations) != 0 || len(tmpl.Status.Indexes) != 0 {
			t.Errorf("namespace %s: pool allocations %v, template indexes %v; want none", site.ns, pool.Status.Allocations, tmpl.Status.Indexes)
		}
	}
}

// TestDataHostOfOtherNamespace: a Metal3Machine whose host annotation
// names a BareMetalHost of another namespace does not get that host's NICs,
// labels or annotations rendered into its Secrets: its Metal3Data is
// refused, naming the annotation.
func TestDataHostOfOtherNamespace(t *testing.T) {
	startManager(t)
	other := newSite(t, "other")
	const otherMAC = "52:54:00:0e:0e:0e"
	other.template("tpl", "clusterName: test1\nmetaData:\n  fromHostInterfaces: [{key: mac, interface: eth0}]\n")
	other.machine("w", "tpl", otherMAC)
	s := newSite(t, "tenant")
	s.template("tpl", "clusterName: test1\nmetaData:\n  fromHostInterfaces: [{key: mac, interface: eth0}]\n")
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "machine-w", Labels: map[string]string{clusterv1.ClusterNameLabel: "test1"}}, Spec: clusterv1.MachineSpec{
		ClusterName:       "test1",
		Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("bootstrap")},
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: "w"},
	}}
	s.create(m)
	m3m := &infrav1.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "w",
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "test1"},
			Annotations:     map[string]string{infrav1.HostAnnotation: other.ns + "/host-w"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}},
		},
		Spec: infrav1.Metal3MachineSpec{DataTemplate: &corev1.ObjectReference{Name: "tpl"}},
	}
	s.create(m3m)
	s.create(&infrav1.Metal3DataClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:            "w",
			Labels:          map[string]string{clusterv1.ClusterNameLabel: "test1"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Machine", Name: "w", UID: m3m.UID, Controller: ptr.To(true)}},
		},
		Spec: infrav1.Metal3DataClaimSpec{Template: corev1.ObjectReference{Name: "tpl"}},
	})
	want := fmt.Sprintf(`metadata.annotations[%s].namespace: must be the Metal3Machine's namespace %q, not %q`, infrav1.HostAnnotation, s.ns, other.ns)
	eventually(t, "refused", func() (bool, error) {
		d := &infrav1.Metal3Data{}
		if err := s.get("tpl-0", d); err != nil {
			return false, err
		}
		msg := ptr.Deref(d.Status.ErrorMessage, "")
		return strings.Contains(msg, want) && !d.Status.Ready, fmt.Errorf("status %q, want %q", msg, want)
	})
	var secs corev1.SecretList
	if err := env.Client.List(context.Background(), &secs, client.InNamespace(s.ns)); err != nil {
		t.Fatal(err)
	}
	for _, sec := range secs.Items {
		for k, v := range sec.Data {
			if strings.Contains(strings.ToLower(string(v)), otherMAC) {
				t.Errorf("Secret %s key %s holds the other namespace's host's MAC", sec.Name, k)
			}
		}
	}
}
