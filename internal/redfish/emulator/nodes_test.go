package emulator

import (
	"context"
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

	"github.com/airshipit/airship-go/internal/configdrive"
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

// liveISO serves, until the test ends, a live ISO that is a config drive
// holding metaData and userData (nil: none), and returns its URL.
func liveISO(t *testing.T, metaData string, userData []byte) string {
	t.Helper()
	img, err := configdrive.Build(configdrive.Data{MetaData: []byte(metaData), UserData: userData})
	if err != nil {
		t.Fatal(err)
	}
	return files(t, map[string][]byte{"/live.iso": img}) + "/live.iso"
}

// plainISO serves, until the test ends, a live ISO that is neither a
// config drive nor a deploy ISO, and returns its URL.
func plainISO(t *testing.T) string {
	t.Helper()
	return files(t, map[string][]byte{"/plain.iso": deployISO(t, "")}) + "/plain.iso"
}

// insert inserts the image with a one-time boot override to it, as the
// direct provisioner boots a live ISO.
func (d *hostDriver) insert(image string) {
	d.t.Helper()
	body := map[string]any{"Image": image, "Inserted": true}
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
	hosts := Generate(3, 1)
	s, base := start(t, Config{Hosts: hosts, BootDelay: 100 * time.Millisecond}, Options{TargetConfig: env.Config, Log: &log})
	c := connect(t, base, testUser, testPassword, false)
	a, b, p := newHostDriver(t, c, "host-0000"), newHostDriver(t, c, "host-0001"), newHostDriver(t, c, "host-0002")
	// Served for the whole test: a host fetches its media again when it
	// boots it after the media cache's 30 s.
	isoA := liveISO(t, `{"local-hostname": "worker-a", "providerid": "metal3://metal3/host-0000/uid-1", "labels": {"node-role.kubernetes.io/worker": "", "site": "test"}}`, nil)
	isoB1 := liveISO(t, `{"uuid": "uid-b"}`, nil)
	isoB2 := liveISO(t, `{"local_hostname": "Worker-B", "provider-id": "metal3://b"}`, nil)
	plain := plainISO(t)

	t.Run("a live ISO that is a config drive creates the Node its meta-data asks for", func(t *testing.T) {
		a.insert(isoA)
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
		if st := mustState(t, s, "host-0000"); !st.Booted || st.BootedFrom != "Cd" || st.Node != "worker-a" || st.NodeDisk != "" {
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

	t.Run("a late status write marking the powered-off Node Ready is undone", func(t *testing.T) {
		// As kwok's heartbeat does when it was computed before the
		// emulator took the Node: Ready again, though the host is off.
		node := waitNode(t, env.Client, "worker-a", "powered off", poweredOff)
		setReady(node, corev1.ConditionTrue, "KubeletReady", "a heartbeat from before the power-off")
		if err := env.Client.Status().Update(t.Context(), node); err != nil {
			t.Fatal(err)
		}
		waitNode(t, env.Client, "worker-a", "not Ready again", poweredOff)
	})

	t.Run("power on boots the media again and hands the Node back to kwok", func(t *testing.T) {
		a.reset(schemas.OnResetType)
		// The annotation and the status are two writes: wait for both.
		waitNode(t, env.Client, "worker-a", "back with kwok, Ready reason "+PoweredOnReason, backWithKwok)
		if st := mustState(t, s, "host-0000"); !st.Booted || st.BootedFrom != "Cd" {
			t.Errorf("state %+v", st)
		}
	})

	t.Run("media ejected while on: a restart finds nothing on disk; the Node stays, NotReady", func(t *testing.T) {
		a.eject()
		a.reset(schemas.ForceRestartResetType)
		waitLog(t, &log, "host-0000: no disk holds a config drive; nothing to boot")
		waitNode(t, env.Client, "worker-a", "powered off", poweredOff)
		if st := mustState(t, s, "host-0000"); st.Node != "worker-a" || st.Booted || !st.PowerOn {
			t.Errorf("state %+v", st)
		}
	})

	t.Run("without a hostname in the meta-data the Node is named after the host", func(t *testing.T) {
		b.insert(isoB1)
		b.reset(schemas.ForceRestartResetType)
		node := waitNode(t, env.Client, "host-0001", "created", created)
		if node.Spec.ProviderID != "" || node.Status.Addresses[0].Address != "10.23.0.2" {
			t.Errorf("providerID %q addresses %v", node.Spec.ProviderID, node.Status.Addresses)
		}
	})

	t.Run("booted from another config drive under another name: the old Node goes", func(t *testing.T) {
		b.eject()
		b.insert(isoB2)
		b.reset(schemas.ForceRestartResetType)
		node := waitNode(t, env.Client, "worker-b", "created", managedByKwok)
		if node.Spec.ProviderID != "metal3://b" {
			t.Errorf("providerID %q", node.Spec.ProviderID)
		}
		waitNode(t, env.Client, "host-0001", "deleted", nil)
	})

	t.Run("a live ISO that is no config drive boots with no Node", func(t *testing.T) {
		p.insert(plain)
		p.reset(schemas.OnResetType)
		st := waitHost(t, s, "host-0002", "booted the live ISO", func(st HostState) bool { return st.Booted })
		if st.BootedFrom != "Cd" || st.Node != "" || st.Agent != "" {
			t.Errorf("state %+v", st)
		}
		waitLog(t, &log, "host-0002: booted the live ISO from Cd; it is no config drive: no Node")
	})
}

// waitLog polls the log until it holds line.
func waitLog(t *testing.T, log *syncBuffer, line string) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(log.String(), line), nil
	}); err != nil {
		t.Fatalf("the log never said %q:\n%s", line, log.String())
	}
}

// TestLiveISONodeKept: no sequence of BMC requests deletes the Node of a
// live ISO, as none deletes a real host's Node: ejecting the media and
// powering off, in either order, leave it NotReady. The deploy agent
// writing any of the host's disks (a new deploy, cleaning) deletes it.
func TestLiveISONodeKept(t *testing.T) {
	tests := []struct {
		name     string
		steps    func(t *testing.T, d *hostDriver, s *Server, c client.Client, node string)
		wantGone bool
	}{
		{name: "on: eject, then ForceOff", steps: func(t *testing.T, d *hostDriver, _ *Server, _ client.Client, _ string) {
			d.eject()
			d.reset(schemas.ForceOffResetType)
		}},
		{name: "on: eject, then GracefulShutdown", steps: func(t *testing.T, d *hostDriver, _ *Server, _ client.Client, _ string) {
			d.eject()
			d.reset(schemas.GracefulShutdownResetType)
		}},
		{name: "off: eject the media it booted from, then a power-off request", steps: func(t *testing.T, d *hostDriver, _ *Server, c client.Client, node string) {
			d.reset(schemas.ForceOffResetType)
			waitNode(t, c, node, "powered off", poweredOff)
			d.eject()
			d.reset(schemas.ForceOffResetType)
		}},
		{name: "the deploy agent writes a disk", wantGone: true, steps: func(t *testing.T, d *hostDriver, s *Server, _ client.Client, _ string) {
			s.diskChanged(s.byName[d.name], s.byName[d.name].Disks[0].Name)
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
			d.insert(liveISO(t, `{"local-hostname": "`+node+`"}`, nil))
			d.reset(schemas.OnResetType)
			waitNode(t, env.Client, node, "created", created)

			tt.steps(t, d, s, env.Client, node)
			if tt.wantGone {
				waitNode(t, env.Client, node, "deleted", nil)
				if st := mustState(t, s, host); st.Node != "" {
					t.Errorf("state %+v", st)
				}
				return
			}
			waitNode(t, env.Client, node, "kept, NotReady", poweredOff)
			if st := mustState(t, s, host); st.Node != node || st.PowerOn || st.Media.Inserted {
				t.Errorf("state %+v", st)
			}
		})
	}
}
