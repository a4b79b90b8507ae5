package metal3operator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// replicaStep bounds a step of Ironic's seen through the operator, or a
// leader election, on a loaded machine.
const replicaStep = 6 * time.Minute

// replica is one metal3-operator process of a test: its manager, what it
// logged, and how to stop it.
type replica struct {
	name   string
	mgr    ctrl.Manager
	stop   context.CancelFunc
	done   chan error
	halted sync.Once

	mu    sync.Mutex
	lines []string
}

func (r *replica) log(prefix, args string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, prefix+" "+args)
}

// logged counts the replica's log lines holding s.
func (r *replica) logged(s string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// tail is the replica's last n log lines.
func (r *replica) tail(n int) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines[max(0, len(r.lines)-n):], "\n")
}

func (r *replica) elected() bool {
	select {
	case <-r.mgr.Elected():
		return true
	default:
		return false
	}
}

// startReplica starts a metal3-operator replica with leader election on
// (the Lease in metal3-system) driving inst, until the test ends or stop.
func startReplica(t *testing.T, env *testenv.Env, inst *localironic.Instance, name string) *replica {
	t.Helper()
	r := &replica{name: name, done: make(chan error, 1)}
	o := DefaultOptions()
	o.LeaderElection = true
	o.LeaderElectionNamespace = "metal3-system"
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.SkipControllerNameValidation = true
	o.Controllers = []string{BareMetalHostController}
	o.PowerPollInterval = time.Second
	o.BMCTimeout = 5 * time.Second
	o.IronicEndpoint, o.DeployISO = inst.APIURL, inst.DeployISOURL
	o.ProvisionPollInterval = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	mgr, err := NewManager(ctx, env.Config, o, funcr.New(r.log, funcr.Options{Verbosity: 1}))
	if err != nil {
		cancel()
		t.Fatalf("replica %s: %v", name, err)
	}
	r.mgr = mgr
	go func() { r.done <- mgr.Start(ctx) }()
	t.Cleanup(func() { r.halt(t) })
	return r
}

// halt stops the replica and waits for its manager to return; again, it
// does nothing.
func (r *replica) halt(t *testing.T) {
	r.halted.Do(func() {
		r.stop()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("replica %s: %v", r.name, err)
			}
		case <-time.After(2 * time.Minute):
			t.Errorf("replica %s did not stop", r.name)
		}
	})
}

// TestReplicasShareOneIronic: two metal3-operator replicas with leader
// election against one API server and one Ironic: only the leader
// reconciles, Ironic holds exactly one node per host; the leader stopped,
// the other takes over, and the hosts keep going (a new host is enrolled
// and made available once, a host is powered on).
func TestReplicasShareOneIronic(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{CRDDirs: []string{"config/metal3/crd/bases"}, AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme}})
	inst := testenv.Ironic(t)
	hosts := emulator.Generate(3, 2)
	emu, err := emulator.New(emulator.Config{Username: "admin", Password: "pw-replicas", Hosts: hosts}, emulator.Options{HeartbeatInterval: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emu.Start(t.Context(), "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, ns := range []string{"metal3", "metal3-system"} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "bmc"}, Data: map[string][]byte{"username": []byte("admin"), "password": []byte("pw-replicas")}}); err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Ironic's nodes: %+v", ironicNodes(t, inst, "uuid,name,provision_state,target_provision_state,last_error,reservation"))
		}
	})
	a := startReplica(t, env, inst, "a")
	waitElected(t, a)
	b := startReplica(t, env, inst, "b")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last lines of replica a:\n%s\nof replica b:\n%s", a.tail(30), b.tail(30))
		}
	})
	// One host after the other: Ironic on sqlite can lose a node's
	// verification to "database is locked" when two run at once.
	ids := map[string]string{}
	for _, h := range hosts[:2] {
		createHost(t, env, emu, h)
		ids[h.Name] = waitHost(t, env, h.Name, "available", func(bmh *metal3v1alpha1.BareMetalHost) bool {
			return bmh.Status.Provisioning.State == metal3v1alpha1.StateAvailable && bmh.Status.ErrorType == ""
		}).Status.Provisioning.ID
	}
	if b.elected() || b.logged(`"msg"="state changed"`) > 0 {
		t.Errorf("the follower reconciled (elected %v): %d state changes logged", b.elected(), b.logged(`"msg"="state changed"`))
	}
	if a.logged(`"msg"="state changed"`) == 0 {
		t.Errorf("the leader logged no state change")
	}
	checkNodes(t, inst, ids)

	a.halt(t)
	waitElected(t, b)
	createHost(t, env, emu, hosts[2])
	ids[hosts[2].Name] = waitHost(t, env, hosts[2].Name, "available under the new leader", func(bmh *metal3v1alpha1.BareMetalHost) bool {
		return bmh.Status.Provisioning.State == metal3v1alpha1.StateAvailable && bmh.Status.ErrorType == ""
	}).Status.Provisioning.ID
	before, _ := emu.State(hosts[0].Name)
	setOnline(t, env, hosts[0].Name)
	h := waitHost(t, env, hosts[0].Name, "powered on by the new leader", func(bmh *metal3v1alpha1.BareMetalHost) bool {
		return bmh.Status.PoweredOn && bmh.Status.ErrorType == ""
	})
	if h.Status.Provisioning.ID != ids[hosts[0].Name] {
		t.Errorf("%s registered again under the new leader: id %s, was %s", h.Name, h.Status.Provisioning.ID, ids[hosts[0].Name])
	}
	if st, _ := emu.State(hosts[0].Name); !st.PowerOn || st.Resets != before.Resets+1 {
		t.Errorf("%s: on %v after %d resets, want on after one", hosts[0].Name, st.PowerOn, st.Resets-before.Resets)
	}
	if b.logged(`"msg"="state changed"`) == 0 {
		t.Errorf("the new leader logged no state change")
	}
	checkNodes(t, inst, ids)
}

func waitElected(t *testing.T, r *replica) {
	t.Helper()
	select {
	case <-r.mgr.Elected():
	case <-time.After(replicaStep):
		t.Fatalf("replica %s never became the leader", r.name)
	}
}

// createHost creates the BareMetalHost of emulated host h, cleaning off.
func createHost(t *testing.T, env *testenv.Env, emu *emulator.Server, h emulator.Host) {
	t.Helper()
	bmh := &metal3v1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: h.Name},
		Spec: metal3v1alpha1.BareMetalHostSpec{
			BMC:                   metal3v1alpha1.BMCDetails{Address: emu.Address(h.Name), CredentialsName: "bmc"},
			BootMACAddress:        h.NICs[0].MAC,
			AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled,
		},
	}
	if err := env.Client.Create(context.Background(), bmh); err != nil {
		t.Fatal(err)
	}
}

func setOnline(t *testing.T, env *testenv.Env, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		h := &metal3v1alpha1.BareMetalHost{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: "metal3", Name: name}, h); err != nil {
			return false, err
		}
		h.Spec.Online = true
		return env.Client.Update(ctx, h) == nil, nil
	})
	if err != nil {
		t.Fatalf("setting %s online: %v", name, err)
	}
}

func waitHost(t *testing.T, env *testenv.Env, name, what string, ok func(*metal3v1alpha1.BareMetalHost) bool) *metal3v1alpha1.BareMetalHost {
	t.Helper()
	h := &metal3v1alpha1.BareMetalHost{}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, replicaStep, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: "metal3", Name: name}, h); err != nil {
			return false, nil
		}
		return ok(h), nil
	})
	if err != nil {
		st, _ := json.Marshal(h.Status)
		t.Fatalf("host %s never %s: %s", name, what, st)
	}
	return h
}

// ironicNode is what the test reads of Ironic's nodes.
type ironicNode struct {
	UUID                 string `json:"uuid"`
	Name                 string `json:"name"`
	ProvisionState       string `json:"provision_state"`
	TargetProvisionState string `json:"target_provision_state"`
	LastError            string `json:"last_error"`
	Reservation          string `json:"reservation"`
}

// ironicNodes lists Ironic's nodes with the given fields.
func ironicNodes(t *testing.T, inst *localironic.Instance, fields string) []ironicNode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, inst.APIURL+"/v1/nodes?fields="+fields, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.81")
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var list struct {
		Nodes []ironicNode `json:"nodes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatalf("listing Ironic's nodes: %s: %v", resp.Status, err)
	}
	return list.Nodes
}

// checkNodes checks that Ironic holds exactly one node per host, named
// metal3~<host>, of the host's status.provisioning.ID.
func checkNodes(t *testing.T, inst *localironic.Instance, ids map[string]string) {
	t.Helper()
	var got, want []string
	for _, n := range ironicNodes(t, inst, "uuid,name") {
		got = append(got, n.Name+"="+n.UUID)
	}
	for host, id := range ids {
		want = append(want, fmt.Sprintf("metal3~%s=%s", host, id))
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Ironic's nodes %v, want one per host %v", got, want)
	}
}
