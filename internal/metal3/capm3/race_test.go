package capm3_test

import (
	"fmt"
	"strings"
	"sync"
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
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// workerCluster creates a Cluster with a Metal3Cluster (a cloud provider
// sets providerIDs, so the provider does not look for Nodes) and a
// bootstrap data Secret its worker Machines share.
func (s *site) workerCluster(ns, name string) {
	s.t.Helper()
	host, port := s.workload.Config.Host, 0
	if i := strings.LastIndex(host, ":"); i > 0 {
		if _, err := fmt.Sscanf(host[i+1:], "%d", &port); err != nil {
			s.t.Fatalf("port of %s: %v", host, err)
		}
		host = strings.TrimPrefix(host[:i], "https://")
	}
	enabled := true
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-bootstrap", Labels: map[string]string{clusterv1.ClusterNameLabel: name}},
			Type: "cluster.x-k8s.io/secret", Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")}},
		&infrav1.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: host, Port: port}, CloudProviderEnabled: &enabled}},
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: name}}},
	}
	for _, o := range objs {
		if err := s.c.Create(s.ctx, o); err != nil {
			s.t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// worker creates a Metal3Machine and its Machine.
func (s *site) worker(ns, cluster, name string, spec infrav1.Metal3MachineSpec) error {
	m3m := &infrav1.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
	if err := s.c.Create(s.ctx, m3m); err != nil {
		return err
	}
	secret := cluster + "-bootstrap"
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       cluster,
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: &secret},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Machine", Name: name},
		},
	}
	return s.c.Create(s.ctx, m)
}

// Sizes of the race: raceMachines machines for raceHosts hosts. Every
// host is enrolled, inspected, cleaned and provisioned by the one local
// Ironic (sqlite, one process) on a small shared machine, where 24 hosts at
// once sometimes left nodes stuck on "database is locked"; so the race is
// 20 for 16 (it was 50 for 40 when the operator only booted images from
// virtual media): as many machines at once as the operator's 20 workers,
// and machines left waiting.
const (
	raceHosts    = 16
	raceMachines = 20
)

// TestMachinesRaceForHosts: raceMachines machines created at once race for
// raceHosts hosts; each host is claimed once, by a machine that names it,
// and the others wait with a condition that says why. Scaling down
// (deleting a Machine) deprovisions (through Ironic) and releases its
// host, which a waiting machine then claims.
func TestMachinesRaceForHosts(t *testing.T) {
	hosts := emulator.Generate(raceHosts, 4)
	s := startSite(t, hosts, nil)
	const ns, cluster = "race", "race"
	s.namespace(ns)
	s.hosts(ns, hosts, nil)
	s.step("%d hosts available", raceHosts)
	s.workerCluster(ns, cluster)

	var wg sync.WaitGroup
	errs := make(chan error, raceMachines)
	for i := range raceMachines {
		wg.Go(func() { errs <- s.worker(ns, cluster, fmt.Sprintf("worker-%02d", i), s.machineSpec()) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s.step("%d Machines and Metal3Machines created at once", raceMachines)

	claims := func() (byHost map[string]string, waiting []string, msg string) {
		var list metal3v1alpha1.BareMetalHostList
		if err := s.c.List(s.ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, nil, err.Error()
		}
		byHost = map[string]string{}
		for _, h := range list.Items {
			if h.Spec.ConsumerRef != nil {
				byHost[h.Name] = h.Spec.ConsumerRef.Name
			}
		}
		var m3ms infrav1.Metal3MachineList
		if err := s.c.List(s.ctx, &m3ms, client.InNamespace(ns)); err != nil {
			return nil, nil, err.Error()
		}
		for _, m := range m3ms.Items {
			if c := apimeta.FindStatusCondition(m.Status.Conditions, infrav1.AssociateBareMetalHostCondition); c != nil &&
				c.Status == metav1.ConditionFalse && c.Reason == infrav1.NoHostAvailableReason && strings.Contains(c.Message, "no available BareMetalHost") {
				waiting = append(waiting, m.Name)
			}
		}
		return byHost, waiting, fmt.Sprintf("%d hosts claimed, %d machines waiting with a reason", len(byHost), len(waiting))
	}
	s.eventually(3*time.Minute, "every host claimed, the other machines waiting", func() (bool, string) {
		byHost, waiting, msg := claims()
		return len(byHost) == raceHosts && len(waiting) == raceMachines-raceHosts, msg
	})
	s.step("%d hosts claimed, %d machines waiting", raceHosts, raceMachines-raceHosts)
	byHost, waiting, _ := claims()
	consumers := map[string]string{}
	for h, m := range byHost {
		if other, dup := consumers[m]; dup {
			t.Errorf("machine %s consumes hosts %s and %s", m, other, h)
		}
		consumers[m] = h
	}
	var m3ms infrav1.Metal3MachineList
	if err := s.c.List(s.ctx, &m3ms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, m := range m3ms.Items {
		ann := m.Annotations[infrav1.HostAnnotation]
		h, has := consumers[m.Name]
		switch {
		case has && ann != ns+"/"+h:
			t.Errorf("machine %s consumes host %s but its annotation says %q", m.Name, h, ann)
		case !has && ann != "":
			t.Errorf("machine %s consumes no host but its annotation says %q", m.Name, ann)
		}
	}
	// A waiting machine's condition, written while the others were still
	// claiming, counts the consumed hosts once it is looked at again.
	s.eventually(2*time.Minute, "a waiting machine's condition counts the consumed hosts", func() (bool, string) {
		m := &infrav1.Metal3Machine{}
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: waiting[0]}, m); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(m.Status.Conditions, infrav1.AssociateBareMetalHostCondition)
		if c == nil {
			return false, "no condition"
		}
		return strings.Contains(c.Message, fmt.Sprintf("%d consumed", raceHosts)), c.Reason + ": " + c.Message
	})

	// Scale down: delete a Machine that holds a host once it is
	// provisioned; its host is deprovisioned, released and claimed by one
	// of the waiting machines.
	var victim, freed string
	for m, h := range consumers {
		victim, freed = m, h
		break
	}
	s.eventually(6*time.Minute, "the victim's host provisioned", func() (bool, string) {
		h := &metal3v1alpha1.BareMetalHost{}
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: freed}, h); err != nil {
			return false, err.Error()
		}
		return h.Status.Provisioning.State == metal3v1alpha1.StateProvisioned, string(h.Status.Provisioning.State)
	})
	if cd := s.provisionedDisk(freed, s.imageData); string(cd.UserData) != "#cloud-config\n" {
		t.Errorf("host %s's config drive holds user-data %q, want the bootstrap data", freed, cd.UserData)
	}
	if err := s.c.Delete(s.ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: victim}}); err != nil {
		t.Fatal(err)
	}
	s.eventually(6*time.Minute, "the freed host claimed by a waiting machine", func() (bool, string) {
		h := &metal3v1alpha1.BareMetalHost{}
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: freed}, h); err != nil {
			return false, err.Error()
		}
		who := ""
		if h.Spec.ConsumerRef != nil {
			who = h.Spec.ConsumerRef.Name
		}
		for _, w := range waiting {
			if who == w {
				return true, ""
			}
		}
		return false, fmt.Sprintf("host %s is %s, consumed by %q", freed, h.Status.Provisioning.State, who)
	})
	s.step("deleting Machine %s released host %s, claimed again by a waiting machine", victim, freed)
	// The host is released (and may be claimed again) before the
	// Metal3Machine's finalizer goes, so its deletion may trail by a moment.
	s.eventually(time.Minute, "the deleted Machine's Metal3Machine gone", func() (bool, string) {
		err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: victim}, &infrav1.Metal3Machine{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("Metal3Machine %s still exists (%v)", victim, err)
	})
	noPassword(t, s, ns)
}
