package baremetalhost_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// ironicStep bounds one of Ironic's steps seen through the controller
// (registration and inspection, a deploy): seconds alone, minutes on a
// loaded machine.
const ironicStep = 6 * time.Minute

// faultRig is a rig whose operator drives a real local Ironic, with the
// Options that started it (to start it again on the same state and ports).
type faultRig struct {
	*rig
	inst  *localironic.Instance
	iopts localironic.Options
}

// newFaultRig starts Ironic (its timeouts checked every 2 s, Redfish
// retried twice a second apart, then tune), the emulator (agents
// heartbeating every 2 s) and the operator driving that Ironic.
func newFaultRig(t *testing.T, hosts int, tune func(*localironic.Tuning)) *faultRig {
	t.Helper()
	var iopts localironic.Options
	inst := testenv.Ironic(t, func(o *localironic.Options) {
		o.Tuning.CheckProvisionStateInterval = 2 * time.Second
		o.Tuning.RedfishConnectionAttempts = 2
		o.Tuning.RedfishConnectionRetryInterval = time.Second
		if tune != nil {
			tune(&o.Tuning)
		}
		iopts = *o
	})
	r := newIronicRig(t, hosts, inst)
	return &faultRig{rig: r, inst: inst, iopts: iopts}
}

// addHosts creates hosts 0..n-1 with their boot MACs and cleaning
// disabled, one after the other, each once the one before is available:
// Ironic on sqlite can lose a node's verification to "database is locked"
// when two run at once, and leave it in verifying until it restarts.
func (r *faultRig) addHosts(n int) {
	r.t.Helper()
	for i := 0; i < n; i++ {
		mac := r.emu.Hosts()[i].NICs[0].MAC
		r.host(i, password, func(h *metal3v1alpha1.BareMetalHost) {
			h.Spec.BootMACAddress = mac
			h.Spec.AutomatedCleaningMode = metal3v1alpha1.CleaningModeDisabled
		})
		h := r.waitStateWithin(fmt.Sprintf("host-%04d", i), metal3v1alpha1.StateAvailable, ironicStep)
		if h.Status.HardwareDetails == nil || h.Status.Provisioning.ID == "" {
			r.t.Fatalf("host %s available without hardware details or Ironic id: %+v", h.Name, h.Status)
		}
	}
}

// image serves a 16 MiB raw GPT image from Ironic's image server and
// returns it as a spec.image with its md5 checksum.
func (r *faultRig) image(name string) *metal3v1alpha1.Image {
	r.t.Helper()
	return testenv.ServeDiskImage(r.t, r.inst, name, 16<<20, testenv.DiskImageOptions{}).HostImage(metal3v1alpha1.MD5)
}

// provision gives the host its data Secrets and the image.
func (r *faultRig) provision(name string, img *metal3v1alpha1.Image) {
	r.t.Helper()
	r.provisionOn(name)
	r.update(name, func(h *metal3v1alpha1.BareMetalHost) { h.Spec.Image = img.DeepCopy() })
}

// waitError waits until the host reports an error of type t whose message
// holds every one of parts.
func (r *faultRig) waitError(name string, t metal3v1alpha1.ErrorType, parts ...string) *metal3v1alpha1.BareMetalHost {
	r.t.Helper()
	var h *metal3v1alpha1.BareMetalHost
	r.pollHost(name, "reported a "+string(t)+" naming "+strings.Join(parts, ", "), ironicStep, func(got *metal3v1alpha1.BareMetalHost) bool {
		h = got
		if got.Status.ErrorType != t || got.Status.OperationalStatus != metal3v1alpha1.OperationalStatusError {
			return false
		}
		for _, p := range parts {
			if !strings.Contains(got.Status.ErrorMessage, p) {
				return false
			}
		}
		return true
	})
	return h
}

// pollHost is wait with a limit of its own.
func (r *faultRig) pollHost(name, what string, limit time.Duration, ok func(*metal3v1alpha1.BareMetalHost) bool) {
	r.t.Helper()
	h := &metal3v1alpha1.BareMetalHost{}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, limit, true, func(ctx context.Context) (bool, error) {
		if err := r.c.Get(ctx, types.NamespacedName{Namespace: r.ns, Name: name}, h); err != nil {
			return false, nil
		}
		return ok(h), nil
	})
	if err != nil {
		st, _ := json.Marshal(h.Status)
		r.t.Fatalf("host %s never %s: status %s", name, what, st)
	}
}

// ironicNode is what the tests read of an Ironic node.
type ironicNode struct {
	UUID           string `json:"uuid"`
	Name           string `json:"name"`
	ProvisionState string `json:"provision_state"`
	PowerState     string `json:"power_state"`
	LastError      string `json:"last_error"`
}

// ironic sends one request to Ironic's API at microversion 1.81 and
// decodes a JSON answer into out (when not nil); it returns the status.
func ironic(t *testing.T, inst *localironic.Instance, method, path string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, inst.APIURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.81")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if out != nil && resp.StatusCode < 300 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decoding the answer: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// node reads the node of the host name ("metal3~name"); ok is false when
// Ironic does not know it.
func (r *faultRig) node(name string) (ironicNode, bool) {
	r.t.Helper()
	var n ironicNode
	code := ironic(r.t, r.inst, http.MethodGet, "/v1/nodes/"+r.ns+"~"+name, nil, &n)
	return n, code == http.StatusOK
}

// waitIronicNode polls the host's Ironic node until ok.
func (r *faultRig) waitIronicNode(name, what string, ok func(ironicNode) bool) ironicNode {
	r.t.Helper()
	var n ironicNode
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, ironicStep, true, func(context.Context) (bool, error) {
		var found bool
		n, found = r.node(name)
		return found && ok(n), nil
	})
	if err != nil {
		r.t.Fatalf("the Ironic node of %s never %s: %+v", name, what, n)
	}
	return n
}

// restart starts Ironic again on the same state directory and ports.
func (r *faultRig) restart() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	again, err := localironic.Up(ctx, r.iopts)
	if err != nil {
		r.t.Fatalf("starting Ironic again: %v", err)
	}
	r.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := again.Stop(ctx); err != nil {
			r.t.Errorf("stopping Ironic: %v", err)
		}
	})
	if again.APIURL != r.inst.APIURL || again.HTTPURL != r.inst.HTTPURL {
		r.t.Fatalf("Ironic came back at %s (images %s), not %s (%s)", again.APIURL, again.HTTPURL, r.inst.APIURL, r.inst.HTTPURL)
	}
}
