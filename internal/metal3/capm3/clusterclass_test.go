package capm3_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	m3data "github.com/airshipit/airship-go/internal/metal3/data"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// upstreamTemplates is where upstream Cluster API Provider Metal3's
// example manifests (its objects only) are kept as test data.
const upstreamTemplates = "../../../api/infrastructure/v1beta1/testdata"

// classDocs are what a ClusterClass for upstream's Metal3 templates needs
// besides them: the kubeadm templates (each host's Node named and
// identified from its meta-data, as the emulator's kubelet reads it) and
// the ClusterClass, whose one variable carries the workload API endpoint
// into the Metal3ClusterTemplate.
const classDocs = `apiVersion: controlplane.cluster.x-k8s.io/v1beta2
kind: KubeadmControlPlaneTemplate
metadata:
  name: example-controlplane
spec:
  template:
    spec:
      kubeadmConfigSpec:
        initConfiguration:
          nodeRegistration:
            name: '{{ ds.meta_data.name }}'
            kubeletExtraArgs:
            - {name: node-labels, value: 'metal3.io/uuid={{ ds.meta_data.uuid }}'}
            - {name: provider-id, value: 'metal3://{{ ds.meta_data.uuid }}'}
        joinConfiguration:
          nodeRegistration:
            name: '{{ ds.meta_data.name }}'
            kubeletExtraArgs:
            - {name: node-labels, value: 'metal3.io/uuid={{ ds.meta_data.uuid }}'}
            - {name: provider-id, value: 'metal3://{{ ds.meta_data.uuid }}'}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata:
  name: example-md-0
spec:
  template:
    spec:
      joinConfiguration:
        nodeRegistration:
          name: '{{ ds.meta_data.name }}'
          kubeletExtraArgs:
          - {name: node-labels, value: 'metal3.io/uuid={{ ds.meta_data.uuid }}'}
          - {name: provider-id, value: 'metal3://{{ ds.meta_data.uuid }}'}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata:
  name: example-clusterclass
spec:
  variables:
  - name: controlPlaneEndpoint
    required: true
    schema:
      openAPIV3Schema:
        type: object
        required: [host, port]
        properties:
          host: {type: string}
          port: {type: integer}
  infrastructure:
    templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3ClusterTemplate, name: example-cluster-template}
  controlPlane:
    templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate, name: example-controlplane}
    machineInfrastructure:
      templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: example-controlplane}
  workers:
    machineDeployments:
    - class: worker
      bootstrap:
        templateRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate, name: example-md-0}
      infrastructure:
        templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: example-md-0}
  patches:
  - name: controlPlaneEndpoint
    definitions:
    - selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: Metal3ClusterTemplate
        matchResources: {infrastructureCluster: true}
      jsonPatches:
      - op: replace
        path: /spec/template/spec/controlPlaneEndpoint
        valueFrom: {variable: controlPlaneEndpoint}
`

// clusterDocs are the IP pools upstream's data templates name (two IPv4,
// two IPv6) and the Cluster of the class: one control-plane machine and
// a MachineDeployment of two workers.
const clusterDocs = `apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata:
  name: pool1
spec:
  clusterName: ${CLUSTER_NAME}
  pools:
  - {start: 192.168.111.100, end: 192.168.111.120}
  prefix: 24
  gateway: 192.168.111.1
---
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata:
  name: pool2
spec:
  clusterName: ${CLUSTER_NAME}
  pools:
  - {start: 172.22.0.100, end: 172.22.0.120}
  prefix: 24
  gateway: 172.22.0.1
---
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata:
  name: pool6-1
spec:
  clusterName: ${CLUSTER_NAME}
  pools:
  - {start: "fd55::100", end: "fd55::120"}
  prefix: 64
  gateway: "fd55::1"
---
apiVersion: ipam.metal3.io/v1alpha1
kind: IPPool
metadata:
  name: pool6-2
spec:
  clusterName: ${CLUSTER_NAME}
  pools:
  - {start: "fd66::100", end: "fd66::120"}
  prefix: 64
  gateway: "fd66::1"
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: ${CLUSTER_NAME}
  namespace: ${NAMESPACE}
spec:
  topology:
    classRef: {name: example-clusterclass}
    version: ${KUBERNETES_VERSION}
    controlPlane:
      replicas: 1
    workers:
      machineDeployments:
      - {class: worker, name: md-0, replicas: 2}
    variables:
    - name: controlPlaneEndpoint
      value: {host: ${CLUSTER_APIENDPOINT_HOST}, port: ${CLUSTER_APIENDPOINT_PORT}}
`

// TestClusterClassTopology: upstream's ClusterClass templates, applied
// as they are (their variables substituted), work against this provider.
// Cluster API's topology controller makes the Metal3Cluster from the
// Metal3ClusterTemplate, a KubeadmControlPlane of one and a
// MachineDeployment of two; the operator provisions three hosts through
// Ironic; every Machine runs with its Node in the workload cluster (the
// emulator plays kubeadm init, which uploads kubeadm-config, and the
// kubelets); each machine's Metal3Data, rendered from upstream's data
// templates, carries its addresses from the four IP pools and its host's
// eth0 MAC.
func TestClusterClassTopology(t *testing.T) {
	hosts := emulator.Generate(3, 1)
	for _, h := range hosts {
		// The names upstream's data templates read (fromHostInterface).
		h.NICs[0].Name, h.NICs[1].Name = "eth0", "eth1"
	}
	s := startSiteWith(t, hosts, nil, "ClusterTopology=true")
	const ns, cluster = "cc", "example"
	s.namespace(ns)
	s.hosts(ns, hosts, nil)
	s.workloadCA(ns, cluster)
	apiHost, apiPort, _ := strings.Cut(strings.TrimPrefix(s.workloadEndpoint(), "https://"), ":")
	vars := map[string]string{
		"CLUSTER_NAME": cluster, "NAMESPACE": ns, "KUBERNETES_VERSION": "v1.37.1",
		"IMAGE_URL": s.image.URL, "IMAGE_CHECKSUM": s.image.Checksum,
		"IMAGE_CHECKSUM_TYPE": *s.image.ChecksumType, "IMAGE_FORMAT": *s.image.DiskFormat,
		"CLUSTER_APIENDPOINT_HOST": apiHost, "CLUSTER_APIENDPOINT_PORT": apiPort,
	}
	s.apply(ns, expand(t, vars, readUpstream(t, "templates-clusterclass.yaml")))
	s.apply(ns, expand(t, vars, classDocs))
	s.eventually(time.Minute, "ClusterClass reconciled", func() (bool, string) {
		cc := &clusterv1.ClusterClass{}
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "example-clusterclass"}, cc); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(cc.Status.Conditions, clusterv1.ClusterClassVariablesReadyCondition)
		return cc.Status.ObservedGeneration == cc.Generation && c != nil && c.Status == metav1.ConditionTrue, fmt.Sprintf("%+v", c)
	})
	s.apply(ns, expand(t, vars, readUpstream(t, "templates-cluster.yaml")))
	s.apply(ns, expand(t, vars, clusterDocs))
	s.step("upstream templates, ClusterClass, pools and topology Cluster applied")

	// The topology: the Metal3Cluster from the template, with the
	// variable's endpoint, a KubeadmControlPlane and a MachineDeployment.
	var cl clusterv1.Cluster
	s.eventually(3*time.Minute, "topology objects", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &cl); err != nil {
			return false, err.Error()
		}
		return cl.Spec.InfrastructureRef.IsDefined() && cl.Spec.ControlPlaneRef.IsDefined(),
			fmt.Sprintf("infrastructureRef %+v controlPlaneRef %+v", cl.Spec.InfrastructureRef, cl.Spec.ControlPlaneRef)
	})
	m3c := &infrav1.Metal3Cluster{}
	if cl.Spec.InfrastructureRef.Kind != "Metal3Cluster" {
		t.Fatalf("Cluster's infrastructureRef %+v, want a Metal3Cluster", cl.Spec.InfrastructureRef)
	}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: cl.Spec.InfrastructureRef.Name}, m3c); err != nil {
		t.Fatal(err)
	}
	if ep := m3c.Spec.ControlPlaneEndpoint; ep.Host != apiHost || fmt.Sprint(ep.Port) != apiPort {
		t.Errorf("Metal3Cluster %s endpoint %+v, want %s:%s (the ClusterClass variable)", m3c.Name, ep, apiHost, apiPort)
	}
	if m3c.Annotations[clusterv1.TemplateClonedFromNameAnnotation] != "example-cluster-template" {
		t.Errorf("Metal3Cluster %s annotations %v, want cloned from example-cluster-template", m3c.Name, m3c.Annotations)
	}
	kcp := get(s, "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", ns, cl.Spec.ControlPlaneRef.Name)
	if kcp == nil || str(kcp, "spec", "replicas") != "1" || str(kcp, "spec", "version") != "v1.37.1" {
		t.Errorf("KubeadmControlPlane %s: replicas %q version %q, want 1 and v1.37.1", cl.Spec.ControlPlaneRef.Name, str(kcp, "spec", "replicas"), str(kcp, "spec", "version"))
	}
	s.step("topology: Metal3Cluster %s, KubeadmControlPlane %s", m3c.Name, cl.Spec.ControlPlaneRef.Name)

	// Three Machines running on the three hosts, with Nodes.
	type machine struct{ host, node, data string }
	running := map[string]machine{}
	var mds clusterv1.MachineDeploymentList
	s.eventually(8*time.Minute, "control plane and workers running with Nodes", func() (bool, string) {
		running = map[string]machine{}
		if err := s.c.List(s.ctx, &mds, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err != nil {
			return false, err.Error()
		}
		var ms clusterv1.MachineList
		if err := s.c.List(s.ctx, &ms, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		var notes []string
		for _, m := range ms.Items {
			if m.Status.Phase != string(clusterv1.MachinePhaseRunning) || m.Status.NodeRef.Name == "" {
				notes = append(notes, m.Name+" "+m.Status.Phase)
				continue
			}
			node := &corev1.Node{}
			if err := s.workload.Client.Get(s.ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node); err != nil || !nodeReady(node) {
				notes = append(notes, m.Name+" Node not ready")
				continue
			}
			m3m := &infrav1.Metal3Machine{}
			if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: m.Spec.InfrastructureRef.Name}, m3m); err != nil {
				return false, err.Error()
			}
			var data string
			if m3m.Status.RenderedData != nil {
				data = m3m.Status.RenderedData.Name
			}
			running[m.Name] = machine{host: hostName(m3m.Annotations[infrav1.HostAnnotation]), node: node.Name, data: data}
		}
		return len(running) == 3 && len(ms.Items) == 3, fmt.Sprintf("%d MachineDeployments; %d of %d Machines running: %v; %v", len(mds.Items), len(running), len(ms.Items), running, notes)
	})
	s.step("three Machines running with Nodes: %v", running)

	if len(mds.Items) != 1 || mds.Items[0].Spec.Replicas == nil || *mds.Items[0].Spec.Replicas != 2 {
		t.Fatalf("MachineDeployments of the topology: %+v, want one of 2 replicas", mds.Items)
	}
	md := mds.Items[0]
	if md.Labels[clusterv1.ClusterTopologyMachineDeploymentNameLabel] != "md-0" {
		t.Errorf("MachineDeployment %s labels %v, want topology name md-0", md.Name, md.Labels)
	}
	var cps, workers int
	hostsUsed := map[string]bool{}
	for name, m := range running {
		var mm clusterv1.Machine
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, &mm); err != nil {
			t.Fatal(err)
		}
		switch {
		case ownedBy(mm.OwnerReferences, "KubeadmControlPlane", cl.Spec.ControlPlaneRef.Name):
			cps++
		case mm.Labels[clusterv1.MachineDeploymentNameLabel] == md.Name:
			workers++
		default:
			t.Errorf("Machine %s is neither the control plane's nor the MachineDeployment's: %v %v", name, mm.OwnerReferences, mm.Labels)
		}
		hostsUsed[m.host] = true
		s.checkTopologyData(ns, name, m.data, m.host, hosts)
	}
	// The emulated kubeadm init uploaded kubeadm-config, which is how
	// KubeadmControlPlane knows the control plane is initialized (and
	// the workers' join data waits for that).
	if kcp := get(s, "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", ns, cl.Spec.ControlPlaneRef.Name); str(kcp, "status", "initialization", "controlPlaneInitialized") != "true" {
		t.Errorf("KubeadmControlPlane %s: status.initialization %q, want controlPlaneInitialized", cl.Spec.ControlPlaneRef.Name, str(kcp, "status", "initialization"))
	}
	if cps != 1 || workers != 2 || len(hostsUsed) != 3 {
		t.Errorf("%d control-plane and %d worker Machines on %d hosts, want 1, 2 and 3: %v", cps, workers, len(hostsUsed), running)
	}
	s.step("control plane %d, workers %d; Metal3Data with the pools' addresses", cps, workers)

	s.upstreamClusterClass(vars)
}

// upstreamClusterClass applies upstream's whole ClusterClass example and
// its topology Cluster, unchanged but for their variables, in a namespace
// of their own (no hosts there: its machines wait for one), and checks
// what the topology controller made of them through this provider's
// templates: the Metal3Cluster with the endpoint variable, the control
// plane's and the workers' Metal3MachineTemplates with the image and data
// template variables patched in, the KubeadmControlPlane and the
// MachineDeployment of two.
func (s *site) upstreamClusterClass(vars map[string]string) {
	t := s.t
	t.Helper()
	const ns, cluster = "upstream", "upstream"
	s.namespace(ns)
	v := maps.Clone(vars)
	v["NAMESPACE"], v["CLUSTER_NAME"] = ns, cluster
	s.apply(ns, expand(t, v, readTestdata(t, "upstream-clusterclass.yaml")))
	s.apply(ns, expand(t, v, readTestdata(t, "upstream-cluster.yaml")))
	var cl clusterv1.Cluster
	var mds clusterv1.MachineDeploymentList
	s.eventually(3*time.Minute, "upstream's topology Cluster's objects", func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: cluster}, &cl); err != nil {
			return false, err.Error()
		}
		if err := s.c.List(s.ctx, &mds, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: cluster}); err != nil {
			return false, err.Error()
		}
		return cl.Spec.InfrastructureRef.IsDefined() && cl.Spec.ControlPlaneRef.IsDefined() && len(mds.Items) == 1,
			fmt.Sprintf("infrastructureRef %+v controlPlaneRef %+v, %d MachineDeployments; conditions %v", cl.Spec.InfrastructureRef, cl.Spec.ControlPlaneRef, len(mds.Items), cl.Status.Conditions)
	})
	m3c := &infrav1.Metal3Cluster{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: cl.Spec.InfrastructureRef.Name}, m3c); err != nil {
		t.Fatal(err)
	}
	if ep := m3c.Spec.ControlPlaneEndpoint; ep.Host != vars["CLUSTER_APIENDPOINT_HOST"] || fmt.Sprint(ep.Port) != vars["CLUSTER_APIENDPOINT_PORT"] {
		t.Errorf("upstream: Metal3Cluster %s endpoint %+v, want the controlPlaneEndpoint variable", m3c.Name, ep)
	}
	md := mds.Items[0]
	if md.Spec.Replicas == nil || *md.Spec.Replicas != 2 || md.Name != cluster+"-machine" && md.Labels[clusterv1.ClusterTopologyMachineDeploymentNameLabel] != cluster+"-machine" {
		t.Errorf("upstream: MachineDeployment %s replicas %v labels %v, want %s-machine of 2", md.Name, md.Spec.Replicas, md.Labels, cluster)
	}
	// The Metal3MachineTemplates the topology made: the workers' from the
	// MachineDeployment, the control plane's from the KubeadmControlPlane.
	kcp := get(s, "controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", ns, cl.Spec.ControlPlaneRef.Name)
	if kcp == nil {
		t.Fatalf("upstream: KubeadmControlPlane %s not found", cl.Spec.ControlPlaneRef.Name)
	}
	for what, name := range map[string]string{
		"example-md-metadata": md.Spec.Template.Spec.InfrastructureRef.Name,
		"example-cp-metadata": str(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "name"),
	} {
		tmpl := &infrav1.Metal3MachineTemplate{}
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, tmpl); err != nil {
			t.Fatalf("upstream: Metal3MachineTemplate %q: %v", name, err)
		}
		spec := tmpl.Spec.Template.Spec
		if spec.Image.URL != vars["IMAGE_URL"] || spec.Image.Checksum != vars["IMAGE_CHECKSUM"] || spec.DataTemplate == nil || spec.DataTemplate.Name != what {
			t.Errorf("upstream: Metal3MachineTemplate %s: image %+v dataTemplate %+v, want the image variable and %s", name, spec.Image, spec.DataTemplate, what)
		}
	}
	s.step("upstream's ClusterClass example: Metal3Cluster %s, KubeadmControlPlane %s, MachineDeployment %s, their Metal3MachineTemplates patched from the variables",
		m3c.Name, cl.Spec.ControlPlaneRef.Name, md.Name)
}

// checkTopologyData checks a machine's Metal3Data, rendered from
// upstream's data template: its meta-data and network-data carry an
// address of each pool (network-data: pool1's, on eth1's MAC), and its
// host's eth0 MAC; the IPAddresses are the Metal3Data's.
func (s *site) checkTopologyData(ns, machine, data, host string, hosts []emulator.Host) {
	s.t.Helper()
	if data == "" {
		s.t.Errorf("Machine %s: its Metal3Machine has no renderedData", machine)
		return
	}
	d := &infrav1.Metal3Data{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: data}, d); err != nil {
		s.t.Fatal(err)
	}
	if !d.Status.Ready || d.Spec.MetaData == nil || d.Spec.NetworkData == nil {
		s.t.Errorf("Metal3Data %s: ready %t metaData %v networkData %v", data, d.Status.Ready, d.Spec.MetaData, d.Spec.NetworkData)
		return
	}
	// Each pool's address of this Metal3Data: the IPAddress of its
	// claim for that pool.
	var addrs ipamv1.IPAddressList
	if err := s.c.List(s.ctx, &addrs, client.InNamespace(ns)); err != nil {
		s.t.Fatal(err)
	}
	byPool := map[string]string{}
	for _, a := range addrs.Items {
		if a.Spec.Claim.Name == m3data.ClaimName(data, a.Spec.Pool.Name) {
			byPool[a.Spec.Pool.Name] = string(a.Spec.Address)
		}
	}
	md, nd := s.secretData(ns, d.Spec.MetaData.Name, "metaData"), s.secretData(ns, d.Spec.NetworkData.Name, "networkData")
	for _, pool := range []string{"pool1", "pool2", "pool6-1", "pool6-2"} {
		a := byPool[pool]
		if a == "" || !strings.Contains(md, a) {
			s.t.Errorf("Metal3Data %s: meta-data lacks the address %q of %s (addresses %v):\n%s", data, a, pool, byPool, md)
		}
	}
	if !strings.Contains(nd, byPool["pool1"]) || !strings.Contains(nd, "192.168.111.1") {
		s.t.Errorf("Metal3Data %s: network-data lacks pool1's address %q or gateway:\n%s", data, byPool["pool1"], nd)
	}
	i := slices.IndexFunc(hosts, func(h emulator.Host) bool { return h.Name == host })
	if i < 0 {
		s.t.Fatalf("Machine %s on unknown host %q", machine, host)
	}
	if !strings.Contains(strings.ToLower(md), hosts[i].NICs[0].MAC) || !strings.Contains(strings.ToLower(nd), hosts[i].NICs[1].MAC) {
		s.t.Errorf("Metal3Data %s of host %s: meta-data lacks eth0's MAC %s or network-data eth1's %s:\n%s\n%s", data, host, hosts[i].NICs[0].MAC, hosts[i].NICs[1].MAC, md, nd)
	}
}

// secretData is one key of a Secret.
func (s *site) secretData(ns, name, key string) string {
	s.t.Helper()
	sec := &corev1.Secret{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, sec); err != nil {
		s.t.Fatal(err)
	}
	return string(sec.Data[key])
}

// readTestdata reads a file of testdata/.
func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readUpstream reads one of upstream's example manifests.
func readUpstream(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(upstreamTemplates, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expand substitutes ${VAR}s as clusterctl generate does, failing on a
// variable it was not given.
func expand(t *testing.T, vars map[string]string, text string) string {
	t.Helper()
	return os.Expand(text, func(k string) string {
		v, ok := vars[k]
		if !ok {
			t.Fatalf("no value for ${%s}", k)
		}
		return v
	})
}
