package baremetalhost_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestIronicLifecycle: metal3-operator with --ironic-endpoint takes a host
// through a real local Ironic: registered and inspected (status.hardware
// from Ironic's Redfish inspection), available, inspected again for the
// inspect annotation, provisioned (Ironic writes the raw image and a
// config drive with the host's user-data to the emulated disk through the
// emulator's deploy agent), rebooted and powered off through Ironic,
// deprovisioned when its image goes, and, deleted, removed from Ironic.
func TestIronicLifecycle(t *testing.T) {
	inst := testenv.Ironic(t)
	r := newIronicRig(t, 1, inst)
	want := emulator.Generate(1, 2)[0]
	r.host(0, password, func(h *metal3v1alpha1.BareMetalHost) { h.Spec.BootMACAddress = want.NICs[0].MAC })
	h := r.waitStateWithin("host-0000", metal3v1alpha1.StateAvailable, 6*time.Minute)
	if hw := h.Status.HardwareDetails; hw == nil || hw.CPU.Count != want.CPUs || hw.RAMMebibytes != want.MemoryMiB {
		t.Errorf("status.hardware %+v, want the emulator's inventory %+v", hw, want)
	}
	if h.Status.Provisioning.ID == "" || h.Status.Provisioning.ID == string(h.UID) {
		t.Errorf("status.provisioning.ID %q, want Ironic's node UUID", h.Status.Provisioning.ID)
	}

	// The inspect annotation inspects again through Ironic and goes.
	inspected := h.Status.OperationHistory.Inspect.End
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) {
		metav1.SetMetaDataAnnotation(&h.ObjectMeta, metal3v1alpha1.InspectAnnotationPrefix, "")
	})
	r.wait("host-0000", "inspected again", func(h *metal3v1alpha1.BareMetalHost) bool {
		_, ann := h.Annotations[metal3v1alpha1.InspectAnnotationPrefix]
		return !ann && h.Status.Provisioning.State == metal3v1alpha1.StateAvailable && h.Status.OperationHistory.Inspect.End.After(inspected.Time)
	})

	image := testenv.ServeDiskImage(t, inst, "bmh-image.raw", 16<<20, testenv.DiskImageOptions{})
	r.provisionOn("host-0000")
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Image = image.HostImage(metal3v1alpha1.SHA256) })
	h = r.waitStateWithin("host-0000", metal3v1alpha1.StateProvisioned, 6*time.Minute)
	if h.Status.Provisioning.Image.URL != image.URL || !h.Status.PoweredOn {
		t.Errorf("provisioned status %+v poweredOn %v", h.Status.Provisioning, h.Status.PoweredOn)
	}
	d := configdrivetest.ProvisionedDisk(t, r.emu.DiskPath("host-0000", "sda"), image.Raw)
	if string(d.UserData) != userData {
		t.Errorf("config drive user-data %q, want the Secret's", d.UserData)
	}

	// Power through Ironic: a reboot, then off as spec.online asks.
	before, _ := r.emu.State("host-0000")
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) {
		metav1.SetMetaDataAnnotation(&h.ObjectMeta, metal3v1alpha1.RebootAnnotationPrefix, "")
	})
	r.waitEvent("host-0000", "Rebooted")
	r.waitEmu("host-0000", "was reset", func(s emulator.HostState) bool { return s.Resets > before.Resets })
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Online = false })
	r.wait("host-0000", "powered off", func(h *metal3v1alpha1.BareMetalHost) bool { return !h.Status.PoweredOn && h.Status.ErrorType == "" })
	r.waitEmu("host-0000", "powered off", func(s emulator.HostState) bool { return !s.PowerOn })

	// The image taken away: deprovisioned (Ironic cleans), available again.
	r.update("host-0000", func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Image = nil })
	h = r.waitStateWithin("host-0000", metal3v1alpha1.StateAvailable, 6*time.Minute)
	if h.Status.Provisioning.Image.URL != "" || h.Status.OperationHistory.Deprovision.End.IsZero() {
		t.Errorf("after deprovisioning: %+v", h.Status.Provisioning)
	}

	id := h.Status.Provisioning.ID
	if err := r.c.Delete(context.Background(), &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: "host-0000"}}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 6*time.Minute, true, func(ctx context.Context) (bool, error) {
		err := r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: "host-0000"}, &metal3v1alpha1.BareMetalHost{})
		return err != nil, nil
	}); err != nil {
		t.Fatal("the deleted host never went away")
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, inst.APIURL+"/v1/nodes/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET the node after the host was deleted: %s, want 404", resp.Status)
	}
	if data, err := os.ReadFile(inst.LogFile); err == nil && strings.Contains(string(data), password) {
		t.Errorf("Ironic's log shows the BMC password")
	}
}

// waitStateWithin is waitState with a longer limit, for Ironic's steps.
func (r *rig) waitStateWithin(name string, s metal3v1alpha1.ProvisioningState, limit time.Duration) *metal3v1alpha1.BareMetalHost {
	r.t.Helper()
	h := &metal3v1alpha1.BareMetalHost{}
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, limit, true, func(ctx context.Context) (bool, error) {
		if err := r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: name}, h); err != nil {
			return false, nil
		}
		return h.Status.Provisioning.State == s && h.Status.ErrorType == "", nil
	})
	if err != nil {
		r.t.Fatalf("host %s never reached %s: state %q error %q %q", name, s, h.Status.Provisioning.State, h.Status.ErrorType, h.Status.ErrorMessage)
	}
	return h
}
