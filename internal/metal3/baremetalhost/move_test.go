package baremetalhost_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
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
