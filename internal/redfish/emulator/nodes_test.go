package emulator

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// hostDriver drives one emulated host with gofish, as a provisioner would.
type hostDriver struct {
	t    *testing.T
	c    *gofish.APIClient
	name string
	sys  string
	vm   string
}

func newHostDriver(t *testing.T, c *gofish.APIClient, host string) *hostDriver {
	return &hostDriver{t: t, c: c, name: host, sys: systemsPath + "/" + host, vm: managersPath + "/" + host + "/VirtualMedia/Cd"}
}

func (d *hostDriver) reset(rt schemas.ResetType) {
	d.t.Helper()
	sys, err := schemas.GetComputerSystem(d.c, d.sys)
	if err == nil {
		_, err = sys.Reset(rt)
	}
	if err != nil {
		d.t.Fatalf("%s %s: %v", d.sys, rt, err)
	}
}

func (d *hostDriver) insert(metaData string) {
	d.t.Helper()
	body := map[string]any{"Image": "http://images.example/live.iso", "Inserted": true}
	if metaData != "" {
		body["Oem"] = map[string]any{"Airship": map[string]any{"MetaData": base64.StdEncoding.EncodeToString([]byte(metaData)), "ImageFormat": "live-iso"}}
	}
	resp, err := d.c.Post(d.vm+"/Actions/VirtualMedia.InsertMedia", body)
	if err != nil {
		d.t.Fatalf("InsertMedia: %v", err)
	}
	_ = resp.Body.Close() // only read: closing cannot lose data
	sys, err := schemas.GetComputerSystem(d.c, d.sys)
	if err == nil {
		err = sys.SetBoot(&schemas.Boot{BootSourceOverrideTarget: schemas.CdBootSource, BootSourceOverrideEnabled: schemas.OnceBootSourceOverrideEnabled})
	}
	if err != nil {
		d.t.Fatalf("SetBoot: %v", err)
	}
}

func (d *hostDriver) eject() {
	d.t.Helper()
	vm, err := schemas.GetVirtualMedia(d.c, d.vm)
	if err == nil {
		_, err = vm.EjectMedia()
	}
	if err != nil {
		d.t.Fatalf("EjectMedia: %v", err)
	}
}

// waitNode polls until the Node satisfies ok (nil: until it is gone).
func waitNode(t *testing.T, c client.Client, name, what string, ok func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	var node *corev1.Node
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		n := &corev1.Node{}
		err := c.Get(ctx, client.ObjectKey{Name: name}, n)
		switch {
		case apierrors.IsNotFound(err):
			last = "not found"
			return ok == nil, nil
		case err != nil:
			last = err.Error()
			return false, nil
		}
		node = n
		last = fmt.Sprintf("annotations %v, providerID %q, addresses %v, conditions %v", n.Annotations, n.Spec.ProviderID, n.Status.Addresses, n.Status.Conditions)
		return ok != nil && ok(n), nil
	})
	if err != nil {
		t.Fatalf("Node %s %s: %v (last: %s)", name, what, err, last)
	}
	return node
}

func managedByKwok(n *corev1.Node) bool { return n.Annotations[KwokAnnotation] == "fake" }

// created: the Node exists, is kwok's and has its addresses (the status
// is a second write after the create).
func created(n *corev1.Node) bool { return managedByKwok(n) && len(n.Status.Addresses) > 0 }

func poweredOff(n *corev1.Node) bool {
	c := readyCondition(n)
	return !managedByKwok(n) && c != nil && c.Status == corev1.ConditionFalse && c.Reason == PoweredOffReason
}

func backWithKwok(n *corev1.Node) bool {
	c := readyCondition(n)
	return managedByKwok(n) && c != nil && c.Status == corev1.ConditionUnknown && c.Reason == PoweredOnReason
}

// waitHost polls the emulated host's state until ok.
func waitHost(t *testing.T, s *Server, host, what string, ok func(HostState) bool) HostState {
	t.Helper()
	var st HostState
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		st = mustState(t, s, host)
		return ok(st), nil
	}); err != nil {
		t.Fatalf("host %s never %s: %+v", host, what, st)
	}
	return st
}

func TestBootMakesNode(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	var log syncBuffer
	hosts := Generate(2, 1)
	s, base := start(t, Config{Hosts: hosts, BootDelay: 100 * time.Millisecond}, Options{TargetConfig: env.Config, Log: &log})
	c := connect(t, base, testUser, testPassword, false)
	a, b := newHostDriver(t, c, "host-0000"), newHostDriver(t, c, "host-0001")

	t.Run("boot from media creates the Node the meta-data asks for", func(t *testing.T) {
		a.insert(`{"local-hostname": "worker-a", "providerid": "metal3://metal3/host-0000/uid-1", "labels": {"node-role.kubernetes.io/worker": "", "site": "test"}}`)
		a.reset(schemas.OnResetType)
		node := waitNode(t, env.Client, "worker-a", "created", created)
		if node.Spec.ProviderID != "metal3://metal3/host-0000/uid-1" {
			t.Errorf("providerID %q", node.Spec.ProviderID)
		}
		if node.Labels["site"] != "test" || node.Labels["kubernetes.io/hostname"] != "worker-a" || node.Annotations[HostAnnotation] != "host-0000" {
			t.Errorf("labels %v annotations %v", node.Labels, node.Annotations)
		}
		want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.23.0.1"}, {Type: corev1.NodeHostName, Address: "worker-a"}}
		if !slices.Equal(node.Status.Addresses, want) {
			t.Errorf("addresses %v, want %v", node.Status.Addresses, want)
		}
		if st := mustState(t, s, "host-0000"); !st.Booted || st.BootedFrom != "Cd" || st.Node != "worker-a" {
			t.Errorf("state %+v", st)
		}
	})

	t.Run("power off makes it NotReady", func(t *testing.T) {
		a.reset(schemas.ForceOffResetType)
		waitNode(t, env.Client, "worker-a", "powered off", poweredOff)
		if st := mustState(t, s, "host-0000"); st.Booted || st.PowerOn || st.Node != "worker-a" {
			t.Errorf("state %+v", st)
		}
	})

	t.Run("power on boots the media again and hands the Node back to kwok", func(t *testing.T) {
		a.reset(schemas.OnResetType)
		// The annotation and the status are two writes: wait for both.
		waitNode(t, env.Client, "worker-a", "back with kwok, Ready reason "+PoweredOnReason, backWithKwok)
		if st := mustState(t, s, "host-0000"); !st.Booted || st.BootedFrom != "Cd" {
			t.Errorf("state %+v", st)
		}
	})

	t.Run("media ejected while on: a restart boots from disk and keeps the Node", func(t *testing.T) {
		a.eject()
		a.reset(schemas.ForceRestartResetType)
		waitHost(t, s, "host-0000", "booted from disk", func(st HostState) bool { return st.Booted && st.BootedFrom == "Hdd" })
		if st := mustState(t, s, "host-0000"); st.Node != "worker-a" {
			t.Errorf("state %+v", st)
		}
		waitNode(t, env.Client, "worker-a", "kept", managedByKwok)
	})

	t.Run("eject then power off deprovisions: the Node is deleted", func(t *testing.T) {
		a.eject()
		a.reset(schemas.GracefulShutdownResetType)
		waitNode(t, env.Client, "worker-a", "deleted", nil)
		if st := mustState(t, s, "host-0000"); st.Node != "" || st.PowerOn {
			t.Errorf("state %+v", st)
		}
	})

	t.Run("without meta-data the Node is named after the host", func(t *testing.T) {
		b.insert("")
		b.reset(schemas.ForceRestartResetType)
		node := waitNode(t, env.Client, "host-0001", "created", created)
		if node.Spec.ProviderID != "" || node.Status.Addresses[0].Address != "10.23.0.2" {
			t.Errorf("providerID %q addresses %v", node.Spec.ProviderID, node.Status.Addresses)
		}
	})

	t.Run("provisioned again under another name: the old Node goes", func(t *testing.T) {
		b.eject()
		b.insert("local_hostname: Worker-B\nprovider-id: metal3://b\n")
		b.reset(schemas.ForceRestartResetType)
		node := waitNode(t, env.Client, "worker-b", "created", managedByKwok)
		if node.Spec.ProviderID != "metal3://b" {
			t.Errorf("providerID %q", node.Spec.ProviderID)
		}
		waitNode(t, env.Client, "host-0001", "deleted", nil)
	})
}

// TestDeprovisionDeletesNode: which sequences of requests deprovision a
// host that booted from media (its Node deleted, a later power-on boots
// nothing) and which keep it provisioned. A provisioner sends no power-off
// request to a host already off, so ejecting the media an off host booted
// from is deprovisioning too.
func TestDeprovisionDeletesNode(t *testing.T) {
	tests := []struct {
		name     string
		steps    func(t *testing.T, d *hostDriver, s *Server, c client.Client, node string)
		wantGone bool
	}{
		{name: "on: eject, then ForceOff", wantGone: true, steps: func(t *testing.T, d *hostDriver, _ *Server, _ client.Client, _ string) {
			d.eject()
			d.reset(schemas.ForceOffResetType)
		}},
		{name: "on: eject, then GracefulShutdown", wantGone: true, steps: func(t *testing.T, d *hostDriver, _ *Server, _ client.Client, _ string) {
			d.eject()
			d.reset(schemas.GracefulShutdownResetType)
		}},
		{name: "off: eject the media it booted from", wantGone: true, steps: func(t *testing.T, d *hostDriver, _ *Server, c client.Client, node string) {
			d.reset(schemas.ForceOffResetType)
			waitNode(t, c, node, "powered off", poweredOff)
			d.eject()
		}},
		{name: "off: eject, then a power-off request", wantGone: true, steps: func(t *testing.T, d *hostDriver, _ *Server, c client.Client, node string) {
			d.reset(schemas.ForceOffResetType)
			waitNode(t, c, node, "powered off", poweredOff)
			d.eject()
			d.reset(schemas.ForceOffResetType)
		}},
		{name: "on: eject, then restart", wantGone: false, steps: func(t *testing.T, d *hostDriver, s *Server, _ client.Client, _ string) {
			d.eject()
			d.reset(schemas.ForceRestartResetType)
			waitHost(t, s, d.name, "booted from disk", func(st HostState) bool { return st.Booted && st.BootedFrom == "Hdd" })
		}},
		{name: "off: eject media it did not boot from", wantGone: false, steps: func(t *testing.T, d *hostDriver, _ *Server, c client.Client, node string) {
			d.eject()
			d.insert("")
			d.reset(schemas.ForceOffResetType) // media inserted again: no deprovisioning
			waitNode(t, c, node, "powered off", poweredOff)
			d.eject()
		}},
		{name: "off: power off without an eject", wantGone: false, steps: func(t *testing.T, d *hostDriver, _ *Server, c client.Client, node string) {
			d.reset(schemas.ForceOffResetType)
			waitNode(t, c, node, "powered off", poweredOff)
		}},
	}
	env := testenv.StartAPI(t, testenv.Options{})
	var log syncBuffer
	s, base := start(t, Config{Hosts: Generate(len(tests), 1)}, Options{TargetConfig: env.Config, Log: &log})
	c := connect(t, base, testUser, testPassword, false)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, node := fmt.Sprintf("host-%04d", i), fmt.Sprintf("node-%d", i)
			d := newHostDriver(t, c, host)
			d.insert(`{"local-hostname": "` + node + `"}`)
			d.reset(schemas.OnResetType)
			waitNode(t, env.Client, node, "created", created)

			tt.steps(t, d, s, env.Client, node)
			st := mustState(t, s, host)
			if !tt.wantGone {
				if st.Node != node {
					t.Fatalf("deprovisioned: state %+v", st)
				}
				if n := waitNode(t, env.Client, node, "kept", func(*corev1.Node) bool { return true }); n == nil {
					t.Fatal("no Node")
				}
				return
			}
			if st.Node != "" {
				t.Errorf("still provisioned: state %+v", st)
			}
			waitNode(t, env.Client, node, "deleted", nil)
			if !strings.Contains(log.String(), host+": deprovisioned") {
				t.Errorf("no deprovisioning logged for %s:\n%s", host, log.String())
			}
			// A deprovisioned host has nothing on disk to boot.
			d.reset(schemas.OnResetType)
			if st := mustState(t, s, host); !st.PowerOn || st.Node != "" {
				t.Errorf("after power on: state %+v", st)
			}
		})
	}
}
