package capm3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	ctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestPivotAdoptsThroughIronic: a host provisioned through the
// management cluster's Ironic by the seed's documents is moved with its
// Cluster (clusterctl move) to the workload cluster, where Cluster API,
// this provider and a second operator driving a second, fresh Ironic run.
// The host arrives paused with its status annotation, is enrolled in the
// second Ironic and adopted there (active, never deployed: no agent ever
// heartbeated to it), and ends provisioned, its Machine still Running.
// Nothing touches the host: the emulator counts no reset, no media, the
// disk file keeps its modification time and content, the host stays on,
// booted from disk, with its Node. The first Ironic still holds its node,
// active and on (its power sync only reads).
func TestPivotAdoptsThroughIronic(t *testing.T) {
	host := seedHost()
	s := startSite(t, []emulator.Host{host}, nil)
	const ns = "metal3"
	s.seedFlow(host)
	s.step("node-1 provisioned through the first Ironic, Machine Running")
	before := s.hostSnapshot("node-1")
	bmh := s.host(ns, "node-1")
	firstNode := bmh.Status.Provisioning.ID
	// clusterctl waits for this annotation to go before it moves anything:
	// the provider lifts it only with the status annotation written.
	if _, ok := bmh.Annotations[clusterctlv1.BlockMoveAnnotation]; !ok {
		t.Errorf("the claimed host lacks %s: a move would not wait for its status annotation", clusterctlv1.BlockMoveAnnotation)
	}

	capienv.Init(t, s.workload, capienv.InitOptions{Infrastructure: map[string]string{"metal3": "config/metal3/default"}})
	capienv.Start(t, s.workload, capienv.Options{Name: "workload-"})
	second := startIronic(t)
	startOperator(t, s.workload, second, nil)
	s.step("workload: Cluster API, a second Ironic and metal3-operator running")

	moved := time.Now()
	s.move(ns)
	s.step("clusterctl move of namespace %s done", ns)

	target := &site{t: t, ctx: s.ctx, start: s.start, c: s.workload.Client, emu: s.emu}
	var adopted *metal3v1alpha1.BareMetalHost
	target.eventually(6*time.Minute, "node-1 adopted by the second Ironic", func() (bool, string) {
		adopted = target.host(ns, "node-1")
		if adopted == nil {
			return false, "no host yet"
		}
		_, paused := adopted.Annotations[metal3v1alpha1.PausedAnnotation]
		p := adopted.Status.Provisioning
		msg := fmt.Sprintf("paused %v state %q id %q error %q %q", paused, p.State, p.ID, adopted.Status.ErrorType, adopted.Status.ErrorMessage)
		if paused || p.State != metal3v1alpha1.StateProvisioned || adopted.Status.ErrorType != "" || p.ID == "" || p.ID == firstNode {
			return false, msg
		}
		// Registered in the second Ironic: the node adopted there.
		n, err := getNode(t.Context(), second, p.ID)
		if err != nil {
			return false, msg + "; " + err.Error()
		}
		return n.ProvisionState == "active", msg + "; the second Ironic's node is " + n.ProvisionState
	})
	s.step("node-1 provisioned in the workload cluster, node %s of the second Ironic", adopted.Status.Provisioning.ID)
	if adopted.Status.Provisioning.Image.URL != bmh.Spec.Image.URL || !adopted.Status.PoweredOn || adopted.Spec.ConsumerRef == nil {
		t.Errorf("adopted host: image %+v poweredOn %v consumerRef %+v", adopted.Status.Provisioning.Image, adopted.Status.PoweredOn, adopted.Spec.ConsumerRef)
	}
	n := ironicNode(t, second, adopted.Status.Provisioning.ID)
	if n.ProvisionState != "active" || n.ProvisionUpdatedAt == nil || n.ProvisionUpdatedAt.Before(moved.Add(-time.Second)) || n.PowerState != "power on" {
		t.Errorf("second Ironic's node: provision_state %q updated %v power %q, want active since the move, on", n.ProvisionState, n.ProvisionUpdatedAt, n.PowerState)
	}
	for _, k := range []string{"agent_url", "agent_last_heartbeat", "deploy_steps"} {
		if _, ok := n.DriverInternalInfo[k]; ok {
			t.Errorf("second Ironic's node has driver_internal_info %s: it was deployed, not adopted", k)
		}
	}
	target.eventually(2*time.Minute, "the moved Machine Running", func() (bool, string) {
		m := &clusterv1.Machine{}
		if err := target.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "test1-controlplane-0"}, m); err != nil {
			return false, err.Error()
		}
		m3m := &infrav1.Metal3Machine{}
		if err := target.c.Get(s.ctx, client.ObjectKey{Namespace: ns, Name: "test1-controlplane-0"}, m3m); err != nil {
			return false, err.Error()
		}
		return m.Status.Phase == "Running" && m.Status.NodeRef.Name == "node-1" && m3m.Status.Ready,
			fmt.Sprintf("Machine %s nodeRef %q; Metal3Machine ready %v", m.Status.Phase, m.Status.NodeRef.Name, m3m.Status.Ready)
	})

	target.eventually(time.Minute, "the moved host blocks the next move again", func() (bool, string) {
		h := target.host(ns, "node-1")
		_, blocked := h.Annotations[clusterctlv1.BlockMoveAnnotation]
		_, status := h.Annotations[metal3v1alpha1.StatusAnnotation]
		return blocked && !status, fmt.Sprintf("block-move %v, status annotation %v", blocked, status)
	})

	// The host was not touched by either Ironic.
	after := s.hostSnapshot("node-1")
	if after != before {
		t.Errorf("node-1 changed across the pivot:\nbefore %+v\nafter  %+v", before, after)
	}
	old := ironicNode(t, s.ironic, firstNode)
	if old.ProvisionState != "active" || old.PowerState != "power on" {
		t.Errorf("the first Ironic's node: provision_state %q power %q, want it kept active and on", old.ProvisionState, old.PowerState)
	}
	s.step("the host untouched %s after the move; the first Ironic keeps its node active", time.Since(moved).Round(time.Second))
	noPassword(t, target, ns)
}

// hostSnapshot is what a pivot must leave as it is: the emulator's view
// of the host and its disk file.
type hostSnapshot struct {
	Resets                             int
	PowerOn, Booted, Media             bool
	BootedFrom, Node, Disk             string
	MediaImage                         string
	DiskModTime                        time.Time
	DiskSize                           int64
	HeadSum, ConfigDriveSum            [sha256.Size]byte
	ConfigDriveOffset, ConfigDriveSize int64
}

func (s *site) hostSnapshot(name string) hostSnapshot {
	s.t.Helper()
	st, _ := s.emu.State(name)
	snap := hostSnapshot{Resets: st.Resets, PowerOn: st.PowerOn, Booted: st.Booted, Media: st.Media.Inserted,
		BootedFrom: st.BootedFrom, Node: st.Node, Disk: st.NodeDisk, MediaImage: st.Media.Image}
	f, err := os.Open(s.emu.DiskPath(name, "sda"))
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		s.t.Fatal(err)
	}
	snap.DiskModTime, snap.DiskSize = fi.ModTime(), fi.Size()
	snap.HeadSum = sectionSum(s.t, f, 0, 4<<20)
	off, n, err := configdrive.Find(f, fi.Size())
	if err != nil {
		s.t.Fatalf("host %s's config drive: %v", name, err)
	}
	snap.ConfigDriveOffset, snap.ConfigDriveSize = off, n
	snap.ConfigDriveSum = sectionSum(s.t, f, off, n)
	return snap
}

func sectionSum(t *testing.T, f *os.File, off, n int64) [sha256.Size]byte {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, off, n)); err != nil {
		t.Fatal(err)
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// move runs clusterctl move of namespace ns from the management cluster
// to the workload cluster, as the pivot phase does.
func (s *site) move(ns string) {
	s.t.Helper()
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Minute)
	defer cancel()
	cfg, err := ctlconfig.New(ctx, "", ctlconfig.InjectReader(ctlconfig.NewMemoryReader()))
	if err != nil {
		s.t.Fatal(err)
	}
	c, err := ctlclient.New(ctx, "", ctlclient.InjectConfig(cfg))
	if err != nil {
		s.t.Fatal(err)
	}
	kc := func(env *testenv.Env) ctlclient.Kubeconfig {
		raw, err := clientcmd.LoadFromFile(env.Kubeconfig)
		if err != nil {
			s.t.Fatal(err)
		}
		return ctlclient.Kubeconfig{Path: env.Kubeconfig, Context: raw.CurrentContext}
	}
	if err := c.Move(ctx, ctlclient.MoveOptions{FromKubeconfig: kc(s.mgmt), ToKubeconfig: kc(s.workload), Namespace: ns}); err != nil {
		s.t.Fatalf("clusterctl move: %v", err)
	}
	if err := s.workload.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "node-1-bmc-secret"}, &corev1.Secret{}); err != nil {
		s.t.Errorf("the host's BMC Secret did not move: %v", err)
	}
}

// node is what the test reads of an Ironic node.
type node struct {
	ProvisionState     string         `json:"provision_state"`
	PowerState         string         `json:"power_state"`
	ProvisionUpdatedAt *time.Time     `json:"provision_updated_at"`
	DriverInternalInfo map[string]any `json:"driver_internal_info"`
}

func ironicNode(t *testing.T, inst *localironic.Instance, id string) node {
	t.Helper()
	n, err := getNode(t.Context(), inst, id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// getNode reads node id of inst's API.
func getNode(ctx context.Context, inst *localironic.Instance, id string) (node, error) {
	var n node
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, inst.APIURL+"/v1/nodes/"+id, nil)
	if err != nil {
		return n, err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		return n, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return n, err
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("GET node %s of %s: %s: %s", id, inst.APIURL, resp.Status, bytes.TrimSpace(body))
	}
	if err := json.Unmarshal(body, &n); err != nil {
		return n, fmt.Errorf("node %s: %w", id, err)
	}
	return n, nil
}
