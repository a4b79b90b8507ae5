package metal3operator

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/metal3/metal3test"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

const providerDocs = `apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata: {name: pool, namespace: metal3}
spec:
  clusterName: c1
  namePrefix: c1-pool
  pools: [{start: 10.9.0.10, end: 10.9.0.20}]
  prefix: 24
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata: {name: tpl, namespace: metal3}
spec:
  clusterName: c1
  metaData:
    objectNames: [{key: name, object: machine}]
    ipAddressesFromIPPool: [{key: ip, name: pool}]
`

// TestRBACIsEnoughForTheProvider runs every controller as the operator's
// ServiceAccount with only config/metal3/rbac, and plays Cluster API's
// part (owner references, infrastructure provisioned, bootstrap data):
// a Metal3Cluster becomes ready, a Metal3Machine with a data template
// claims the host, gets an address from the pool, provisions it through
// the emulator and is ready; deleting it releases the host. Any missing
// permission fails the test.
func TestRBACIsEnoughForTheProvider(t *testing.T) {
	capiCRDs := filepath.Join(capienv.ModuleDir(t), "core", "config", "crd", "bases")
	env := testenv.StartAPI(t, testenv.Options{
		CRDDirs:     []string{"config/metal3/crd/bases", capiCRDs},
		AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme, infrav1.AddToScheme, ipamv1.AddToScheme, clusterv1.AddToScheme},
	})
	ctx := context.Background()
	c := env.Client
	hosts := emulator.Generate(1, 1)
	emu := startRBACSite(t, env, "pw-rbac-capm3", hosts)
	o := DefaultOptions()
	o.ProbeAddr = "0"
	// The conversion webhook's keeper sets the CRDs as the ServiceAccount
	// too; v1beta1 objects are read and written through it.
	webhook := testenv.FreeAddr(t)
	o.Conversion = operatorkit.ConversionWebhook{Addr: webhook, URL: "https://" + webhook}
	runAsOperator(t, env, o)
	metal3test.WaitConversion(t, c, o.Conversion.URL)

	// The host, available.
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "bmc"}, Data: map[string][]byte{"username": []byte("admin"), "password": []byte("pw-rbac-capm3")}}
	host := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "node-1"},
		Spec: metal3v1alpha1.BareMetalHostSpec{BMC: metal3v1alpha1.BMCDetails{Address: emu.Address(hosts[0].Name), CredentialsName: "bmc"}, BootMACAddress: hosts[0].NICs[0].MAC}}
	for _, obj := range []client.Object{sec, host} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	poll := func(what string, cond func() (bool, string)) {
		t.Helper()
		last := ""
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 90*time.Second, true, func(context.Context) (bool, error) {
			ok, msg := cond()
			last = msg
			return ok, nil
		}); err != nil {
			t.Fatalf("%s as the ServiceAccount: %v; last: %s", what, err, last)
		}
	}
	poll("host available", func() (bool, string) {
		h := &metal3v1alpha1.BareMetalHost{}
		_ = c.Get(ctx, client.ObjectKeyFromObject(host), h)
		return h.Status.Provisioning.State == metal3v1alpha1.StateAvailable, string(h.Status.Provisioning.State)
	})

	// Cluster API's part: the Cluster owning its Metal3Cluster.
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "c1"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: "c1"}}}
	if err := c.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	owner := func(kind, name string, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: kind, Name: name, UID: types.UID(uid)}}
	}
	m3c := &infrav1.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "c1", OwnerReferences: owner("Cluster", "c1", string(cluster.UID))},
		Spec: infrav1.Metal3ClusterSpec{APIEndpoint: "https://10.9.0.1:6443", CloudProviderEnabled: ptr.To(true)}}
	if err := c.Create(ctx, m3c); err != nil {
		t.Fatal(err)
	}
	poll("Metal3Cluster ready", func() (bool, string) {
		_ = c.Get(ctx, client.ObjectKeyFromObject(m3c), m3c)
		return m3c.Status.Ready && m3c.Spec.ControlPlaneEndpoint.Port == 6443, fmtStatus(m3c.Status.Conditions)
	})
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	if err := c.Status().Update(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(providerDocs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	boot := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "m1-bootstrap"}, Data: map[string][]byte{"value": []byte("#cloud-config\n")}}
	machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "m1", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Spec: clusterv1.MachineSpec{ClusterName: "c1", Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("m1-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: "m1"}}}
	for _, obj := range []client.Object{boot, machine} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "m1", OwnerReferences: owner("Machine", "m1", string(machine.UID))},
		Spec: infrav1.Metal3MachineSpec{Image: infrav1.Image{URL: "http://img.test/node.iso", DiskFormat: ptr.To("live-iso")},
			DataTemplate: &corev1.ObjectReference{Name: "tpl"}}}
	if err := c.Create(ctx, m3m); err != nil {
		t.Fatal(err)
	}
	poll("Metal3Machine ready", func() (bool, string) {
		_ = c.Get(ctx, client.ObjectKeyFromObject(m3m), m3m)
		return m3m.Status.Ready, m3m.Status.Phase + " " + conditionsOf(m3m.Status.Conditions)
	})
	// The host's meta-data (a live ISO here: the direct provisioner boots
	// it, the data goes no further) holds its pool address.
	claimed := &metal3v1alpha1.BareMetalHost{}
	meta := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(host), claimed); err != nil || claimed.Spec.MetaData == nil {
		t.Fatalf("host %s: %v, metaData %v", host.Name, err, claimed.Spec.MetaData)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "metal3", Name: claimed.Spec.MetaData.Name}, meta); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(meta.Data["metaData"]), "10.9.0.10") {
		t.Errorf("the host's meta-data lacks its pool address: %s", meta.Data["metaData"])
	}
	if err := c.Delete(ctx, m3m); err != nil {
		t.Fatal(err)
	}
	poll("host released", func() (bool, string) {
		h := &metal3v1alpha1.BareMetalHost{}
		_ = c.Get(ctx, client.ObjectKeyFromObject(host), h)
		err := c.Get(ctx, client.ObjectKeyFromObject(m3m), &infrav1.Metal3Machine{})
		return apierrors.IsNotFound(err) && h.Spec.ConsumerRef == nil && h.Status.Provisioning.State == metal3v1alpha1.StateAvailable,
			string(h.Status.Provisioning.State)
	})
}

func fmtStatus(cs []metav1.Condition) string { return conditionsOf(cs) }

func conditionsOf(cs []metav1.Condition) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Type+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
	}
	return strings.Join(out, "; ")
}
