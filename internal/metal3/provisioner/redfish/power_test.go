package redfish

import (
	"context"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/direct"
)

// lifecycle is the direct provisioner over this package, as the
// metal3-operator runs it without Ironic, on a clock the test moves.
func lifecycle(t *testing.T, target provisioner.Target) (provisioner.Provisioner, *clocktesting.FakePassiveClock) {
	t.Helper()
	clk := clocktesting.NewFakePassiveClock(time.Now())
	f := direct.NewWithOptions(New(Options{}), direct.Options{Clock: clk, PowerTimeout: time.Minute, PollInterval: time.Second})
	p, err := f.Open(t.Context(), provisioner.Host{Namespace: "metal3", Name: "node-0", UID: "uid-0", BMC: target})
	noErr(t, err)
	return p, clk
}

// until calls step as the controller does, again while it is Dirty, and
// fails on an error or an ErrorMessage. It returns how many calls it took.
func until(t *testing.T, what string, step func(context.Context) (provisioner.Result, error)) int {
	t.Helper()
	for i := 1; i <= 100; i++ {
		res, err := step(t.Context())
		if err != nil || res.ErrorMessage != "" {
			t.Fatalf("%s, call %d: %v %q", what, i, err, res.ErrorMessage)
		}
		if !res.Dirty {
			return i
		}
	}
	t.Fatalf("%s: still Dirty after 100 calls", what)
	return 0
}

var isoImage = func() *metal3v1alpha1.Image {
	f := direct.LiveISO
	return &metal3v1alpha1.Image{URL: "http://images.example/live.iso", DiskFormat: &f}
}()

func provision(p provisioner.Provisioner) func(context.Context) (provisioner.Result, error) {
	return func(ctx context.Context) (provisioner.Result, error) {
		return p.Provision(ctx, provisioner.ProvisionData{Image: isoImage})
	}
}

func deprovision(p provisioner.Provisioner) func(context.Context) (provisioner.Result, error) {
	return func(ctx context.Context) (provisioner.Result, error) {
		return p.Deprovision(ctx, provisioner.DeprovisionData{})
	}
}

func powerOff(p provisioner.Provisioner, force bool) func(context.Context) (provisioner.Result, error) {
	return func(ctx context.Context) (provisioner.Result, error) { return p.PowerOff(ctx, force) }
}

// TestLaggingBMC: a BMC that shows the old power state for a while after
// a Reset, and refuses (409, 400) a Reset sent while it still does, gets
// exactly one Reset per transition through the lifecycle the controller
// drives, with no error, and the host reaches the state asked for. Each
// sequence is one that sent repeated Resets before: an image set while
// spec.online's power-on was in flight (Boot read the stale Off and sent
// On again), deprovisioning then powering off before delete (sent
// ForceOff again while the BMC still showed On), sushy-tools' restart
// that shows Off before On.
func TestLaggingBMC(t *testing.T) {
	tests := []struct {
		name        string
		power       string
		lag         int
		conflict    int
		dips        bool
		run         func(t *testing.T, p provisioner.Provisioner, clk *clocktesting.FakePassiveClock)
		wantResets  []string
		wantPosts   int
		wantPower   string
		wantBooted  bool
		wantEjected bool
	}{
		{name: "power on, 409 to a repeat", power: "Off", lag: 3, conflict: 409,
			run: func(t *testing.T, p provisioner.Provisioner, _ *clocktesting.FakePassiveClock) {
				if n := until(t, "power on", p.PowerOn); n < 3 {
					t.Errorf("power on done after %d calls: the lag was not seen", n)
				}
			},
			wantResets: []string{"On"}, wantPosts: 1, wantPower: "On"},
		{name: "graceful power off, 400 to a repeat", power: "On", lag: 3, conflict: 400,
			run: func(t *testing.T, p provisioner.Provisioner, _ *clocktesting.FakePassiveClock) {
				until(t, "power off", powerOff(p, false))
			},
			wantResets: []string{"GracefulShutdown"}, wantPosts: 1, wantPower: "Off"},
		{name: "an image set while spec.online's power-on is in flight", power: "Off", lag: 3, conflict: 409,
			run: func(t *testing.T, p provisioner.Provisioner, _ *clocktesting.FakePassiveClock) {
				if res, err := p.PowerOn(t.Context()); err != nil || !res.Dirty {
					t.Fatalf("power on: %+v %v, want Dirty", res, err)
				}
				until(t, "provision", provision(p))
			},
			wantResets: []string{"On", "ForceRestart"}, wantPosts: 2, wantPower: "On", wantBooted: true},
		{name: "deprovisioning, then powering off before delete", power: "On", lag: 3, conflict: 409,
			run: func(t *testing.T, p provisioner.Provisioner, _ *clocktesting.FakePassiveClock) {
				until(t, "provision", provision(p))
				until(t, "deprovision", deprovision(p))
				if n := until(t, "power off before delete", powerOff(p, true)); n != 1 {
					t.Errorf("power off before delete took %d calls, want 1: deprovisioning left the host off", n)
				}
			},
			wantResets: []string{"ForceRestart", "ForceOff"}, wantPosts: 2, wantPower: "Off", wantEjected: true},
		{name: "sushy-tools' fake driver: a restart shows Off, then On", power: "On", lag: 4, dips: true,
			run: func(t *testing.T, p provisioner.Provisioner, _ *clocktesting.FakePassiveClock) {
				until(t, "provision", provision(p))
			},
			wantResets: []string{"ForceRestart"}, wantPosts: 1, wantPower: "On", wantBooted: true},
		{name: "a repeat after the power timeout, refused mid-transition, is no error", power: "Off", lag: 40, conflict: 409,
			run: func(t *testing.T, p provisioner.Provisioner, clk *clocktesting.FakePassiveClock) {
				if res, err := p.PowerOn(t.Context()); err != nil || !res.Dirty {
					t.Fatalf("power on: %+v %v, want Dirty", res, err)
				}
				clk.SetTime(clk.Now().Add(time.Minute))
				until(t, "power on", p.PowerOn)
			},
			wantResets: []string{"On"}, wantPosts: 2, wantPower: "On"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bmc := newFakeBMC(t)
			bmc.mu.Lock()
			bmc.power, bmc.lag, bmc.conflict, bmc.restartDips = tt.power, tt.lag, tt.conflict, tt.dips
			bmc.mu.Unlock()
			p, clk := lifecycle(t, bmc.target("host-0"))
			tt.run(t, p, clk)
			bmc.mu.Lock()
			defer bmc.mu.Unlock()
			eq(t, tt.wantResets, bmc.resets, "accepted Resets")
			eq(t, tt.wantPosts, bmc.resetPosts, "Reset POSTs")
			eq(t, tt.wantPower, bmc.power, "power")
			if tt.wantBooted && (!bmc.inserted || bmc.image != isoImage.URL || bmc.bootTarget != "Cd" || bmc.bootEnabled != "Once") {
				t.Errorf("media inserted %v %q, boot override %s %s: want the ISO, Cd once", bmc.inserted, bmc.image, bmc.bootTarget, bmc.bootEnabled)
			}
			if tt.wantEjected && bmc.inserted {
				t.Errorf("media still inserted")
			}
		})
	}
}
