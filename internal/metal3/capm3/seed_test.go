package capm3_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// seedDocs are the seed's "user provided" documents of Cluster test1,
// applied as written but for four things the years since changed or the
// test needs: the Machine's Kubernetes version (Cluster API v1.14's kubeadm
// bootstrap provider does not render v1.17), spec.clusterName (required
// since Cluster API v1alpha3), the BMC address (the emulator, not
// ipmi://) and the image server (seedImageBase becomes the test Ironic's
// image server, serving a small raw image under the seed's name with its
// md5sum file). Bootstrap and infrastructure first: a Machine created before
// them waits for a 30 s requeue.
const seedDocs = `apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfig
metadata:
  name: test1-controlplane-0
spec:
  initConfiguration:
    nodeRegistration:
      name: '{{ ds.meta_data.name }}'
      kubeletExtraArgs:
        node-labels: 'metal3.io/uuid={{ ds.meta_data.uuid }}'
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Machine
metadata:
  name: test1-controlplane-0
spec:
  image:
    url: http://172.22.0.1/images/bionic-server-cloudimg-amd64.img
    checksum: http://172.22.0.1/images/bionic-server-cloudimg-amd64.img.md5sum
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Cluster
metadata:
  name: test1
spec:
  apiEndpoint: API_ENDPOINT
  noCloudProvider: true
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: test1
spec:
  clusterNetwork:
    services:
      cidrBlocks: ["10.96.0.0/12"]
    pods:
      cidrBlocks: ["192.168.0.0/18"]
    serviceDomain: "cluster.local"
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: Metal3Cluster
    name: test1
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata:
  name: test1-controlplane-0
  labels:
    cluster.x-k8s.io/control-plane: "true"
    cluster.x-k8s.io/cluster-name: "test1"
spec:
  clusterName: test1
  version: v1.37.1
  bootstrap:
    configRef:
      apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
      kind: KubeadmConfig
      name: test1-controlplane-0
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: Metal3Machine
    name: test1-controlplane-0
`

// seedHost is the seed's node-1: its boot MAC, and the two addresses of
// the seed's "after reconciliation" Machine.
func seedHost() emulator.Host {
	h := emulator.Generate(1, 1)[0]
	h.Name = "node-1"
	h.NICs[0].MAC, h.NICs[0].IP = "00:b2:8c:ee:22:98", "172.22.0.10"
	h.NICs[1].IP = "192.168.111.21"
	return h
}

// seedImageBase is where the seed's documents find their image.
const seedImageBase = "http://172.22.0.1/images/"

// TestSeedFlow applies the seed's documents and checks the seed's "after
// reconciliation" fields, set by the real Cluster API managers, this
// provider, the BareMetalHost controller provisioning the host through
// Ironic (the image and a config drive with the bootstrap data written to
// its disk by the emulator's deploy agent) and the emulator booting the
// host from that disk into the workload cluster named by its user-data.
func TestSeedFlow(t *testing.T) {
	host := seedHost()
	s := startSite(t, []emulator.Host{host}, nil)
	s.seedFlow(host)
	s.step("seed fields checked")
	noPassword(t, s, "metal3")
}

// seedFlow takes host (node-1) through the seed's documents in namespace
// metal3 and checks the seed's "after reconciliation" fields.
func (s *site) seedFlow(host emulator.Host) {
	t := s.t
	t.Helper()
	_, imageData := serveImage(t, s.ironic, "bionic-server-cloudimg-amd64.img")
	base := s.ironic.HTTPURL + "/"
	const ns = "metal3"
	s.namespace(ns)
	s.hosts(ns, []emulator.Host{host}, nil)
	s.step("BareMetalHost node-1 available")
	bmh := &metal3v1alpha1.BareMetalHost{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "node-1"}, bmh); err != nil {
		t.Fatal(err)
	}
	bmh.Spec.Online = true
	if err := s.c.Update(s.ctx, bmh); err != nil {
		t.Fatal(err)
	}
	s.workloadCA(ns, "test1")
	s.apply(ns, strings.NewReplacer("API_ENDPOINT", s.workloadEndpoint(), seedImageBase, base).Replace(seedDocs))
	s.step("seed documents applied")

	s.eventually(6*time.Minute, "Machine test1-controlplane-0 Running", func() (bool, string) {
		m := get(s, "cluster.x-k8s.io/v1beta2", "Machine", ns, "test1-controlplane-0")
		m3m := get(s, "infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine", ns, "test1-controlplane-0")
		h := get(s, "metal3.io/v1alpha1", "BareMetalHost", ns, "node-1")
		return str(m, "status", "phase") == "Running" && str(m, "status", "nodeRef", "name") != "",
			fmt.Sprintf("Machine phase %q nodeRef %q; Metal3Machine phase %q ready %s, Ready reason %q; host %s",
				str(m, "status", "phase"), str(m, "status", "nodeRef", "name"), str(m3m, "status", "phase"), str(m3m, "status", "ready"),
				readyReason(m3m), str(h, "status", "provisioning", "state"))
	})
	s.step("Machine Running with a nodeRef")

	// The host, as the seed shows it after reconciliation.
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "node-1"}, bmh); err != nil {
		t.Fatal(err)
	}
	wantRef := corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "Metal3Machine", Name: "test1-controlplane-0", Namespace: ns}
	if bmh.Spec.ConsumerRef == nil || *bmh.Spec.ConsumerRef != wantRef {
		t.Errorf("host consumerRef = %+v, want %+v", bmh.Spec.ConsumerRef, wantRef)
	}
	if bmh.Spec.Image == nil || bmh.Spec.Image.URL != base+"bionic-server-cloudimg-amd64.img" ||
		bmh.Spec.Image.Checksum != base+"bionic-server-cloudimg-amd64.img.md5sum" {
		t.Errorf("host image = %+v", bmh.Spec.Image)
	}
	machine := &clusterv1.Machine{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "test1-controlplane-0"}, machine); err != nil {
		t.Fatal(err)
	}
	if machine.Spec.Bootstrap.DataSecretName == nil || bmh.Spec.UserData == nil || bmh.Spec.UserData.Name != *machine.Spec.Bootstrap.DataSecretName || bmh.Spec.UserData.Namespace != ns {
		t.Errorf("host userData = %+v, want the bootstrap data Secret %v", bmh.Spec.UserData, machine.Spec.Bootstrap.DataSecretName)
	}
	if !bmh.Spec.Online || !bmh.Status.PoweredOn || bmh.Status.Provisioning.State != metal3v1alpha1.StateProvisioned ||
		bmh.Status.OperationalStatus != metal3v1alpha1.OperationalStatusOK || bmh.Status.GoodCredentials.Reference == nil {
		t.Errorf("host online %v, status poweredOn %v state %q operationalStatus %q goodCredentials %+v",
			bmh.Spec.Online, bmh.Status.PoweredOn, bmh.Status.Provisioning.State, bmh.Status.OperationalStatus, bmh.Status.GoodCredentials)
	}
	// Ironic wrote the image and a config drive with the bootstrap data to
	// the host's disk; the host booted from it, its media ejected.
	cd := s.provisionedDisk("node-1", imageData)
	bootstrap := &corev1.Secret{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: bmh.Spec.UserData.Name}, bootstrap); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cd.UserData), "kubeadm") || string(cd.UserData) != string(bootstrap.Data["value"]) {
		t.Errorf("the config drive's user-data (%d bytes) is not the kubeadm bootstrap data of Secret %s", len(cd.UserData), bmh.Spec.UserData.Name)
	}
	if !strings.Contains(string(cd.MetaData), string(bmh.UID)) {
		t.Errorf("the config drive's meta-data does not name the host's uid %s: %s", bmh.UID, cd.MetaData)
	}
	if st, _ := s.emu.State("node-1"); !st.PowerOn || !st.Booted || st.BootedFrom != "Hdd" || st.NodeDisk != "sda" || st.Media.Inserted {
		t.Errorf("emulator: host %+v, want on, booted from its disk sda, its media ejected", st)
	}

	providerID := "metal3://" + string(bmh.UID)
	m3m := &infrav1.Metal3Machine{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "test1-controlplane-0"}, m3m); err != nil {
		t.Fatal(err)
	}
	if m3m.Spec.ProviderID == nil || *m3m.Spec.ProviderID != providerID || !m3m.Status.Ready || m3m.Status.Phase != infrav1.PhaseProvisioned {
		t.Errorf("Metal3Machine providerID %v ready %v phase %q, want %s, true, Provisioned", m3m.Spec.ProviderID, m3m.Status.Ready, m3m.Status.Phase, providerID)
	}
	if !ownedBy(m3m.OwnerReferences, "Machine", "test1-controlplane-0") {
		t.Errorf("Metal3Machine owners = %+v, want the Machine", m3m.OwnerReferences)
	}
	// The seed's addresses (InternalIP 172.22.0.10 and 192.168.111.21,
	// Hostname and InternalDNS node-1) came from ironic-inspector's in-band
	// inspection. Ironic's redfish inspection reads the NICs' MACs only (no
	// IP, no hostname): the machine's addresses are what status.hardware
	// holds, and its NICs are the host's.
	hw := bmh.Status.HardwareDetails
	if hw == nil || !slices.ContainsFunc(hw.NIC, func(n metal3v1alpha1.NIC) bool { return n.MAC == host.NICs[0].MAC }) {
		t.Fatalf("host status.hardware %+v lacks the boot NIC %s", hw, host.NICs[0].MAC)
	}
	var wantAddrs []clusterv1.MachineAddress
	for _, n := range hw.NIC {
		if n.IP != "" {
			wantAddrs = append(wantAddrs, clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: n.IP})
		}
	}
	if hw.Hostname != "" {
		wantAddrs = append(wantAddrs, clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: hw.Hostname},
			clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: hw.Hostname})
	}
	if !slices.Equal(m3m.Status.Addresses, wantAddrs) {
		t.Errorf("Metal3Machine addresses = %+v, want %+v", m3m.Status.Addresses, wantAddrs)
	}
	if machine.Spec.ProviderID != providerID || !slices.Equal(machine.Status.Addresses, wantAddrs) || machine.Status.NodeRef.Name != "node-1" {
		t.Errorf("Machine providerID %q addresses %+v nodeRef %+v, want %s, the Metal3Machine's addresses, node-1", machine.Spec.ProviderID, machine.Status.Addresses, machine.Status.NodeRef, providerID)
	}
	if p := machine.Status.Initialization.BootstrapDataSecretCreated; p == nil || !*p {
		t.Errorf("Machine bootstrap not ready: %+v", machine.Status.Initialization)
	}
	if p := machine.Status.Initialization.InfrastructureProvisioned; p == nil || !*p {
		t.Errorf("Machine infrastructure not provisioned: %+v", machine.Status.Initialization)
	}

	m3c := &infrav1.Metal3Cluster{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "test1"}, m3c); err != nil {
		t.Fatal(err)
	}
	ep := m3c.Spec.ControlPlaneEndpoint
	if !m3c.Status.Ready || len(m3c.Status.APIEndpoints) != 1 || m3c.Status.APIEndpoints[0] != ep || !strings.HasSuffix(s.workloadEndpoint(), fmt.Sprintf("%s:%d", ep.Host, ep.Port)) {
		t.Errorf("Metal3Cluster ready %v apiEndpoints %+v controlPlaneEndpoint %+v, want ready with the workload endpoint %s", m3c.Status.Ready, m3c.Status.APIEndpoints, ep, s.workloadEndpoint())
	}
	if !ownedBy(m3c.OwnerReferences, "Cluster", "test1") {
		t.Errorf("Metal3Cluster owners = %+v, want the Cluster", m3c.OwnerReferences)
	}
	cluster := &clusterv1.Cluster{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "test1"}, cluster); err != nil {
		t.Fatal(err)
	}
	if cluster.Spec.ControlPlaneEndpoint.Host != ep.Host || int(cluster.Spec.ControlPlaneEndpoint.Port) != ep.Port {
		t.Errorf("Cluster endpoint %+v, want %+v", cluster.Spec.ControlPlaneEndpoint, ep)
	}
	if p := cluster.Status.Initialization.InfrastructureProvisioned; p == nil || !*p {
		t.Errorf("Cluster infrastructure not provisioned: %+v", cluster.Status.Initialization)
	}

	// The workload cluster's Node: named by the meta-data, labelled by
	// kubelet's node-labels, its providerID set by the provider.
	node := &corev1.Node{}
	if err := s.workload.Client.Get(s.ctx, client.ObjectKey{Name: "node-1"}, node); err != nil {
		t.Fatalf("workload Node node-1: %v", err)
	}
	if node.Spec.ProviderID != providerID || node.Labels[infrav1.UUIDLabel] != string(bmh.UID) {
		t.Errorf("workload Node providerID %q label %s=%q, want %s and the host's UID", node.Spec.ProviderID, infrav1.UUIDLabel, node.Labels[infrav1.UUIDLabel], providerID)
	}
}

func ownedBy(refs []metav1.OwnerReference, kind, name string) bool {
	for _, r := range refs {
		if r.Kind == kind && r.Name == name {
			return true
		}
	}
	return false
}

func readyReason(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return fmt.Sprint(m["reason"], ": ", m["message"])
		}
	}
	return ""
}

// noPassword checks that no BMC password shows in the provider's objects'
// status nor in events.
func noPassword(t *testing.T, s *site, ns string) {
	t.Helper()
	var evs eventsv1.EventList
	if err := s.c.List(s.ctx, &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var m3ms infrav1.Metal3MachineList
	if err := s.c.List(s.ctx, &m3ms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var hosts metal3v1alpha1.BareMetalHostList
	if err := s.c.List(s.ctx, &hosts, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, o := range []any{evs.Items, m3ms.Items, hosts.Items} {
		data, _ := yaml.Marshal(o)
		if strings.Contains(string(data), bmcPassword) {
			t.Errorf("the BMC password shows in %T", o)
		}
	}
}
