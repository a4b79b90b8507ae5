package ironic

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// testLiveISO: a live ISO is a ramdisk deploy: Ironic inserts the ISO
// and boots the host from it, with no agent and no config drive; then
// deprovisioning ejects it and powers the host off.
func testLiveISO(t *testing.T, inst *localironic.Instance) {
	if err := os.WriteFile(filepath.Join(inst.HTTPRoot, "live.iso"), make([]byte, 64<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	p := b.open(b.host("node-0"))
	until(t, "register", time.Minute, register(p, noClean))
	until(t, "prepare", time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Prepare(ctx, provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	})
	iso := inst.HTTPURL + "/live.iso"
	d := provisioner.ProvisionData{Image: &metal3v1alpha1.Image{URL: iso, DiskFormat: ptr("live-iso")}, UserData: []byte("#cloud-config\n")}
	until(t, "provision", 2*time.Minute, func(ctx context.Context) (provisioner.Result, error) { return p.Provision(ctx, d) })
	st := b.state("node-0")
	if !st.PowerOn || !st.Media.Inserted || st.Media.Image != iso {
		t.Errorf("after a live ISO deploy: on %v, media %+v, want on with %s inserted", st.PowerOn, st.Media, iso)
	}
	until(t, "deprovision", 2*time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Deprovision(ctx, provisioner.DeprovisionData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	})
	if st := b.state("node-0"); st.PowerOn || st.Media.Inserted {
		t.Errorf("after deprovisioning: on %v, media inserted %v", st.PowerOn, st.Media.Inserted)
	}
}

// testReinspect: Refresh inspects a known host again, once.
func testReinspect(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	p := b.open(b.host("node-0"))
	until(t, "register", time.Minute, register(p, noClean))
	inspect := func(refresh bool) func(context.Context) (provisioner.Result, error) {
		return func(ctx context.Context) (provisioner.Result, error) {
			res, _, err := p.Inspect(ctx, provisioner.InspectData{Refresh: refresh})
			return res, err
		}
	}
	until(t, "inspect", time.Minute, inspect(false))
	ih := p.(*ironicHost)
	first, err := ih.node(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := p.Inspect(context.Background(), provisioner.InspectData{Refresh: true})
	if err != nil || !res.Dirty {
		t.Fatalf("Inspect with Refresh of an inspected host: %+v %v, want it started", res, err)
	}
	until(t, "inspect again", time.Minute, inspect(true))
	again, err := ih.node(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if again.InspectionFinishedAt == nil || !again.InspectionFinishedAt.After(*first.InspectionFinishedAt) {
		t.Errorf("inspection finished at %v, then %v: not inspected again", first.InspectionFinishedAt, again.InspectionFinishedAt)
	}
}

// TestIronicHTTPBasic: an http_basic Ironic with the credentials file it
// writes, read by ReadBasicAuthFile; a wrong password is refused with an
// error naming the endpoint and not the password.
func TestIronicHTTPBasic(t *testing.T) {
	inst := testenv.Ironic(t, func(o *localironic.Options) { o.Auth = localironic.AuthHTTPBasic })
	auth, err := ReadBasicAuthFile(inst.CredentialsFile)
	if err != nil {
		t.Fatal(err)
	}
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	b.fac = b.factory(inst, func(o *Options) { o.Auth = auth })
	p := b.open(b.host("node-0"))
	until(t, "register", time.Minute, register(p, noClean))

	auth.Password = "not-the-password-7"
	fac := b.factory(inst, func(o *Options) { o.Auth = auth })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bad, err := fac.Open(ctx, b.host("node-0"))
	if err == nil {
		_, _, err = bad.Register(ctx, noClean)
	}
	if err == nil || !strings.Contains(err.Error(), inst.APIURL) || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "not-the-password-7") {
		t.Errorf("a wrong password: %v, want a 401 naming %s without the password", err, inst.APIURL)
	}
}

// testExternallyProvisioned: a host provisioned outside (no image known)
// is adopted, then deleted from Ironic, neither touching the host.
func testExternallyProvisioned(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	p := b.open(b.host("node-0"))
	d := provisioner.RegisterData{State: metal3v1alpha1.StateExternallyProvisioned, AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled}
	until(t, "register", time.Minute, register(p, d))
	until(t, "power on", time.Minute, p.PowerOn)
	before := b.state("node-0").Resets
	until(t, "adopt", time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Adopt(ctx, provisioner.AdoptData{State: metal3v1alpha1.StateExternallyProvisioned})
	})
	until(t, "delete", time.Minute, p.Delete)
	if st := b.state("node-0"); !st.PowerOn || st.Resets != before {
		t.Errorf("adopting and deleting touched the host: on %v, %d reset requests", st.PowerOn, st.Resets-before)
	}
	if n, err := p.(*ironicHost).findNode(context.Background()); err != nil || n != nil {
		t.Errorf("after Delete Ironic still has the node: %v", err)
	}
}

// testRAIDCleanSteps: hardware RAID runs the redfish RAID interface's
// clean steps; the emulator's storage has no Volumes, so cleaning fails
// and the failure is an ErrorMessage naming the step.
func testRAIDCleanSteps(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	h := b.host("node-0")
	h.BootMACAddress = b.emu.Hosts()[0].NICs[0].MAC
	p := b.open(h)
	until(t, "register", time.Minute, register(p, noClean))
	d := provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled,
		RAID: &metal3v1alpha1.RAIDConfig{HardwareRAIDVolumes: []metal3v1alpha1.HardwareRAIDVolume{{Level: "1"}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var res provisioner.Result
	for ctx.Err() == nil {
		var err error
		if res, err = p.Prepare(ctx, d); err != nil {
			t.Fatal(err)
		}
		if !res.Dirty {
			break
		}
		time.Sleep(res.RequeueAfter)
	}
	if !strings.Contains(res.ErrorMessage, "cleaning failed") || !strings.Contains(res.ErrorMessage, "delete_configuration") {
		t.Errorf("Prepare with hardware RAID on the emulator: %+v, want a cleaning failure naming the RAID step", res)
	}
}

// testCustomDeploy: a custom deploy is the custom-agent deploy interface
// with one deploy step named by the method, which Ironic asks the agent
// for; the emulator's agent offers no such step, so the deploy fails with
// an ErrorMessage naming the custom deploy and the step.
func testCustomDeploy(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	h := b.host("node-0")
	h.BootMACAddress = b.emu.Hosts()[0].NICs[0].MAC
	p := b.open(h)
	until(t, "register", time.Minute, register(p, noClean))
	until(t, "prepare", time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		return p.Prepare(ctx, provisioner.PrepareData{AutomatedCleaningMode: metal3v1alpha1.CleaningModeDisabled})
	})
	d := provisioner.ProvisionData{CustomDeploy: &metal3v1alpha1.CustomDeploy{Method: "install_coreos"}, UserData: []byte("#cloud-config\n")}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var res provisioner.Result
	for ctx.Err() == nil {
		var err error
		if res, err = p.Provision(ctx, d); err != nil {
			t.Fatal(err)
		}
		if !res.Dirty {
			break
		}
		time.Sleep(res.RequeueAfter)
	}
	if !strings.Contains(res.ErrorMessage, "(custom deploy install_coreos)") || !strings.Contains(res.ErrorMessage, "'step': 'install_coreos'") {
		t.Errorf("custom deploy: %+v, want Ironic's refusal of the install_coreos step", res)
	}
	n, err := p.(*ironicHost).node(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.DeployInterface != deployCustomAgent {
		t.Errorf("deploy interface %q, want %s", n.DeployInterface, deployCustomAgent)
	}
}

// testSlowBMC: a BMC that applies a reset seconds after answering it
// still gets one reset request per transition: while Ironic waits for the
// power state, the node's target_power_state holds every further call.
func testSlowBMC(t *testing.T, inst *localironic.Instance) {
	b := newBench(t, inst, emulator.Host{Name: "node-0"})
	p := b.open(b.host("node-0"))
	until(t, "register", time.Minute, register(p, noClean))
	b.emu.SetFault("node-0", emulator.Fault{PowerLag: 4 * time.Second})
	before := b.state("node-0").Resets
	calls := 0
	until(t, "power on", 2*time.Minute, func(ctx context.Context) (provisioner.Result, error) {
		calls++
		return p.PowerOn(ctx)
	})
	if st := b.state("node-0"); !st.PowerOn || st.Resets != before+1 || calls < 2 {
		t.Errorf("PowerOn of a slow BMC: on %v, %d reset requests in %d calls, want on and one request over several calls", st.PowerOn, st.Resets-before, calls)
	}
}
