package capm3_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// lifecycleData is an IP pool and a data template for rack-0's host,
// whose boot MAC replaces BOOT_MAC. The template names no host interface
// (fromHostInterface): Ironic's redfish inspection records the NICs' MACs
// only, not their names, so status.hardware has no NIC named enp1s0.
const lifecycleData = `apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata:
  name: pool
spec:
  clusterName: life
  namePrefix: life-pool
  pools:
  - start: 192.168.50.10
    end: 192.168.50.20
  prefix: 24
  gateway: 192.168.50.1
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3DataTemplate
metadata:
  name: workers
spec:
  clusterName: life
  metaData:
    objectNames:
    - {key: name, object: machine}
    - {key: local-hostname, object: machine}
    indexes:
    - {key: index, offset: 0, step: 1}
    strings:
    - {key: role, value: worker}
    ipAddressesFromIPPool:
    - {key: ip, name: pool}
  networkData:
    links:
      ethernets:
      - id: enp1s0
        type: phy
        macAddress: {string: "BOOT_MAC"}
    networks:
      ipv4:
      - id: provisioning
        link: enp1s0
        ipAddressFromIPPool: pool
        routes:
        - network: 0.0.0.0
          prefix: 0
          gateway: {fromIPPool: pool}
`

// m3mCondition reads a Metal3Machine's condition.
func (s *site) m3mCondition(ns, name, typ string) (*metav1.Condition, *infrav1.Metal3Machine) {
	m := &infrav1.Metal3Machine{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
		return nil, nil
	}
	return apimeta.FindStatusCondition(m.Status.Conditions, typ), m
}

func (s *site) host(ns, name string) *metal3v1alpha1.BareMetalHost {
	h := &metal3v1alpha1.BareMetalHost{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
		return nil
	}
	return h
}

// TestMachineLifecycle: a machine with a data template gets an address
// from an IP pool into its host's meta-data and network-data; a host
// going to error shows on its machine and recovers; a machine deleted
// mid-provisioning deprovisions and releases its host; deleting a machine
// releases its data, address and host.
func TestMachineLifecycle(t *testing.T) {
	hosts := emulator.Generate(3, 3)
	s := startSite(t, hosts, nil)
	const ns, cluster = "life", "life"
	s.namespace(ns)
	s.hosts(ns, hosts, nil)
	s.workerCluster(ns, cluster)
	s.apply(ns, strings.ReplaceAll(lifecycleData, "BOOT_MAC", hosts[0].NICs[0].MAC))
	rack := func(r string) infrav1.Metal3MachineSpec {
		spec := s.machineSpec()
		spec.HostSelector = infrav1.HostSelector{MatchLabels: map[string]string{"rack": r}}
		return spec
	}
	s.step("hosts available, pool and data template applied")

	// A host going to error: resets of host-0001 fail while its machine
	// provisions it.
	s.emu.SetFault("host-0001", emulator.Fault{FailResets: true})
	if err := s.worker(ns, cluster, "err-0", rack("rack-1")); err != nil {
		t.Fatal(err)
	}
	// A machine with the data template, on rack-0.
	withData := rack("rack-0")
	withData.DataTemplate = &corev1.ObjectReference{Name: "workers"}
	if err := s.worker(ns, cluster, "data-0", withData); err != nil {
		t.Fatal(err)
	}
	s.eventually(5*time.Minute, "data-0 ready", func() (bool, string) {
		c, m := s.m3mCondition(ns, "data-0", infrav1.ReadyCondition)
		if m == nil || c == nil {
			return false, "no Ready condition yet"
		}
		return m.Status.Ready, c.Reason + ": " + c.Message
	})
	c, m := s.m3mCondition(ns, "data-0", infrav1.Metal3DataReadyCondition)
	if c == nil || c.Status != metav1.ConditionTrue || m.Status.RenderedData == nil || m.Status.MetaData == nil || m.Status.NetworkData == nil {
		t.Fatalf("data-0: Metal3DataReady %+v renderedData %+v metaData %+v networkData %+v", c, m.Status.RenderedData, m.Status.MetaData, m.Status.NetworkData)
	}
	h := s.host(ns, "host-0000")
	if h.Spec.MetaData == nil || h.Spec.MetaData.Name != m.Status.MetaData.Name || h.Spec.NetworkData == nil || h.Spec.NetworkData.Name != m.Status.NetworkData.Name {
		t.Errorf("host-0000 metaData %+v networkData %+v, want the rendered %+v %+v", h.Spec.MetaData, h.Spec.NetworkData, m.Status.MetaData, m.Status.NetworkData)
	}
	// Ironic wrote the image and a config drive with the machine's data
	// to host-0000's disk.
	cd := s.provisionedDisk("host-0000", s.imageData)
	md, nd := string(cd.MetaData), string(cd.NetworkData)
	for _, want := range []string{"192.168.50.10", "data-0", "worker"} {
		if !strings.Contains(strings.ToLower(md), strings.ToLower(want)) {
			t.Errorf("the meta-data of host-0000's config drive has no %q:\n%s", want, md)
		}
	}
	if !strings.Contains(nd, "192.168.50.10") || !strings.Contains(nd, "192.168.50.1") || !strings.Contains(strings.ToLower(nd), strings.ToLower(hosts[0].NICs[0].MAC)) {
		t.Errorf("the network-data of host-0000's config drive has not the pool's address and gateway and the host's MAC:\n%s", nd)
	}
	if string(cd.UserData) != "#cloud-config\n" {
		t.Errorf("the user-data of host-0000's config drive is %q, want the bootstrap data", cd.UserData)
	}
	s.step("data-0 provisioned through Ironic with meta-data and network-data from the template and pool")

	s.eventually(5*time.Minute, "err-0 shows its host's error", func() (bool, string) {
		c, _ := s.m3mCondition(ns, "err-0", infrav1.HostProvisionedCondition)
		if c == nil {
			return false, "no HostProvisioned condition"
		}
		return c.Reason == infrav1.HostErrorReason && strings.Contains(c.Message, "host-0001"), c.Reason + ": " + c.Message
	})
	c, _ = s.m3mCondition(ns, "err-0", infrav1.HostProvisionedCondition)
	s.step("err-0: %s", c.Message)
	s.emu.SetFault("host-0001", emulator.Fault{})
	s.eventually(6*time.Minute, "err-0 recovers", func() (bool, string) {
		c, m := s.m3mCondition(ns, "err-0", infrav1.ReadyCondition)
		if c == nil {
			return false, ""
		}
		return m.Status.Ready, c.Reason + ": " + c.Message
	})
	s.step("err-0 provisioned once the BMC answered again")

	// Delete mid-provisioning: host-0002's BMC is slow, so its machine is
	// deleted while the host provisions.
	// host-0002 has network-data of its own, as a site's hosts do; mid-0
	// has no data template, so the host keeps it throughout.
	own := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "host-0002-network"}, StringData: map[string]string{"networkData": "links: []\n"}}
	if err := s.c.Create(s.ctx, own); err != nil {
		t.Fatal(err)
	}
	h = s.host(ns, "host-0002")
	h.Spec.NetworkData = &corev1.SecretReference{Name: own.Name, Namespace: ns}
	if err := s.c.Update(s.ctx, h); err != nil {
		t.Fatal(err)
	}
	keepsOwn := func(when string) {
		t.Helper()
		if h := s.host(ns, "host-0002"); h.Spec.NetworkData == nil || h.Spec.NetworkData.Name != own.Name {
			t.Errorf("host-0002 %s: networkData %+v, want its own %s", when, h.Spec.NetworkData, own.Name)
		}
	}
	s.emu.SetFault("host-0002", emulator.Fault{Delay: 2 * time.Second})
	if err := s.worker(ns, cluster, "mid-0", rack("rack-2")); err != nil {
		t.Fatal(err)
	}
	s.eventually(3*time.Minute, "host-0002 provisioning", func() (bool, string) {
		h := s.host(ns, "host-0002")
		return h != nil && h.Status.Provisioning.State == metal3v1alpha1.StateProvisioning, string(h.Status.Provisioning.State)
	})
	keepsOwn("provisioning for mid-0")
	if err := s.c.Delete(s.ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mid-0"}}); err != nil {
		t.Fatal(err)
	}
	s.emu.SetFault("host-0002", emulator.Fault{})
	s.eventually(6*time.Minute, "host-0002 released", func() (bool, string) {
		h := s.host(ns, "host-0002")
		err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "mid-0"}, &infrav1.Metal3Machine{})
		return apierrors.IsNotFound(err) && h.Spec.ConsumerRef == nil && h.Spec.Image == nil && h.Status.Provisioning.State == metal3v1alpha1.StateAvailable,
			fmt.Sprintf("host %s consumer %v image %v; Metal3Machine: %v", h.Status.Provisioning.State, h.Spec.ConsumerRef, h.Spec.Image, err)
	})
	if st, _ := s.emu.State("host-0002"); st.PowerOn || st.Media.Inserted {
		t.Errorf("host-0002 after release: power %v media inserted %v", st.PowerOn, st.Media.Inserted)
	}
	keepsOwn("released by mid-0")
	s.step("mid-0 deleted while provisioning: host-0002 deprovisioned and released, its own network-data kept")

	// Deleting data-0 releases its host, Metal3Data, Secrets and address.
	data := m.Status.RenderedData.Name
	if err := s.c.Delete(s.ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-0"}}); err != nil {
		t.Fatal(err)
	}
	s.eventually(6*time.Minute, "data-0's host, data and address released", func() (bool, string) {
		h := s.host(ns, "host-0000")
		var addrs ipamv1.IPAddressList
		if err := s.c.List(s.ctx, &addrs, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		dataErr := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: data}, &infrav1.Metal3Data{})
		secretErr := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: m.Status.MetaData.Name}, &corev1.Secret{})
		return h.Spec.ConsumerRef == nil && len(addrs.Items) == 0 && apierrors.IsNotFound(dataErr) && apierrors.IsNotFound(secretErr),
			fmt.Sprintf("host consumer %v state %s; %d IPAddresses; Metal3Data: %v; Secret: %v", h.Spec.ConsumerRef, h.Status.Provisioning.State, len(addrs.Items), dataErr, secretErr)
	})
	s.step("data-0 deleted: host, Metal3Data, Secrets and address released")
	noPassword(t, s, ns)
}
