package capm3_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/metal3/capm3"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// remediationDocs: a cluster whose control plane is one machine and whose
// workers are a MachineDeployment, each machine's host joining the
// workload cluster as a Node (the emulator plays the kubelet from the
// user-data; the kubelet's provider-id names the host, so that a Node
// registered again after a reboot has it), and a MachineHealthCheck that
// hands a worker whose Node is not Ready for 2 s to a Metal3Remediation:
// reboot, at most one retry after 30 s.
const remediationDocs = `apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Cluster
metadata:
  name: rem
spec:
  controlPlaneEndpoint: {host: API_HOST, port: API_PORT}
  noCloudProvider: true
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata:
  name: rem
spec:
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Cluster, name: rem}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfig
metadata:
  name: rem-cp-0
spec:
  initConfiguration:
    nodeRegistration:
      name: '{{ ds.meta_data.name }}'
      kubeletExtraArgs:
      - {name: node-labels, value: 'metal3.io/uuid={{ ds.meta_data.uuid }}'}
      - {name: provider-id, value: 'metal3://{{ ds.meta_data.uuid }}'}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Machine
metadata:
  name: rem-cp-0
spec:
  image: IMAGE
  hostSelector: {matchLabels: {role: cp}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: rem-cp-0
  labels: {cluster.x-k8s.io/control-plane: "true"}
spec:
  clusterName: rem
  version: v1.37.1
  bootstrap:
    configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: rem-cp-0}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Machine, name: rem-cp-0}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata:
  name: workers
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
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3MachineTemplate
metadata:
  name: workers
spec:
  template:
    spec:
      image: IMAGE
      hostSelector: {matchLabels: {role: worker}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: workers
spec:
  clusterName: rem
  replicas: 2
  selector: {matchLabels: {pool: workers}}
  template:
    metadata: {labels: {pool: workers}}
    spec:
      clusterName: rem
      version: v1.37.1
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: workers}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: workers}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3RemediationTemplate
metadata:
  name: workers
spec:
  template:
    spec:
      strategy: {type: Reboot, retryLimit: 1, timeout: 30s}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata:
  name: workers
spec:
  clusterName: rem
  selector: {matchLabels: {pool: workers}}
  checks:
    unhealthyNodeConditions:
    - {type: Ready, status: "False", timeoutSeconds: 2}
    - {type: Ready, status: Unknown, timeoutSeconds: 2}
  remediation:
    templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3RemediationTemplate, name: workers}
`

// TestRemediationThroughMachineHealthCheck: Cluster API's real
// MachineHealthCheck finds a worker whose host was forced off at its BMC
// and creates a Metal3Remediation from the template; the remediation
// powers the host off through its BareMetalHost, deletes the Node, powers
// the host on again and gets the Node back (with the labels it had), and
// the Machine is healthy again. Then a
// host that cannot be powered on: after the retry the host is marked
// unhealthy and the Machine replaced, by one on the spare host, though the
// marked host is available again.
func TestRemediationThroughMachineHealthCheck(t *testing.T) {
	hosts := emulator.Generate(4, 1)
	hosts[0].Labels["role"] = "cp"
	for _, h := range hosts[1:] {
		h.Labels["role"] = "worker"
	}
	s := startSite(t, hosts, nil)
	const ns, cluster = "rem", "rem"
	s.namespace(ns)
	s.hosts(ns, hosts, nil)
	s.workloadCA(ns, cluster)
	apiHost, apiPort, _ := strings.Cut(strings.TrimPrefix(s.workloadEndpoint(), "https://"), ":")
	img, err := json.Marshal(s.image)
	if err != nil {
		t.Fatal(err)
	}
	s.apply(ns, strings.NewReplacer("API_HOST", apiHost, "API_PORT", apiPort, "IMAGE", string(img)).Replace(remediationDocs))
	s.step("cluster, workers and MachineHealthCheck applied")

	workers := s.healthyWorkers(ns, 2, nil)
	s.step("workers running with Nodes: %v", workers)

	// 1. A worker's host forced off: rebooted, and healthy again.
	victim := slices.Sorted(maps.Keys(workers))[0]
	host, node := workers[victim].host, workers[victim].node
	oldNode := s.labelNode(node, "remediation-test", "kept")
	// The host cannot be powered on until the remediation has taken it
	// off and deleted its Node, else the BareMetalHost controller would
	// power it on again (spec.online) before the MachineHealthCheck acts.
	s.forceOff(host)
	s.emu.SetFault(host, emulator.Fault{FailResets: true})
	rem := s.remediation(ns, victim, func(r *infrav1.Metal3Remediation) bool { return r.Status.Phase == infrav1.RemediationPhaseWaiting })
	if n := (&corev1.Node{}); !apierrors.IsNotFound(s.workload.Client.Get(s.ctx, client.ObjectKey{Name: node}, n)) {
		t.Errorf("Metal3Remediation %s is Waiting but Node %s was not deleted", rem.Name, node)
	}
	if h := s.host(ns, host); h == nil || h.Annotations[capm3.RemediationPowerOffPrefix+rem.Name] != "" && h.Status.PoweredOn {
		t.Errorf("host %s while the remediation waits: %+v", host, h)
	}
	s.emu.SetFault(host, emulator.Fault{})
	s.step("MachineHealthCheck created Metal3Remediation %s: host %s off, Node %s deleted; the host may power on again", rem.Name, host, node)
	s.eventually(3*time.Minute, "the remediation's Node gone and back", func() (bool, string) {
		n := &corev1.Node{}
		err := s.workload.Client.Get(s.ctx, client.ObjectKey{Name: node}, n)
		r := &infrav1.Metal3Remediation{}
		rerr := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: victim}, r)
		return err == nil && n.UID != oldNode && apierrors.IsNotFound(rerr),
			fmt.Sprintf("Node %s: %v uid %s (was %s); remediation: %v %s", node, err, n.UID, oldNode, rerr, r.Status.Phase)
	})
	n := &corev1.Node{}
	if err := s.workload.Client.Get(s.ctx, client.ObjectKey{Name: node}, n); err != nil {
		t.Fatal(err)
	}
	if n.Labels["remediation-test"] != "kept" {
		t.Errorf("Node %s registered again without the label it had: %v", node, n.Labels)
	}
	if h := s.host(ns, host); h == nil || hasPrefixKey(h.Annotations, capm3.RemediationPowerOffPrefix) || !h.Status.PoweredOn {
		t.Errorf("host %s after remediation: %+v", host, h)
	}
	again := s.healthyWorkers(ns, 2, nil)
	if again[victim].host != host {
		t.Errorf("Machine %s after remediation is on host %q, want %s", victim, again[victim].host, host)
	}
	s.step("%s rebooted through %s, Node %s back with its labels, Machine healthy", victim, host, node)

	// 2. A host that cannot be powered on: retried once, then given up
	// and the Machine replaced on the spare host.
	victim = slices.Sorted(maps.Keys(again))[1]
	host = again[victim].host
	s.forceOff(host)
	s.emu.SetFault(host, emulator.Fault{FailResets: true})
	rem = s.remediation(ns, victim, func(r *infrav1.Metal3Remediation) bool {
		return r.Status.Phase == infrav1.RemediationPhaseDeleting
	})
	if rem.Status.RetryCount != 1 {
		t.Errorf("Metal3Remediation %s gave up after retryCount %d, want 1", rem.Name, rem.Status.RetryCount)
	}
	if h := s.host(ns, host); h == nil || h.Annotations[infrav1.UnhealthyAnnotation] == "" {
		t.Errorf("host %s was not marked %s: %+v", host, infrav1.UnhealthyAnnotation, h)
	}
	s.step("%s given up after one retry; host %s marked unhealthy", victim, host)
	// The BMC answers again: the Machine's deletion deprovisions the host
	// (its MachineSet counts a deleting Machine until it is gone), which
	// comes back available, but marked: the new Machine takes the spare.
	s.emu.SetFault(host, emulator.Fault{})
	replaced := s.healthyWorkers(ns, 2, func(w map[string]worker) bool { _, old := w[victim]; return !old })
	for m, w := range replaced {
		if w.host == host {
			t.Errorf("Machine %s is on the unhealthy host %s", m, host)
		}
	}
	if h := s.host(ns, host); h == nil || h.Spec.ConsumerRef != nil || h.Annotations[infrav1.UnhealthyAnnotation] == "" {
		t.Errorf("host %s after the replacement: %+v, want unclaimed and still marked unhealthy", host, h)
	}
	s.step("replaced: %v", replaced)
}

// worker is a Machine's host and Node.
type worker struct{ host, node string }

func hasPrefixKey(m map[string]string, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// healthyWorkers waits until n worker Machines (of the MachineDeployment)
// are Running with a Ready Node, and, when more is given, more holds for
// them; it returns them by Machine name.
func (s *site) healthyWorkers(ns string, n int, more func(map[string]worker) bool) map[string]worker {
	s.t.Helper()
	var out map[string]worker
	s.eventually(8*time.Minute, fmt.Sprintf("%d healthy workers", n), func() (bool, string) {
		out = map[string]worker{}
		var ms clusterv1.MachineList
		if err := s.c.List(s.ctx, &ms, client.InNamespace(ns), client.MatchingLabels{"pool": "workers"}); err != nil {
			return false, err.Error()
		}
		var notes []string
		for _, m := range ms.Items {
			if !m.DeletionTimestamp.IsZero() || m.Status.Phase != string(clusterv1.MachinePhaseRunning) || m.Status.NodeRef.Name == "" {
				notes = append(notes, m.Name+" "+m.Status.Phase)
				continue
			}
			if c := apimeta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineHealthCheckSucceededCondition); c != nil && c.Status != metav1.ConditionTrue {
				notes = append(notes, m.Name+" unhealthy")
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
			out[m.Name] = worker{host: hostName(m3m.Annotations[infrav1.HostAnnotation]), node: m.Status.NodeRef.Name}
		}
		ok := len(out) == n && len(ms.Items) == n && (more == nil || more(out))
		return ok, fmt.Sprintf("%d of %d healthy (%d Machines): %v; %v", len(out), n, len(ms.Items), out, notes)
	})
	return out
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// labelNode adds a label to a workload Node and returns its UID.
func (s *site) labelNode(name, key, value string) types.UID {
	s.t.Helper()
	n := &corev1.Node{}
	if err := s.workload.Client.Get(s.ctx, client.ObjectKey{Name: name}, n); err != nil {
		s.t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	n.Labels[key] = value
	if err := s.workload.Client.Patch(s.ctx, n, patch); err != nil {
		s.t.Fatal(err)
	}
	return n.UID
}

// forceOff turns a host off at its BMC (ComputerSystem.Reset ForceOff),
// as a failure would.
func (s *site) forceOff(host string) {
	s.t.Helper()
	addr := strings.TrimPrefix(s.emu.Address(host), "redfish-virtualmedia+")
	body := bytes.NewBufferString(`{"ResetType":"ForceOff"}`)
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, addr+"/Actions/ComputerSystem.Reset", body)
	if err != nil {
		s.t.Fatal(err)
	}
	req.SetBasicAuth("admin", bmcPassword)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		s.t.Fatalf("ForceOff %s: %s", host, resp.Status)
	}
	if st, _ := s.emu.State(host); st.PowerOn {
		s.t.Fatalf("host %s still on after ForceOff", host)
	}
}

// remediation waits for the Metal3Remediation of a Machine, owned by it,
// until cond holds.
func (s *site) remediation(ns, machine string, cond func(*infrav1.Metal3Remediation) bool) *infrav1.Metal3Remediation {
	s.t.Helper()
	r := &infrav1.Metal3Remediation{}
	s.eventually(5*time.Minute, "Metal3Remediation "+machine, func() (bool, string) {
		if err := s.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: machine}, r); err != nil {
			return false, err.Error()
		}
		owned := ownedBy(r.OwnerReferences, "Machine", machine)
		return owned && cond(r), fmt.Sprintf("owned by the Machine %v, phase %q, retries %d", owned, r.Status.Phase, r.Status.RetryCount)
	})
	return r
}
