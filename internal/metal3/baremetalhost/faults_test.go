package baremetalhost_test

import (
	"context"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

// The tests of this file take BareMetalHosts in a real API server through
// the real controller, a real local Ironic and the emulator's hosts with
// their deploy agents, and inject one fault each (issue 27, item 7).

// TestIronicDownAndBack: Ironic stopped while one host is available and
// another is being deployed (its agent running): both report a
// registration error naming Ironic's endpoint and saying the engine is
// unavailable, and keep their state, Ironic id and hardware details;
// Ironic started again on the same state and ports, the errors clear and
// the deploy completes.
//
// The deployed host's BMC answers after 2 s, so that the deploy is still
// under way when Ironic stops. Stopped during the agent's lookup, Ironic
// may keep the token it generated and never handed over (its shutdown
// clears the node's lock before the lookup answers) and refuse the
// agent's heartbeats: then its deploy callback timeout (90 s here) fails
// the deploy, which the controller retries.
func TestIronicDownAndBack(t *testing.T) {
	r := newFaultRig(t, 2, func(tu *localironic.Tuning) { tu.DeployCallbackTimeout = 90 * time.Second })
	r.addHosts(2)
	r.emu.SetFault("host-0001", emulator.Fault{Delay: 2 * time.Second})
	img := r.image("down-and-back.raw")
	r.provision("host-0001", img)
	r.waitAgent("host-0001")
	before := map[string]*metal3v1alpha1.BareMetalHost{"host-0000": r.get("host-0000"), "host-0001": r.get("host-0001")}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for name, b := range before {
		h := r.waitError(name, metal3v1alpha1.RegistrationError, r.inst.APIURL, provisioner.ErrEngineUnavailable.Error())
		if h.Status.Provisioning.State != b.Status.Provisioning.State || h.Status.Provisioning.ID != b.Status.Provisioning.ID ||
			!reflect.DeepEqual(h.Status.HardwareDetails, b.Status.HardwareDetails) {
			t.Errorf("%s with Ironic down: state %s id %s hardware %+v, want %s %s %+v as before", name, h.Status.Provisioning.State,
				h.Status.Provisioning.ID, h.Status.HardwareDetails, b.Status.Provisioning.State, b.Status.Provisioning.ID, b.Status.HardwareDetails)
		}
		if ev := r.waitEvent(name, "RegistrationError"); !strings.Contains(ev.Note, r.inst.APIURL) {
			t.Errorf("%s: RegistrationError event %q does not name Ironic's endpoint", name, ev.Note)
		}
	}

	r.restart()
	r.emu.SetFault("host-0001", emulator.Fault{})
	h := r.waitStateWithin("host-0000", metal3v1alpha1.StateAvailable, ironicStep)
	if h.Status.Provisioning.ID != before["host-0000"].Status.Provisioning.ID || h.Status.OperationalStatus != metal3v1alpha1.OperationalStatusOK {
		t.Errorf("host-0000 after Ironic came back: id %s (was %s), operational status %s", h.Status.Provisioning.ID, before["host-0000"].Status.Provisioning.ID, h.Status.OperationalStatus)
	}
	h = r.waitStateWithin("host-0001", metal3v1alpha1.StateProvisioned, ironicStep)
	if h.Status.Provisioning.ID != before["host-0001"].Status.Provisioning.ID {
		t.Errorf("host-0001 registered again as %s, was %s", h.Status.Provisioning.ID, before["host-0001"].Status.Provisioning.ID)
	}
	r.checkConfigDrive("host-0001", img)
	if n, ok := r.node("host-0001"); !ok || n.ProvisionState != "active" {
		t.Errorf("the Ironic node of host-0001: %+v (found %v), want active", n, ok)
	}
}

// TestIronicBMCFailsMidDeploy: the BMC refuses resets while the deploy
// agent runs: Ironic cannot reboot the host into its image, the host
// reports a provisioning error naming the image and the failed power
// request (never the password); the BMC healed, the retry provisions it.
func TestIronicBMCFailsMidDeploy(t *testing.T) {
	r := newFaultRig(t, 1, nil)
	r.addHosts(1)
	img := r.image("bmc-fails.raw")
	r.provision("host-0000", img)
	r.waitAgent("host-0000")
	r.emu.SetFault("host-0000", emulator.Fault{FailResets: true})
	h := r.waitError("host-0000", metal3v1alpha1.ProvisioningError, "image provisioning failed (image "+img.URL+")")
	// Ironic's last error names the power change and the BMC's request.
	reset := strings.TrimPrefix(r.emu.Address("host-0000"), "redfish-virtualmedia+") + "/Actions/ComputerSystem.Reset"
	if !strings.Contains(h.Status.ErrorMessage, "power off") || !strings.Contains(h.Status.ErrorMessage, reset) || h.Status.Provisioning.State != metal3v1alpha1.StateProvisioning {
		t.Errorf("provisioning error %q in state %s, want the failed power off at %s named, still provisioning", h.Status.ErrorMessage, h.Status.Provisioning.State, reset)
	}
	if ev := r.waitEvent("host-0000", "ProvisioningError"); !strings.Contains(ev.Note, img.URL) {
		t.Errorf("ProvisioningError event %q does not name the image", ev.Note)
	}
	r.emu.SetFault("host-0000", emulator.Fault{})
	r.waitStateWithin("host-0000", metal3v1alpha1.StateProvisioned, ironicStep)
	r.checkConfigDrive("host-0000", img)
}

// TestIronicChecksumMismatch: an image whose checksum is wrong fails the
// deploy with a provisioning error naming the image and the checksum; the
// checksum corrected, the host is provisioned.
func TestIronicChecksumMismatch(t *testing.T) {
	r := newFaultRig(t, 1, nil)
	r.addHosts(1)
	img := r.image("checksum.raw")
	good := img.Checksum
	img.Checksum = "0123456789abcdef0123456789abcdef"
	r.provision("host-0000", img)
	h := r.waitError("host-0000", metal3v1alpha1.ProvisioningError, "image provisioning failed (image "+img.URL+")")
	if !strings.Contains(strings.ToLower(h.Status.ErrorMessage), "checksum") {
		t.Errorf("provisioning error %q does not mention the checksum", h.Status.ErrorMessage)
	}
	if n, ok := r.node("host-0000"); !ok || n.ProvisionState != "deploy failed" {
		t.Errorf("the Ironic node: %+v (found %v), want deploy failed", n, ok)
	}
	if ev := r.waitEvent("host-0000", "ProvisioningError"); !strings.Contains(ev.Note, img.URL) {
		t.Errorf("ProvisioningError event %q does not name the image", ev.Note)
	}
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Image.Checksum = good })
	h = r.waitStateWithin("host-0000", metal3v1alpha1.StateProvisioned, ironicStep)
	if h.Status.Provisioning.Image.Checksum != good {
		t.Errorf("provisioned with checksum %q, want %q", h.Status.Provisioning.Image.Checksum, good)
	}
	r.checkConfigDrive("host-0000", img)
}

// TestIronicAgentNeverHeartbeats: a deploy agent that looks its node up
// and never heartbeats runs into Ironic's deploy callback timeout (30 s
// here): a provisioning error naming the timeout; with a healthy agent
// the retry provisions the host.
func TestIronicAgentNeverHeartbeats(t *testing.T) {
	r := newFaultRig(t, 1, func(tu *localironic.Tuning) { tu.DeployCallbackTimeout = 30 * time.Second })
	r.addHosts(1)
	r.emu.SetFault("host-0000", emulator.Fault{NoHeartbeat: true})
	img := r.image("no-heartbeat.raw")
	r.provision("host-0000", img)
	h := r.waitError("host-0000", metal3v1alpha1.ProvisioningError, "image provisioning failed (image "+img.URL+")", "Timeout reached while waiting for callback")
	if h.Status.Provisioning.State != metal3v1alpha1.StateProvisioning {
		t.Errorf("state %s after the timeout, want provisioning", h.Status.Provisioning.State)
	}
	r.emu.SetFault("host-0000", emulator.Fault{})
	r.waitStateWithin("host-0000", metal3v1alpha1.StateProvisioned, ironicStep)
	r.checkConfigDrive("host-0000", img)
}

// TestIronicNodeDeletedBehindOurBack: the node of an available host
// deleted from Ironic (maintenance, then DELETE) is enrolled again: a new
// id in status.provisioning.ID, the host still available without error,
// and the new node deploys.
func TestIronicNodeDeletedBehindOurBack(t *testing.T) {
	r := newFaultRig(t, 1, nil)
	r.addHosts(1)
	before := r.get("host-0000")
	old := before.Status.Provisioning.ID
	if code := ironic(t, r.inst, http.MethodPut, "/v1/nodes/"+old+"/maintenance", map[string]string{"reason": "deleted by the test"}, nil); code != http.StatusAccepted {
		t.Fatalf("setting maintenance: %d", code)
	}
	if code := ironic(t, r.inst, http.MethodDelete, "/v1/nodes/"+old, nil, nil); code != http.StatusNoContent {
		t.Fatalf("deleting the node: %d", code)
	}
	r.pollHost("host-0000", "registered again", ironicStep, func(h *metal3v1alpha1.BareMetalHost) bool {
		return h.Status.Provisioning.ID != "" && h.Status.Provisioning.ID != old
	})
	n := r.waitIronicNode("host-0000", "enrolled again and verified", func(n ironicNode) bool {
		return n.ProvisionState == "manageable" || n.ProvisionState == "available"
	})
	h := r.waitStateWithin("host-0000", metal3v1alpha1.StateAvailable, ironicStep)
	if h.Status.Provisioning.ID != n.UUID || !reflect.DeepEqual(h.Status.HardwareDetails, before.Status.HardwareDetails) {
		t.Errorf("status.provisioning.ID %s, want the new node %s; hardware %+v, want %+v", h.Status.Provisioning.ID, n.UUID, h.Status.HardwareDetails, before.Status.HardwareDetails)
	}
	if code := ironic(t, r.inst, http.MethodGet, "/v1/nodes/"+old, nil, nil); code != http.StatusNotFound {
		t.Errorf("GET the deleted node: %d, want 404", code)
	}
	img := r.image("after-delete.raw")
	r.provision("host-0000", img)
	r.waitStateWithin("host-0000", metal3v1alpha1.StateProvisioned, ironicStep)
	r.checkConfigDrive("host-0000", img)
}

// TestIronicPowerOncePerTransition: a slow BMC (a reset applied 8 s after
// it is answered) powering an available host on for spec.online gets one
// reset: Ironic sends it once and the controller waits for Ironic instead
// of asking again.
func TestIronicPowerOncePerTransition(t *testing.T) {
	r := newFaultRig(t, 1, nil)
	r.addHosts(1)
	st := r.waitEmu("host-0000", "off", func(s emulator.HostState) bool { return !s.PowerOn })
	r.emu.SetFault("host-0000", emulator.Fault{PowerLag: 8 * time.Second})
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = true })
	r.pollHost("host-0000", "powered on", ironicStep, func(h *metal3v1alpha1.BareMetalHost) bool {
		return h.Status.PoweredOn && h.Status.ErrorType == ""
	})
	after, _ := r.emu.State("host-0000")
	if !after.PowerOn || after.Resets != st.Resets+1 {
		t.Errorf("after powering on: on %v, %d resets, want on and one reset (%d before)", after.PowerOn, after.Resets-st.Resets, st.Resets)
	}
	if waits := strings.Count(r.logs.all(), `"step"="powering on"`); waits < 2 {
		t.Errorf("the controller looked at the power-on under way %d times, want it to wait through the BMC's lag", waits)
	}
}

// get reads a host.
func (r *faultRig) get(name string) *metal3v1alpha1.BareMetalHost {
	r.t.Helper()
	h := &metal3v1alpha1.BareMetalHost{}
	if err := r.c.Get(context.Background(), types.NamespacedName{Namespace: r.ns, Name: name}, h); err != nil {
		r.t.Fatal(err)
	}
	return h
}

// waitAgent waits until the host runs the deploy agent: Ironic's deploy
// is under way.
func (r *faultRig) waitAgent(name string) {
	r.t.Helper()
	deadline := time.Now().Add(ironicStep)
	for {
		st, _ := r.emu.State(name)
		if st.Agent != "" {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s never ran the deploy agent: %+v", name, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkConfigDrive checks the host's first disk holds img, as Ironic's
// image server serves it, and the config drive with the host's user-data.
func (r *faultRig) checkConfigDrive(name string, img *metal3v1alpha1.Image) {
	r.t.Helper()
	// r.image gives the spec only: the image's bytes are read back from
	// Ironic's image server's directory, where it wrote the raw image.
	served := filepath.Join(r.inst.HTTPRoot, path.Base(img.URL))
	raw, err := os.ReadFile(served)
	if err != nil {
		r.t.Fatalf("reading the served image %s: %v", served, err)
	}
	d := configdrivetest.ProvisionedDisk(r.t, r.emu.DiskPath(name, "sda"), raw)
	if string(d.UserData) != userData {
		r.t.Errorf("%s's config drive user-data %q, want the Secret's", name, d.UserData)
	}
}
