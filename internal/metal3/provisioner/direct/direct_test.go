package direct

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/hostops/hostopstest"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

const address = "http://bmc.test/redfish/v1/Systems/1"

// open is a direct provisioner for one fake host whose BMC reports the old
// power state for lag reads after each operation.
func open(t *testing.T, h *hostopstest.Host, clk *clocktesting.FakePassiveClock, password string) (provisioner.Provisioner, *hostopstest.Factory) {
	t.Helper()
	bmcs := hostopstest.NewFactory()
	h.Username, h.Password = "admin", "pw"
	bmcs.Add(address, h)
	f := NewWithOptions(bmcs, Options{Clock: clk, PowerTimeout: time.Minute, PollInterval: time.Second})
	p, err := f.Open(context.Background(), provisioner.Host{
		Namespace: "metal3", Name: "node-1", UID: "uid-1",
		BMC: provisioner.Target{Access: bmc.Access{Endpoint: "http://bmc.test", SystemPath: "/redfish/v1/Systems/1"}, Credentials: provisioner.Credentials{Username: "admin", Password: password}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, bmcs
}

func calls(f *hostopstest.Factory) []string {
	_, _, c, _ := f.State(address)
	return c
}

var dirty = provisioner.Result{Dirty: true, RequeueAfter: time.Second}

// TestPowerOncePerTransition: a BMC slow to report the new power state
// gets one request per transition; the same request goes again only after
// the power timeout, and a request for the other state goes at once.
func TestPowerOncePerTransition(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	p, f := open(t, &hostopstest.Host{Power: provisioner.PowerOff, Lag: 3}, clk, "pw")
	ctx := context.Background()
	want := []provisioner.Result{dirty, dirty, dirty, {}}
	for i, w := range want {
		res, err := p.PowerOn(ctx)
		if err != nil || res != w {
			t.Fatalf("PowerOn #%d: %+v %v, want %+v", i+1, res, err, w)
		}
	}
	if got := calls(f); !slices.Equal(got, []string{"PowerOn"}) {
		t.Errorf("BMC operations %v, want one PowerOn", got)
	}

	// Off, slow again; the request times out and is sent again.
	if res, err := p.PowerOff(ctx, false); err != nil || res != dirty {
		t.Fatalf("PowerOff: %+v %v", res, err)
	}
	if res, err := p.PowerOff(ctx, false); err != nil || res != dirty {
		t.Fatalf("PowerOff again: %+v %v", res, err)
	}
	clk.SetTime(clk.Now().Add(time.Minute))
	if _, err := p.PowerOff(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got := calls(f); !slices.Equal(got, []string{"PowerOn", "PowerOff", "PowerOff"}) {
		t.Errorf("BMC operations %v, want PowerOn, then PowerOff sent again after the timeout", got)
	}
}

// TestRebootThenPowerOn: a reboot is done once sent; a power-on asked for
// while the BMC still reports the host off is that reboot in flight, and a
// second reboot is a new request.
func TestRebootThenPowerOn(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	p, f := open(t, &hostopstest.Host{Power: provisioner.PowerOn, Lag: 1}, clk, "pw")
	ctx := context.Background()
	if res, err := p.Reboot(ctx, true); err != nil || res.Dirty {
		t.Fatalf("Reboot: %+v %v", res, err)
	}
	if res, err := p.PowerOn(ctx); err != nil || res != dirty {
		t.Fatalf("PowerOn during the reboot: %+v %v, want Dirty", res, err)
	}
	if res, err := p.PowerOn(ctx); err != nil || res.Dirty {
		t.Fatalf("PowerOn once the host reports on: %+v %v", res, err)
	}
	if _, err := p.Reboot(ctx, false); err != nil {
		t.Fatal(err)
	}
	if got, forced := calls(f), f.Forced(address); !slices.Equal(got, []string{"Reboot", "Reboot"}) || !slices.Equal(forced, []bool{true, false}) {
		t.Errorf("BMC operations %v forced %v, want two reboots, the first forced", got, forced)
	}
}

func TestProvision(t *testing.T) {
	liveISO, qcow2, raw := LiveISO, "qcow2", "raw"
	image := &metal3v1alpha1.Image{URL: "http://images.test/a.iso", DiskFormat: &liveISO, Checksum: "abc", ChecksumType: metal3v1alpha1.SHA256}
	disk := func(format *string) *metal3v1alpha1.Image {
		return &metal3v1alpha1.Image{URL: "http://images.test/node.img", DiskFormat: format, Checksum: "abc"}
	}
	refused := provisioner.Result{ErrorMessage: ErrDiskImage.Error()}
	tests := []struct {
		name      string
		media     provisioner.MediaState
		power     provisioner.PowerState
		data      provisioner.ProvisionData
		want      provisioner.Result
		wantCalls []string
	}{
		{name: "live ISO: booted by URL alone", power: provisioner.PowerOff,
			data: provisioner.ProvisionData{Image: image, UserData: []byte("#cloud-config")}, wantCalls: []string{"Boot"}},
		{name: "live ISO already inserted, host off: powered on", power: provisioner.PowerOff, media: provisioner.MediaState{Inserted: true, Image: image.URL},
			data: provisioner.ProvisionData{Image: image}, wantCalls: []string{"PowerOn"}},
		{name: "another image inserted: booted", power: provisioner.PowerOn, media: provisioner.MediaState{Inserted: true, Image: "http://images.test/old.iso"},
			data: provisioner.ProvisionData{Image: image}, wantCalls: []string{"Boot"}},
		{name: "qcow2: refused, nothing sent", power: provisioner.PowerOff, data: provisioner.ProvisionData{Image: disk(&qcow2), UserData: []byte("#cloud-config")}, want: refused},
		{name: "raw: refused", power: provisioner.PowerOn, data: provisioner.ProvisionData{Image: disk(&raw)}, want: refused},
		{name: "no format: refused", power: provisioner.PowerOff, data: provisioner.ProvisionData{Image: disk(nil)}, want: refused},
		{name: "custom deploy: powered on, no media", power: provisioner.PowerOff,
			data: provisioner.ProvisionData{CustomDeploy: &metal3v1alpha1.CustomDeploy{Method: "install_great_os"}}, wantCalls: []string{"PowerOn"}},
		{name: "nothing to provision", power: provisioner.PowerOff,
			want: provisioner.Result{ErrorMessage: errNothingToProvision.Error()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, f := open(t, &hostopstest.Host{Power: tt.power, Media: tt.media}, clocktesting.NewFakePassiveClock(time.Now()), "pw")
			res, err := p.Provision(context.Background(), tt.data)
			if err != nil || res != tt.want {
				t.Fatalf("Provision: %+v %v, want %+v", res, err, tt.want)
			}
			power, _, got, boots := f.State(address)
			if !slices.Equal(got, tt.wantCalls) {
				t.Errorf("BMC operations %v, want %v", got, tt.wantCalls)
			}
			if tt.want.ErrorMessage == "" && power != provisioner.PowerOn {
				t.Errorf("the host is %s after provisioning", power)
			}
			if tt.want.ErrorMessage != "" && power != tt.power {
				t.Errorf("the host went %s though provisioning was refused", power)
			}
			if slices.Contains(tt.wantCalls, "Boot") && boots[0].Image.URL != image.URL {
				t.Errorf("booted %+v", boots[0])
			}
		})
	}
}

// TestDiskImageMessage: the refusal names the field, why, and what the
// direct provisioner does boot.
func TestDiskImageMessage(t *testing.T) {
	want := "spec.image: a disk image needs Ironic to be written to the host's disk; this metal3-operator has no --ironic-endpoint (only live-iso images are booted from virtual media)"
	if ErrDiskImage.Error() != want {
		t.Errorf("message %q, want %q", ErrDiskImage.Error(), want)
	}
}

// TestLifecycleSteps: what each of the other steps asks of the BMC.
func TestLifecycleSteps(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		password  string
		fail      map[string]error
		step      func(p provisioner.Provisioner) (provisioner.Result, error)
		wantErr   error
		wantCalls []string
	}{
		{name: "register, credentials changed: checked", password: "wrong", wantErr: provisioner.ErrCredentials,
			step: func(p provisioner.Provisioner) (provisioner.Result, error) {
				res, _, err := p.Register(ctx, provisioner.RegisterData{CredentialsChanged: true})
				return res, err
			}},
		{name: "register, credentials unchanged: the BMC is not asked", password: "wrong",
			step: func(p provisioner.Provisioner) (provisioner.Result, error) {
				res, id, err := p.Register(ctx, provisioner.RegisterData{})
				if id != "uid-1" {
					t.Errorf("id %q, want the host's UID", id)
				}
				return res, err
			}},
		{name: "inspect fails as the BMC does", fail: map[string]error{"Inspect": provisioner.ErrUnreachable}, wantErr: provisioner.ErrUnreachable,
			step: func(p provisioner.Provisioner) (provisioner.Result, error) {
				res, _, err := p.Inspect(ctx, provisioner.InspectData{Refresh: true})
				return res, err
			}},
		{name: "prepare: nothing sent",
			step: func(p provisioner.Provisioner) (provisioner.Result, error) {
				return p.Prepare(ctx, provisioner.PrepareData{})
			}},
		{name: "adopt: nothing sent",
			step: func(p provisioner.Provisioner) (provisioner.Result, error) {
				return p.Adopt(ctx, provisioner.AdoptData{})
			}},
		{name: "deprovision: ejected and forced off", wantCalls: []string{"EjectMedia", "PowerOff"},
			step: func(p provisioner.Provisioner) (provisioner.Result, error) {
				return p.Deprovision(ctx, provisioner.DeprovisionData{})
			}},
		{name: "deprovision: an eject failure stops it", fail: map[string]error{"EjectMedia": provisioner.ErrRefused}, wantErr: provisioner.ErrRefused, wantCalls: []string{"EjectMedia"},
			step: func(p provisioner.Provisioner) (provisioner.Result, error) {
				return p.Deprovision(ctx, provisioner.DeprovisionData{})
			}},
		{name: "delete: nothing sent",
			step: func(p provisioner.Provisioner) (provisioner.Result, error) { return p.Delete(ctx) }},
		{name: "detach: nothing sent",
			step: func(p provisioner.Provisioner) (provisioner.Result, error) { return p.Detach(ctx) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.password == "" {
				tt.password = "pw"
			}
			p, f := open(t, &hostopstest.Host{Power: provisioner.PowerOn, Fail: tt.fail}, clocktesting.NewFakePassiveClock(time.Now()), tt.password)
			res, err := tt.step(p)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) || res != (provisioner.Result{}) {
				t.Errorf("result %+v err %v, want err %v", res, err, tt.wantErr)
			}
			if got := calls(f); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("BMC operations %v, want %v", got, tt.wantCalls)
			}
			if slices.Contains(tt.wantCalls, "PowerOff") && !slices.Equal(f.Forced(address), []bool{true}) {
				t.Errorf("power off forced %v", f.Forced(address))
			}
		})
	}
}
