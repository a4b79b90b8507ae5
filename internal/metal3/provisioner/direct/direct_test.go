package direct

import (
	"context"
	"errors"
	"slices"
	"strings"
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

// step is one call of a power test and what it must answer.
type step struct {
	do      string                 // "on", "off", "reboot", "provision", "deprovision"
	advance time.Duration          // the clock moves on first
	refuse  bool                   // from this call on the BMC refuses power requests (ErrRefused)
	power   provisioner.PowerState // the BMC now reports this first (it caught up)
	want    string                 // "dirty", "done", "error" or "failed" (an ErrorMessage)
	msg     string                 // in the ErrorMessage, the error or the Progress
	ops     []string               // when set, the BMC operations so far
}

var liveISO = func() *metal3v1alpha1.Image {
	f := LiveISO
	return &metal3v1alpha1.Image{URL: "http://images.test/a.iso", DiskFormat: &f}
}()

// run makes the calls of steps on p, checking each answer.
func run(t *testing.T, p provisioner.Provisioner, f *hostopstest.Factory, h *hostopstest.Host, clk *clocktesting.FakePassiveClock, steps []step) {
	t.Helper()
	ctx := context.Background()
	for i, s := range steps {
		clk.SetTime(clk.Now().Add(s.advance))
		if s.power != "" {
			h.Power, h.Ignore = s.power, nil
		}
		if s.refuse {
			h.Fail = map[string]error{"PowerOn": provisioner.ErrRefused, "PowerOff": provisioner.ErrRefused}
		}
		var (
			res provisioner.Result
			err error
		)
		switch s.do {
		case "on":
			res, err = p.PowerOn(ctx)
		case "off":
			res, err = p.PowerOff(ctx, false)
		case "reboot":
			res, err = p.Reboot(ctx, true)
		case "provision":
			res, err = p.Provision(ctx, provisioner.ProvisionData{Image: liveISO})
		case "deprovision":
			res, err = p.Deprovision(ctx, provisioner.DeprovisionData{})
		default:
			t.Fatalf("step %d: unknown call %q", i+1, s.do)
		}
		got, text := "done", ""
		switch {
		case err != nil:
			got, text = "error", err.Error()
		case res.ErrorMessage != "":
			got, text = "failed", res.ErrorMessage
		case res.Dirty:
			got, text = "dirty", res.Progress
			if res.RequeueAfter != time.Second {
				t.Errorf("step %d (%s): RequeueAfter %s, want the poll interval", i+1, s.do, res.RequeueAfter)
			}
		}
		if got != s.want || !strings.Contains(text, s.msg) {
			t.Fatalf("step %d (%s): %s %q, want %s with %q", i+1, s.do, got, text, s.want, s.msg)
		}
		if ops := calls(f); s.ops != nil && !slices.Equal(ops, s.ops) {
			t.Fatalf("step %d (%s): BMC operations %v, want %v", i+1, s.do, ops, s.ops)
		}
	}
}

// TestPowerTransitions: one request per transition to a BMC slow to
// report the new state; the same request goes again only after the power
// timeout, at most PowerRetries times, then the transition fails; a
// repeat the BMC refuses as in progress is no error; a request for the
// other state goes at once.
func TestPowerTransitions(t *testing.T) {
	tests := []struct {
		name      string
		host      hostopstest.Host
		steps     []step
		wantCalls []string
	}{
		{name: "slow BMC: one request, Dirty until it reports on",
			host: hostopstest.Host{Power: provisioner.PowerOff, Lag: 3},
			steps: []step{{do: "on", want: "dirty", msg: "power on requested 0s ago (1 sent); the BMC still reports Off"},
				{do: "on", advance: 2 * time.Second, want: "dirty", msg: "requested 2s ago (1 sent)"},
				{do: "on", want: "dirty"}, {do: "on", want: "done"}, {do: "on", want: "done"}},
			wantCalls: []string{"PowerOn"}},
		{name: "already there: nothing sent",
			host:  hostopstest.Host{Power: provisioner.PowerOn},
			steps: []step{{do: "on", want: "done"}}},
		{name: "sent again after each timeout, twice, then failed; a new call starts afresh",
			host: hostopstest.Host{Power: provisioner.PowerOff, Ignore: map[string]bool{"PowerOn": true}},
			steps: []step{{do: "on", want: "dirty"}, {do: "on", advance: 59 * time.Second, want: "dirty", msg: "(1 sent)"},
				{do: "on", advance: time.Second, want: "dirty", msg: "(2 sent)"},
				{do: "on", advance: time.Minute, want: "dirty", msg: "(3 sent)"},
				{do: "on", advance: time.Minute, want: "failed",
					msg: "power on: the BMC did not reach the power state asked for: it still reports the host Off 3m0s after the first request (3 sent, 0 of them refused as in progress, each given 1m0s)"},
				{do: "on", want: "dirty", msg: "(1 sent)"}},
			wantCalls: []string{"PowerOn", "PowerOn", "PowerOn", "PowerOn"}},
		{name: "a repeat refused mid-transition is in flight, then done",
			host: hostopstest.Host{Power: provisioner.PowerOff, Lag: 4},
			steps: []step{{do: "on", want: "dirty"},
				{do: "on", advance: time.Minute, refuse: true, want: "dirty", msg: "(2 sent)"},
				{do: "on", want: "dirty"}, {do: "on", want: "dirty"}, {do: "on", want: "done"}},
			wantCalls: []string{"PowerOn", "PowerOn"}},
		{name: "repeats all refused: failed after the retries, naming them",
			host: hostopstest.Host{Power: provisioner.PowerOff, Ignore: map[string]bool{"PowerOn": true}},
			steps: []step{{do: "on", want: "dirty"},
				{do: "on", advance: time.Minute, refuse: true, want: "dirty"},
				{do: "on", advance: time.Minute, want: "dirty", msg: "(3 sent)"},
				{do: "on", advance: time.Minute, want: "failed", msg: "(3 sent, 2 of them refused as in progress, each given 1m0s)"}},
			wantCalls: []string{"PowerOn", "PowerOn", "PowerOn"}},
		{name: "a first request refused is an error, and is not remembered",
			host:      hostopstest.Host{Power: provisioner.PowerOff},
			steps:     []step{{do: "on", refuse: true, want: "error", msg: "refused"}, {do: "on", want: "error"}},
			wantCalls: []string{"PowerOn", "PowerOn"}},
		{name: "the other state goes at once",
			host:      hostopstest.Host{Power: provisioner.PowerOff, Lag: 1},
			steps:     []step{{do: "on", want: "dirty"}, {do: "off", want: "dirty", msg: "power off requested"}, {do: "off", want: "done"}},
			wantCalls: []string{"PowerOn", "PowerOff"}},
		{name: "a reboot is done once sent; a power-on while the BMC still reports off is that reboot in flight",
			host:      hostopstest.Host{Power: provisioner.PowerOn, Lag: 1},
			steps:     []step{{do: "reboot", want: "done"}, {do: "on", want: "dirty"}, {do: "on", want: "done"}, {do: "reboot", want: "done"}},
			wantCalls: []string{"Reboot", "Reboot"}},
		{name: "provisioning waits for the power-on in flight, then boots once",
			host: hostopstest.Host{Power: provisioner.PowerOff, Lag: 2},
			steps: []step{{do: "on", want: "dirty"}, {do: "provision", want: "dirty", msg: "power on", ops: []string{"PowerOn"}},
				{do: "provision", want: "dirty", ops: []string{"PowerOn", "Boot"}}, {do: "provision", want: "dirty"}, {do: "provision", want: "done"}, {do: "provision", want: "done"}},
			wantCalls: []string{"PowerOn", "Boot"}},
		{name: "provisioning waits for a power-off in flight, then boots",
			host: hostopstest.Host{Power: provisioner.PowerOn, Lag: 2},
			steps: []step{{do: "off", want: "dirty"}, {do: "provision", want: "dirty", msg: "power off", ops: []string{"PowerOff"}},
				{do: "provision", want: "dirty", ops: []string{"PowerOff", "Boot"}}, {do: "provision", want: "dirty"}, {do: "provision", want: "done"}},
			wantCalls: []string{"PowerOff", "Boot"}},
		{name: "deprovisioning: ejected once, forced off once, Dirty until off",
			host: hostopstest.Host{Power: provisioner.PowerOn, Ignore: map[string]bool{"PowerOff": true}},
			steps: []step{{do: "deprovision", want: "dirty", msg: "power off requested"}, {do: "deprovision", want: "dirty"},
				{do: "deprovision", power: provisioner.PowerOff, want: "done"}, {do: "off", want: "done"}},
			wantCalls: []string{"EjectMedia", "PowerOff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktesting.NewFakePassiveClock(time.Now())
			h := tt.host
			p, f := open(t, &h, clk, "pw")
			run(t, p, f, &h, clk, tt.steps)
			if got := calls(f); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("BMC operations %v, want %v", got, tt.wantCalls)
			}
		})
	}
}

// mediaHidden is a BMC that never shows the media inserted, as one that
// reports only an ImageName would.
type mediaHidden struct{ provisioner.BMCFactory }

type hiddenBMC struct{ provisioner.BMC }

func (m mediaHidden) Open(ctx context.Context, t provisioner.Target) (provisioner.BMC, error) {
	b, err := m.BMCFactory.Open(ctx, t)
	return hiddenBMC{b}, err
}

func (hiddenBMC) Media(context.Context) (provisioner.MediaState, error) {
	return provisioner.MediaState{}, nil
}

// TestProvisionBootsOnce: a BMC that does not show the media it was given
// is not sent Boot (and its restart) again on every pass; deprovisioning
// starts afresh.
func TestProvisionBootsOnce(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	bmcs := hostopstest.NewFactory()
	h := bmcs.Add(address, &hostopstest.Host{Username: "admin", Password: "pw", Power: provisioner.PowerOff})
	f := NewWithOptions(mediaHidden{bmcs}, Options{Clock: clk, PowerTimeout: time.Minute, PollInterval: time.Second})
	p, err := f.Open(context.Background(), provisioner.Host{Name: "node-1", UID: "uid-1",
		BMC: provisioner.Target{Access: bmc.Access{Endpoint: "http://bmc.test", SystemPath: "/redfish/v1/Systems/1"}, Credentials: provisioner.Credentials{Username: "admin", Password: "pw"}}})
	if err != nil {
		t.Fatal(err)
	}
	run(t, p, bmcs, h, clk, []step{{do: "provision", want: "done"}, {do: "provision", want: "done"},
		{do: "deprovision", want: "done"}, {do: "provision", want: "done"}})
	if got := calls(bmcs); !slices.Equal(got, []string{"Boot", "EjectMedia", "PowerOff", "Boot"}) {
		t.Errorf("BMC operations %v, want one Boot per provisioning", got)
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
