package baremetalhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestPausedHostKeepsStatusAnnotation: the Cluster API provider pauses a
// host and copies its status into the status annotation before a move.
// While paused, the host keeps the annotation (the move must carry it);
// a host that arrives paused with an empty status gets its status back at
// once, and loses the annotation only when unpaused.
func TestPausedHostKeepsStatusAnnotation(t *testing.T) {
	r := newRig(t, 2)
	ctx := context.Background()
	// host-0000: registered and available, then paused with a copy of its
	// status, as before a move.
	r.host(0, password, nil)
	h := r.waitState("host-0000", metal3v1alpha1.StateAvailable)
	raw, err := json.Marshal(h.Status)
	if err != nil {
		t.Fatal(err)
	}
	h.Annotations = map[string]string{metal3v1alpha1.PausedAnnotation: "metal3.io/capm3", metal3v1alpha1.StatusAnnotation: string(raw)}
	if err := r.c.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	// host-0001: arrives paused, with a status annotation and no status,
	// as on the target of a move: provisioned with the image its spec
	// names (else, once unpaused, it would rightly be deprovisioned).
	img := metal3v1alpha1.Image{URL: "http://172.22.0.1/images/node.img", Checksum: "http://172.22.0.1/images/node.img.md5sum"}
	moved := metal3v1alpha1.BareMetalHostStatus{
		OperationalStatus: metal3v1alpha1.OperationalStatusOK,
		HardwareDetails:   &metal3v1alpha1.HardwareDetails{Hostname: "moved"},
		Provisioning:      metal3v1alpha1.ProvisionStatus{State: metal3v1alpha1.StateProvisioned, ID: "old", Image: img},
	}
	raw, err = json.Marshal(moved)
	if err != nil {
		t.Fatal(err)
	}
	r.host(1, password, func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.Online = true
		h.Spec.Image = img.DeepCopy()
		h.Annotations = map[string]string{metal3v1alpha1.PausedAnnotation: "metal3.io/capm3", metal3v1alpha1.StatusAnnotation: string(raw)}
	})
	got := r.wait("host-0001", "status restored while paused", func(h *metal3v1alpha1.BareMetalHost) bool {
		return h.Status.Provisioning.State == metal3v1alpha1.StateProvisioned
	})
	if _, ok := got.Annotations[metal3v1alpha1.StatusAnnotation]; !ok || got.Status.HardwareDetails.Hostname != "moved" {
		t.Errorf("paused moved host: annotation kept %v, hostname %q", ok, got.Status.HardwareDetails.Hostname)
	}
	// host-0000 was reconciled while paused (the controller logs that it
	// left it alone) and kept the annotation.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, l := range strings.Split(r.logs.all(), "\n") {
			if strings.Contains(l, "host-0000") && strings.Contains(l, "paused: not reconciling") {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatal("host-0000 was not reconciled while paused")
	}
	got = r.wait("host-0001", "read", func(*metal3v1alpha1.BareMetalHost) bool { return true })
	delete(got.Annotations, metal3v1alpha1.PausedAnnotation)
	if err := r.c.Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	r.wait("host-0001", "annotation dropped once unpaused", func(h *metal3v1alpha1.BareMetalHost) bool {
		_, ok := h.Annotations[metal3v1alpha1.StatusAnnotation]
		return !ok && h.Status.Provisioning.State == metal3v1alpha1.StateProvisioned
	})
	if err := r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: "host-0000"}, h); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Annotations[metal3v1alpha1.StatusAnnotation]; !ok {
		t.Error("a paused host lost its status annotation: the move would not carry its status")
	}
}

// TestMovedHostAdoptedByIronic: on the target of a move, a host arrives
// paused with the status annotation of a host provisioned by another
// Ironic. Once unpaused, metal3-operator enrolls it in its own, fresh
// Ironic and adopts it there: the node goes active without a deploy (no
// deploy agent ever heartbeated to it), the host stays provisioned with
// the new node's ID, and nothing reaches the host: no power request, no
// media, nothing written to its disk.
func TestMovedHostAdoptedByIronic(t *testing.T) {
	inst := testenv.Ironic(t)
	r := newIronicRig(t, 1, inst)
	emuHost := r.emu.Hosts()[0]
	img := metal3v1alpha1.Image{URL: inst.HTTPURL + "/node.img", Checksum: inst.HTTPURL + "/node.img.md5sum", ChecksumType: metal3v1alpha1.MD5}
	moved := metal3v1alpha1.BareMetalHostStatus{
		OperationalStatus: metal3v1alpha1.OperationalStatusOK,
		HardwareDetails:   &metal3v1alpha1.HardwareDetails{Hostname: "moved", NIC: []metal3v1alpha1.NIC{{Name: "eth0", MAC: emuHost.NICs[0].MAC}}},
		Provisioning:      metal3v1alpha1.ProvisionStatus{State: metal3v1alpha1.StateProvisioned, ID: "node-of-the-source-ironic", Image: img},
	}
	raw, err := json.Marshal(moved)
	if err != nil {
		t.Fatal(err)
	}
	r.host(0, password, func(h *metal3v1alpha1.BareMetalHost) {
		h.Spec.BootMACAddress = emuHost.NICs[0].MAC
		h.Spec.Image = img.DeepCopy()
		h.Annotations = map[string]string{metal3v1alpha1.PausedAnnotation: "metal3.io/capm3", metal3v1alpha1.StatusAnnotation: string(raw)}
	})
	r.wait("host-0000", "status restored while paused", func(h *metal3v1alpha1.BareMetalHost) bool {
		return h.Status.Provisioning.State == metal3v1alpha1.StateProvisioned
	})
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { delete(h.Annotations, metal3v1alpha1.PausedAnnotation) })
	var h metal3v1alpha1.BareMetalHost
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: "host-0000"}, &h); err != nil {
			return false, nil
		}
		id := h.Status.Provisioning.ID
		if h.Status.Provisioning.State != metal3v1alpha1.StateProvisioned || h.Status.ErrorType != "" || id == "" || id == moved.Provisioning.ID {
			return false, nil
		}
		// Enrolled: adopted once Ironic has the node active.
		return getIronicNode(t, inst.APIURL, id)["provision_state"] == "active", nil
	}); err != nil {
		t.Fatalf("the moved host was not adopted: state %q id %q error %q %q", h.Status.Provisioning.State, h.Status.Provisioning.ID, h.Status.ErrorType, h.Status.ErrorMessage)
	}
	n := getIronicNode(t, inst.APIURL, h.Status.Provisioning.ID)
	if n["provision_state"] != "active" || n["provision_updated_at"] == nil {
		t.Errorf("Ironic's node: provision_state %v provision_updated_at %v, want active", n["provision_state"], n["provision_updated_at"])
	}
	dii, _ := n["driver_internal_info"].(map[string]any)
	for _, k := range []string{"agent_url", "agent_last_heartbeat"} {
		if _, ok := dii[k]; ok {
			t.Errorf("Ironic's node has driver_internal_info %s: a deploy agent ran, the host was not merely adopted", k)
		}
	}
	if h.Status.Provisioning.Image.URL != img.URL {
		t.Errorf("adopted host's image %+v, want %s", h.Status.Provisioning.Image, img.URL)
	}
	st, _ := r.emu.State("host-0000")
	if st.Resets != 0 || st.PowerOn || st.Media.Inserted || st.Media.Image != "" || st.Agent != "" {
		t.Errorf("the adopted host was touched: %+v", st)
	}
	if _, err := os.Stat(r.emu.DiskPath("host-0000", "sda")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the adopted host's disk was written (stat: %v)", err)
	}
}

// getIronicNode reads a node from Ironic's API.
func getIronicNode(t *testing.T, api, id string) map[string]any {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, api+"/v1/nodes/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var n map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET node %s: %s (%v)", id, resp.Status, err)
	}
	return n
}
