package capm3_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/metal3/capm3"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// reuseHosts hosts for reuseReplicas machines: two hosts stay free
// throughout, which the new machines could have claimed.
const (
	reuseHosts    = 4
	reuseReplicas = 2
)

// TestNodeReuseMachineDeployment scales a MachineDeployment made from a
// Metal3MachineTemplate with nodeReuse down to zero and up again, through
// Cluster API's real MachineSet controller: the released hosts are marked
// for the deployment and held for its Cluster, keep their disks as they
// were (cleaning is off), and the new machines claim exactly them again,
// not the hosts that stayed free.
func TestNodeReuseMachineDeployment(t *testing.T) {
	hosts := emulator.Generate(reuseHosts, 1)
	s := startSite(t, hosts, nil)
	const ns, cluster, md = "reuse", "reuse", "workers"
	s.namespace(ns)
	s.hosts(ns, hosts, nil)
	s.workerCluster(ns, cluster)
	s.step("%d hosts available", reuseHosts)

	spec := s.machineSpec()
	spec.AutomatedCleaningMode = ptr.To(string(metal3v1alpha1.CleaningModeDisabled))
	tmpl := &infrav1.Metal3MachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: md},
		Spec:       infrav1.Metal3MachineTemplateSpec{NodeReuse: true, Template: infrav1.Metal3MachineTemplateResource{Spec: spec}},
	}
	secret := cluster + "-bootstrap"
	sel := map[string]string{"pool": md}
	deploy := &clusterv1.MachineDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: md, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: cluster,
			Replicas:    ptr.To[int32](reuseReplicas),
			Selector:    metav1.LabelSelector{MatchLabels: sel},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: sel},
				Spec: clusterv1.MachineSpec{
					ClusterName:       cluster,
					Bootstrap:         clusterv1.Bootstrap{DataSecretName: &secret},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3MachineTemplate", Name: md},
				},
			},
		},
	}
	for _, o := range []client.Object{tmpl, deploy} {
		if err := s.c.Create(s.ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}

	first := s.deploymentHosts(ns, reuseReplicas)
	s.step("MachineDeployment %s provisioned hosts %v", md, first)
	before := map[string]hostSnapshot{}
	for _, h := range first {
		s.provisionedDisk(h, s.imageData)
		before[h] = s.hostSnapshot(h)
	}

	s.scale(ns, md, 0)
	s.eventually(6*time.Minute, "hosts released for reuse", func() (bool, string) {
		n := 0
		for _, name := range first {
			h := s.host(ns, name)
			if h != nil && heldFor(h, cluster) && h.Status.Provisioning.State == metal3v1alpha1.StateAvailable && h.Labels[capm3.NodeReuseLabel] == md {
				n++
			}
		}
		var m3ms infrav1.Metal3MachineList
		if err := s.c.List(s.ctx, &m3ms, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		return n == len(first) && len(m3ms.Items) == 0,
			fmt.Sprintf("%d of %d hosts available, held for cluster %s and labelled %s=%s; %d Metal3Machines left", n, len(first), cluster, capm3.NodeReuseLabel, md, len(m3ms.Items))
	})
	for _, name := range hosts {
		if slices.Contains(first, name.Name) {
			continue
		}
		if h := s.host(ns, name.Name); h == nil || h.Labels[capm3.NodeReuseLabel] != "" || h.Spec.ConsumerRef != nil {
			t.Errorf("host %s, never used by %s: %+v", name.Name, md, h)
		}
	}
	for _, h := range first {
		after := s.hostSnapshot(h)
		b := before[h]
		if after.HeadSum != b.HeadSum || after.ConfigDriveSum != b.ConfigDriveSum || after.ConfigDriveOffset != b.ConfigDriveOffset {
			t.Errorf("host %s's disk changed while deprovisioning with cleaning disabled: image %x -> %x, config drive at %d %x -> at %d %x",
				h, b.HeadSum[:6], after.HeadSum[:6], b.ConfigDriveOffset, b.ConfigDriveSum[:6], after.ConfigDriveOffset, after.ConfigDriveSum[:6])
		}
		s.provisionedDisk(h, s.imageData)
	}
	s.step("scaled to 0: hosts %v available, labelled for reuse, disks untouched", first)

	s.scale(ns, md, reuseReplicas)
	second := s.deploymentHosts(ns, reuseReplicas)
	if !slices.Equal(first, second) {
		t.Errorf("scaled up again, the machines claimed hosts %v, want the released %v", second, first)
	}
	for _, name := range second {
		if h := s.host(ns, name); h == nil || h.Labels[capm3.NodeReuseLabel] != "" || h.Spec.ConsumerRef == nil || h.Spec.ConsumerRef.Kind != "Metal3Machine" {
			t.Errorf("host %s, claimed again, should be a Metal3Machine's without the %s label: %+v", name, capm3.NodeReuseLabel, h)
		}
	}
	s.step("scaled to %d: the same hosts %v claimed again", reuseReplicas, second)
}

// heldFor reports whether a released host is kept for cluster's machines
// (node reuse): its consumerRef is the Cluster.
func heldFor(h *metal3v1alpha1.BareMetalHost, cluster string) bool {
	r := h.Spec.ConsumerRef
	return r != nil && r.Kind == "Cluster" && r.Name == cluster && r.Namespace == h.Namespace
}

// scale sets a MachineDeployment's replicas.
func (s *site) scale(ns, name string, replicas int32) {
	s.t.Helper()
	d := &clusterv1.MachineDeployment{}
	if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		s.t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To(replicas)
	if err := s.c.Patch(s.ctx, d, patch); err != nil {
		s.t.Fatalf("scaling MachineDeployment %s to %d: %v", name, replicas, err)
	}
}

// deploymentHosts waits until n Metal3Machines cloned from a template are
// ready on provisioned hosts, and returns those hosts, sorted.
func (s *site) deploymentHosts(ns string, n int) []string {
	s.t.Helper()
	var names []string
	s.eventually(8*time.Minute, fmt.Sprintf("%d machines ready", n), func() (bool, string) {
		var m3ms infrav1.Metal3MachineList
		if err := s.c.List(s.ctx, &m3ms, client.InNamespace(ns)); err != nil {
			return false, err.Error()
		}
		names = names[:0]
		for _, m := range m3ms.Items {
			if m.Annotations[clusterv1.TemplateClonedFromNameAnnotation] == "" || !m.Status.Ready || m.DeletionTimestamp != nil {
				continue
			}
			h := s.host(ns, hostName(m.Annotations[infrav1.HostAnnotation]))
			if h == nil || h.Status.Provisioning.State != metal3v1alpha1.StateProvisioned {
				continue
			}
			names = append(names, h.Name)
		}
		return len(names) == n && len(m3ms.Items) == n, fmt.Sprintf("%d of %d Metal3Machines ready on provisioned hosts %v", len(names), len(m3ms.Items), names)
	})
	slices.Sort(names)
	return names
}

// hostName is the name in a "<namespace>/<name>" host annotation.
func hostName(ann string) string {
	_, name, _ := strings.Cut(ann, "/")
	return name
}
