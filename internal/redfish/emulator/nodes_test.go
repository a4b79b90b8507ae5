package emulator

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
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
	t   *testing.T
	c   *gofish.APIClient
	sys string
	vm  string
}

func newHostDriver(t *testing.T, c *gofish.APIClient, host string) *hostDriver {
	return &hostDriver{t: t, c: c, sys: systemsPath + "/" + host, vm: managersPath + "/" + host + "/VirtualMedia/Cd"}
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
	resp.Body.Close()
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

func poweredOff(n *corev1.Node) bool {
	c := readyCondition(n)
	return !managedByKwok(n) && c != nil && c.Status == corev1.ConditionFalse && c.Reason == PoweredOffReason
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
		node := waitNode(t, env.Client, "worker-a", "created", managedByKwok)
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

	t.Run("power on without media boots from disk and hands the Node back to kwok", func(t *testing.T) {
		a.eject()
		a.reset(schemas.OnResetType)
		// The annotation and the status are two writes: wait for both.
		waitNode(t, env.Client, "worker-a", "back with kwok, Ready reason "+PoweredOnReason, func(n *corev1.Node) bool {
			c := readyCondition(n)
			return managedByKwok(n) && c != nil && c.Status == corev1.ConditionUnknown && c.Reason == PoweredOnReason
		})
		if st := mustState(t, s, "host-0000"); !st.Booted || st.BootedFrom != "Hdd" {
			t.Errorf("state %+v", st)
		}
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
		node := waitNode(t, env.Client, "host-0001", "created", managedByKwok)
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
