package ironic

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/redfish"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestIronic runs the integration tests against one real Ironic
// (testenv.Ironic) and, per test, an in-process Redfish emulator whose
// hosts Ironic's conductor reaches on 127.0.0.1.
func TestIronic(t *testing.T) {
	inst := testenv.Ironic(t)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, inst *localironic.Instance)
	}{
		{"RegisterInspectPrepare", testRegisterInspectPrepare},
		{"PowerOneRequestPerTransition", testPowerOneRequestPerTransition},
		{"SlowBMC", testSlowBMC},
		{"BadCredentials", testBadCredentials},
		{"NodeDeletedBehindOurBack", testNodeDeletedBehindOurBack},
		{"AdoptThenDeprovision", testAdoptThenDeprovision},
		{"Detach", testDetach},
		{"ExternallyProvisioned", testExternallyProvisioned},
		{"Reinspect", testReinspect},
		{"RAIDCleanSteps", testRAIDCleanSteps},
		{"LiveISO", testLiveISO},
		{"CustomDeploy", testCustomDeploy},
		{"SeedRaw", testSeedRaw},
		{"ChecksumMismatch", testChecksumMismatch},
		{"SeedQcow2", testSeedQcow2},
		// Last: it stops Ironic and starts it again.
		{"EngineDownAndBack", testEngineDownAndBack},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, inst) })
	}
}

// bench is an emulator with hosts and an Ironic factory for a test.
type bench struct {
	t   *testing.T
	emu *emulator.Server
	fac provisioner.Factory
}

func newBench(t *testing.T, inst *localironic.Instance, hosts ...emulator.Host) *bench {
	t.Helper()
	emu, err := emulator.New(emulator.Config{Username: "admin", Password: "emu-pass-1", BootDelay: 100 * time.Millisecond, Hosts: hosts}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, err := emu.Start(ctx, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emu.Close)
	b := &bench{t: t, emu: emu}
	b.fac = b.factory(inst)
	return b
}

// factory is an Ironic factory for inst, polling every second.
func (b *bench) factory(inst *localironic.Instance, opts ...func(*Options)) provisioner.Factory {
	o := Options{Endpoint: inst.APIURL, DeployISO: inst.DeployISOURL, PollInterval: time.Second}
	for _, f := range opts {
		f(&o)
	}
	fac, err := New(o)
	if err != nil {
		b.t.Fatal(err)
	}
	return fac
}

// host is the provisioner.Host of an emulated host, in a namespace of the
// test's own so that parallel runs' node names differ.
func (b *bench) host(name string) provisioner.Host {
	b.t.Helper()
	access, err := bmc.Parse(b.emu.Address(name))
	if err != nil {
		b.t.Fatal(err)
	}
	user, pass, _ := b.emu.Credentials(name)
	ns := "t" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(b.t.Name()))
	if len(ns) > 50 {
		ns = ns[:50]
	}
	return provisioner.Host{
		Namespace: ns, Name: name, UID: "uid-" + name,
		BMC:      provisioner.Target{Access: access, Credentials: provisioner.Credentials{Username: user, Password: pass}},
		BootMode: metal3v1alpha1.UEFI,
	}
}

func (b *bench) open(h provisioner.Host) provisioner.Provisioner {
	b.t.Helper()
	p, err := b.fac.Open(context.Background(), h)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		// Leave no node behind in a shared Ironic.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			res, err := p.Detach(ctx)
			if err == nil && !res.Dirty {
				return
			}
			time.Sleep(time.Second)
		}
	})
	return p
}

// until calls step until it is done (a clean Result), failing the test on
// an error, an ErrorMessage or the deadline.
func until(t *testing.T, what string, limit time.Duration, step func(ctx context.Context) (provisioner.Result, error)) {
	t.Helper()
	// The machine is shared: Ironic's steps take seconds, limits are
	// generous.
	limit *= 2
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		res, err := step(ctx)
		switch {
		case err != nil:
			t.Fatalf("%s: %v", what, err)
		case res.ErrorMessage != "":
			t.Fatalf("%s: ErrorMessage %s", what, res.ErrorMessage)
		case !res.Dirty:
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: still under way after %s", what, limit)
		case <-time.After(min(res.RequeueAfter, time.Second)):
		}
	}
}

func register(p provisioner.Provisioner, d provisioner.RegisterData) func(context.Context) (provisioner.Result, error) {
	return func(ctx context.Context) (provisioner.Result, error) {
		res, _, err := p.Register(ctx, d)
		return res, err
	}
}

var noClean = provisioner.RegisterData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled}

func testRegisterInspectPrepare(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0", CPUs: 6, MemoryMiB: 4096,
		NICs: []emulator.NIC{{Name: "eth0", MAC: "52:54:00:c0:00:01"}, {Name: "eth1", MAC: "52:54:00:c0:00:02"}}})
	h := b.host("node-0")
	h.BootMACAddress = "52:54:00:c0:00:01"
	p := b.open(h)
	until(t, "register", time.Minute, register(p, noClean))

	var hw *metal3v1alpha1.HardwareDetails
	until(t, "inspect", 2*time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		res, details, err := p.Inspect(ctx, provisioner.InspectData{})
		hw = details
		return res, err
	})
	if hw == nil || hw.CPU.Count != 6 || hw.RAMMebibytes != 4096 || hw.CPU.Arch != "x86_64" {
		t.Fatalf("hardware details %+v, want 6 x86_64 CPUs and 4096 MiB", hw)
	}
	if len(hw.Storage) != 1 || hw.Storage[0].SizeBytes != metal3v1alpha1.Capacity(emulator.DefaultDiskGiB)<<30 {
		t.Errorf("storage %+v, want the emulator's %d GiB disk", hw.Storage, emulator.DefaultDiskGiB)
	}
	macs := map[string]bool{}
	for _, n := range hw.NIC {
		macs[n.MAC] = true
	}
	if !macs["52:54:00:c0:00:01"] || !macs["52:54:00:c0:00:02"] {
		t.Errorf("NICs %+v, want the emulator's two MACs", hw.NIC)
	}
	// With the BMCs' inventory beside Ironic's: the NICs' names (which
	// Metal3DataTemplates' fromHostInterface name) and the disk's name.
	withBMC := b.factory(inst, func(o *Options) { o.BMCs = redfish.New(redfish.Options{}) })
	pb, err := withBMC.Open(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	bres, hw, err := pb.Inspect(context.Background(), provisioner.InspectData{})
	if err != nil || bres.Dirty || hw == nil {
		t.Fatalf("inspected host with the BMC's inventory: %+v %+v %v", bres, hw, err)
	}
	names := map[string]string{}
	for _, n := range hw.NIC {
		names[n.MAC] = n.Name
	}
	if names["52:54:00:c0:00:01"] != "eth0" || names["52:54:00:c0:00:02"] != "eth1" || hw.CPU.Count != 6 || len(hw.Storage) != 1 || hw.Storage[0].Name == "" {
		t.Errorf("hardware details with the BMC's inventory: NICs %+v, CPUs %d, storage %+v", hw.NIC, hw.CPU.Count, hw.Storage)
	}
	until(t, "prepare", time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Prepare(ctx, provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled,
			RootDeviceHints: &metal3v1alpha1.RootDeviceHints{MinSizeGigabytes: 10}})
	})
	// Available now: a second Prepare is done at once.
	if res, err := p.Prepare(context.Background(), provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled}); err != nil || res.Dirty || res.ErrorMessage != "" {
		t.Errorf("Prepare of an available node: %+v %v", res, err)
	}
	// Firmware settings the redfish driver cannot map are refused by name.
	res, err := p.Prepare(context.Background(), provisioner.PrepareData{Firmware: &metal3v1alpha1.FirmwareConfig{VirtualizationEnabled: ptr(true)}}) //nolint:staticcheck // the deprecated spec.firmware is refused by name
	if err != nil || !strings.Contains(res.ErrorMessage, "spec.firmware") {
		t.Errorf("Prepare with spec.firmware: %+v %v", res, err)
	}
}

func testPowerOneRequestPerTransition(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	p := b.open(b.host("node-0"))
	until(t, "register", time.Minute, register(p, noClean))
	before := b.state("node-0").Resets
	until(t, "power on", time.Minute, p.PowerOn)
	if st := b.state("node-0"); !st.PowerOn || st.Resets != before+1 {
		t.Errorf("after PowerOn: on %v, %d resets, want on and exactly one reset request", st.PowerOn, st.Resets-before)
	}
	if ps, err := p.PowerState(context.Background()); err != nil || ps != provisioner.PowerOn {
		t.Errorf("PowerState %q %v", ps, err)
	}
	// Already on: nothing is sent.
	until(t, "power on again", time.Minute, p.PowerOn)
	before = b.state("node-0").Resets
	until(t, "power off", time.Minute, func(ctx context.Context) (provisioner.Result, error) { return p.PowerOff(ctx, true) })
	if st := b.state("node-0"); st.PowerOn || st.Resets != before+1 {
		t.Errorf("after PowerOff: on %v, %d resets, want off and exactly one reset request", st.PowerOn, st.Resets-before)
	}
	until(t, "reboot an off host", time.Minute, func(ctx context.Context) (provisioner.Result, error) { return p.Reboot(ctx, true) })
	if !b.state("node-0").PowerOn {
		t.Error("Reboot left an off host off")
	}
	until(t, "reboot an on host", time.Minute, func(ctx context.Context) (provisioner.Result, error) { return p.Reboot(ctx, false) })
	before = b.state("node-0").Resets
	until(t, "soft power off", time.Minute, func(ctx context.Context) (provisioner.Result, error) { return p.PowerOff(ctx, false) })
	if st := b.state("node-0"); st.PowerOn || st.Resets != before+1 {
		t.Errorf("after a soft PowerOff: on %v, %d reset requests, want off and exactly one", st.PowerOn, st.Resets-before)
	}
}

func (b *bench) state(host string) emulator.HostState {
	st, ok := b.emu.State(host)
	if !ok {
		b.t.Fatalf("emulator has no host %s", host)
	}
	return st
}

func testBadCredentials(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	h := b.host("node-0")
	h.BMC.Credentials.Password = "wrong-secret-9"
	p := b.open(h)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var msg string
	for msg == "" && ctx.Err() == nil {
		res, _, err := p.Register(ctx, noClean)
		if err != nil {
			t.Fatal(err)
		}
		msg = res.ErrorMessage
		if res.Dirty {
			time.Sleep(time.Second)
		}
	}
	if !strings.Contains(msg, bmcName(h.BMC.Access)) || strings.Contains(msg, "wrong-secret-9") {
		t.Fatalf("ErrorMessage %q, want one naming the BMC %s without the password", msg, bmcName(h.BMC.Access))
	}
	// The right password: registered.
	h.BMC.Credentials.Password = "emu-pass-1"
	p = b.open(h)
	until(t, "register with the right password", time.Minute, register(p, provisioner.RegisterData{CredentialsChanged: true, AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled}))
}

func testNodeDeletedBehindOurBack(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	h := b.host("node-0")
	p := b.open(h)
	until(t, "register", time.Minute, register(p, noClean))
	_, first, err := p.Register(context.Background(), noClean)
	if err != nil {
		t.Fatal(err)
	}
	// Someone deletes the node in Ironic.
	other, err := b.fac.Open(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	until(t, "delete", time.Minute, other.Delete)
	if _, err := p.PowerState(context.Background()); !errors.Is(err, errNotFound) {
		t.Errorf("PowerState of a deleted node: %v", err)
	}
	until(t, "register again", time.Minute, register(p, noClean))
	_, second, err := p.Register(context.Background(), noClean)
	if err != nil || second == "" || second == first {
		t.Errorf("registered again as %q (was %q): %v", second, first, err)
	}
}

// testAdoptThenDeprovision: a host provisioned elsewhere (on, with
// an image) is adopted without a power request, then deprovisioned
// without cleaning (Ironic powers it off and the node is available).
func testAdoptThenDeprovision(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	h := b.host("node-0")
	// status.hardware from before the pivot: its NICs become ports.
	mac := b.emu.Hosts()[0].NICs[0].MAC
	h.Hardware = &metal3v1alpha1.HardwareDetails{NIC: []metal3v1alpha1.NIC{{MAC: mac}}}
	p := b.open(h)
	until(t, "register", time.Minute, register(p, provisioner.RegisterData{State: metal3v1alpha1.StateProvisioned, AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled}))
	ih := p.(*ironicHost)
	if ps, err := ih.listPorts(context.Background(), ih.nodeID, ""); err != nil || len(ps) != 1 || ps[0].Address != strings.ToLower(mac) {
		t.Errorf("ports %+v %v, want one for %s", ps, err, mac)
	}
	until(t, "power on", time.Minute, p.PowerOn)
	before := b.state("node-0").Resets
	img := metal3v1alpha1.Image{URL: "http://127.0.0.1:1/img.qcow2", Checksum: "0123456789abcdef0123456789abcdef", ChecksumType: metal3v1alpha1.MD5}
	until(t, "adopt", time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Adopt(ctx, provisioner.AdoptData{State: metal3v1alpha1.StateProvisioned, Image: img})
	})
	if st := b.state("node-0"); !st.PowerOn || st.Resets != before {
		t.Errorf("adoption touched the host: on %v, %d reset requests", st.PowerOn, st.Resets-before)
	}
	// Registered again while active: still nothing sent to the host.
	until(t, "register active", time.Minute, register(p, provisioner.RegisterData{State: metal3v1alpha1.StateProvisioned, AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled}))
	until(t, "deprovision", 2*time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Deprovision(ctx, provisioner.DeprovisionData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	})
	if b.state("node-0").PowerOn {
		t.Error("deprovisioned host is still on")
	}
}

// testDetach: Ironic forgets the node; the host keeps its power.
func testDetach(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	h := b.host("node-0")
	p := b.open(h)
	until(t, "register", time.Minute, register(p, noClean))
	until(t, "power on", time.Minute, p.PowerOn)
	before := b.state("node-0").Resets
	until(t, "detach", time.Minute, p.Detach)
	if st := b.state("node-0"); !st.PowerOn || st.Resets != before {
		t.Errorf("detach touched the host: on %v, %d reset requests", st.PowerOn, st.Resets-before)
	}
	if _, err := p.PowerState(context.Background()); !errors.Is(err, errNotFound) {
		t.Errorf("the node is still in Ironic: %v", err)
	}
}

// testEngineDownAndBack: with Ironic stopped, calls fail with
// ErrEngineUnavailable naming the endpoint; started again (same state
// directory, ports and database), the node is there as it was.
func testEngineDownAndBack(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	p := b.open(b.host("node-0"))
	until(t, "register", time.Minute, register(p, noClean))
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if err := inst.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	_, _, err := p.Register(ctx, noClean)
	if !errors.Is(err, provisioner.ErrEngineUnavailable) || !strings.Contains(err.Error(), inst.APIURL) {
		t.Errorf("Register with Ironic down: %v, want ErrEngineUnavailable naming %s", err, inst.APIURL)
	}
	if _, err := p.PowerOn(ctx); !errors.Is(err, provisioner.ErrEngineUnavailable) {
		t.Errorf("PowerOn with Ironic down: %v, want ErrEngineUnavailable", err)
	}
	again, err := localironic.Up(ctx, localironic.Options{StateDir: inst.StateDir, ServeImagesInProcess: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := again.Stop(ctx); err != nil {
			t.Errorf("stopping Ironic: %v", err)
		}
	})
	if again.APIURL != inst.APIURL {
		t.Fatalf("Ironic came back at %s, not %s", again.APIURL, inst.APIURL)
	}
	until(t, "register after the restart", time.Minute, register(p, noClean))
	if ps, err := p.PowerState(ctx); err != nil || ps != provisioner.PowerOff {
		t.Errorf("PowerState after the restart: %q %v", ps, err)
	}
}
