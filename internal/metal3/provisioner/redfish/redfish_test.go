package redfish

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

func open(t *testing.T, f provisioner.BMCFactory, target provisioner.Target) provisioner.BMC {
	t.Helper()
	p, err := f.Open(t.Context(), target)
	noErr(t, err)
	return p
}

func TestRegisterAndInspect(t *testing.T) {
	bmc := newFakeBMC(t)
	p := open(t, New(Options{}), bmc.target("host-0"))
	noErr(t, p.Register(t.Context()))

	hw, err := p.Inspect(t.Context())
	noErr(t, err)
	eq(t, &metal3v1alpha1.HardwareDetails{
		SystemVendor: metal3v1alpha1.HardwareSystemVendor{Manufacturer: "Airship", ProductName: "Fake 1U", SerialNumber: "SN-0"},
		Firmware:     metal3v1alpha1.Firmware{BIOS: metal3v1alpha1.BIOS{Version: "1.2.3"}},
		RAMMebibytes: 64 * 1024,
		NIC:          []metal3v1alpha1.NIC{{Name: "eth0", MAC: "52:54:00:aa:bb:01", IP: "10.0.0.11", SpeedGbps: 25}},
		Storage: []metal3v1alpha1.Storage{
			{Name: "sda", Type: metal3v1alpha1.SSD, SizeBytes: 480103981056, Vendor: "Fake", Model: "FakeSSD", SerialNumber: "SSD-0001"},
			{Name: "sdb", Rotational: true, Type: metal3v1alpha1.HDD, SizeBytes: 4000787030016, Vendor: "Fake", Model: "FakeHDD", SerialNumber: "HDD-0001"},
		},
		// The GPU's threads are not counted.
		CPU:      metal3v1alpha1.CPU{Arch: "x86_64", Model: "Fake Xeon", ClockMegahertz: 2400, Count: 16},
		Hostname: "node-0",
	}, hw)
}

func TestSystemResolution(t *testing.T) {
	tests := []struct {
		name    string
		systems []string
		id      string
		wantErr error
		msg     string
	}{
		{name: "the only system when the address names none", systems: []string{"host-0"}},
		{name: "the named system", systems: []string{"host-0", "host-1"}, id: "host-1"},
		{name: "several systems and none named", systems: []string{"host-0", "host-1"}, wantErr: provisioner.ErrNoSystem,
			msg: "the BMC has 2 systems (/redfish/v1/Systems/host-0, /redfish/v1/Systems/host-1): name one in the address's path"},
		{name: "no such system", systems: []string{"host-0"}, id: "host-9", wantErr: provisioner.ErrNoSystem,
			msg: "register: read system /redfish/v1/Systems/host-9: HTTP 404 Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bmc := newFakeBMC(t)
			bmc.systems = tt.systems
			p := open(t, New(Options{}), bmc.target(tt.id))
			err := p.Register(t.Context())
			if tt.wantErr == nil {
				noErr(t, err)
				return
			}
			errIs(t, err, tt.wantErr)
			contains(t, err.Error(), tt.msg)
			contains(t, err.Error(), bmc.srv.URL)
		})
	}
}

func TestPower(t *testing.T) {
	tests := []struct {
		name       string
		power      string
		do         func(context.Context, provisioner.BMC) error
		wantResets []string
		wantPower  string
	}{
		{"on when off", "Off", func(ctx context.Context, p provisioner.BMC) error { return p.PowerOn(ctx) }, []string{"On"}, "On"},
		{"on when on", "On", func(ctx context.Context, p provisioner.BMC) error { return p.PowerOn(ctx) }, nil, "On"},
		{"on when powering on", "PoweringOn", func(ctx context.Context, p provisioner.BMC) error { return p.PowerOn(ctx) }, nil, "PoweringOn"},
		{"graceful off", "On", func(ctx context.Context, p provisioner.BMC) error { return p.PowerOff(ctx, false) }, []string{"GracefulShutdown"}, "Off"},
		{"forced off", "On", func(ctx context.Context, p provisioner.BMC) error { return p.PowerOff(ctx, true) }, []string{"ForceOff"}, "Off"},
		{"off when off", "Off", func(ctx context.Context, p provisioner.BMC) error { return p.PowerOff(ctx, true) }, nil, "Off"},
		{"graceful reboot", "On", func(ctx context.Context, p provisioner.BMC) error { return p.Reboot(ctx, false) }, []string{"GracefulRestart"}, "On"},
		{"forced reboot", "On", func(ctx context.Context, p provisioner.BMC) error { return p.Reboot(ctx, true) }, []string{"ForceRestart"}, "On"},
		{"reboot when off turns on", "Off", func(ctx context.Context, p provisioner.BMC) error { return p.Reboot(ctx, true) }, []string{"On"}, "On"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bmc := newFakeBMC(t)
			bmc.power = tt.power
			p := open(t, New(Options{}), bmc.target("host-0"))
			noErr(t, tt.do(t.Context(), p))
			eq(t, tt.wantResets, bmc.resets)
			eq(t, tt.wantPower, bmc.power)
			state, err := p.PowerState(t.Context())
			noErr(t, err)
			want := provisioner.PowerOff
			if tt.wantPower == "On" || tt.wantPower == "PoweringOn" {
				want = provisioner.PowerOn
			}
			eq(t, want, state)
		})
	}
}

func TestPowerStateUnknown(t *testing.T) {
	bmc := newFakeBMC(t)
	bmc.power = ""
	p := open(t, New(Options{}), bmc.target("host-0"))
	_, err := p.PowerState(t.Context())
	errIs(t, err, provisioner.ErrUnreachable)
	contains(t, err.Error(), `reports power state ""`)
}

func TestBoot(t *testing.T) {
	format := "live-iso"
	media := provisioner.BootMedia{
		Image: metal3v1alpha1.Image{URL: "http://images.example/node.iso", Checksum: "abc123",
			ChecksumType: metal3v1alpha1.SHA256, DiskFormat: &format},
	}
	tests := []struct {
		name       string
		power      string
		image      string // already inserted
		wantResets []string
		wantEjects int
	}{
		{name: "off and empty", power: "Off", wantResets: []string{"On"}},
		{name: "on: restarted", power: "On", wantResets: []string{"ForceRestart"}},
		{name: "other media ejected first", power: "Off", image: "http://images.example/old.iso", wantResets: []string{"On"}, wantEjects: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bmc := newFakeBMC(t)
			bmc.power = tt.power
			bmc.inserted, bmc.image = tt.image != "", tt.image
			p := open(t, New(Options{}), bmc.target("host-0"))
			noErr(t, p.Boot(t.Context(), media))

			eq(t, tt.wantEjects, bmc.ejects)
			eq(t, 1, bmc.inserts)
			eq(t, "http://images.example/node.iso", bmc.image)
			// The URL alone: no checksum, format or Oem section.
			eq(t, map[string]any{"Image": "http://images.example/node.iso", "Inserted": true, "WriteProtected": true}, bmc.insertBody)
			eq(t, "Cd", bmc.bootTarget)
			eq(t, "Once", bmc.bootEnabled)
			eq(t, tt.wantResets, bmc.resets)

			m, err := p.Media(t.Context())
			noErr(t, err)
			eq(t, provisioner.MediaState{Inserted: true, Image: "http://images.example/node.iso"}, m)
		})
	}
}

func TestBootNeedsAnImage(t *testing.T) {
	bmc := newFakeBMC(t)
	p := open(t, New(Options{}), bmc.target("host-0"))
	err := p.Boot(t.Context(), provisioner.BootMedia{})
	errIs(t, err, provisioner.ErrRefused)
	eq(t, 0, bmc.inserts)
}

func TestEjectMedia(t *testing.T) {
	tests := []struct {
		name       string
		image      string
		wantEjects int
	}{
		{name: "inserted", image: "http://images.example/node.iso", wantEjects: 1},
		{name: "nothing inserted is fine", wantEjects: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bmc := newFakeBMC(t)
			bmc.inserted, bmc.image = tt.image != "", tt.image
			p := open(t, New(Options{}), bmc.target("host-0"))
			noErr(t, p.EjectMedia(t.Context()))
			eq(t, tt.wantEjects, bmc.ejects)
			m, err := p.Media(t.Context())
			noErr(t, err)
			eq(t, provisioner.MediaState{}, m)
		})
	}
}

func TestManagerFallsBackToTheOnlyOne(t *testing.T) {
	bmc := newFakeBMC(t)
	bmc.noManagedBy = true
	p := open(t, New(Options{}), bmc.target("host-0"))
	m, err := p.Media(t.Context())
	noErr(t, err)
	eq(t, provisioner.MediaState{}, m)
	eq(t, 1, bmc.count("GET /redfish/v1/Managers"))
}

// The slot's path is remembered per system: a second Media reads the slot
// and nothing else.
func TestSlotPathRemembered(t *testing.T) {
	bmc := newFakeBMC(t)
	f := New(Options{})
	_, err := open(t, f, bmc.target("host-0")).Media(t.Context())
	noErr(t, err)
	_, err = open(t, f, bmc.target("host-0")).Media(t.Context())
	noErr(t, err)
	eq(t, 1, bmc.count("GET /redfish/v1/Systems/host-0"))
	eq(t, 1, bmc.count("GET /redfish/v1/Managers/bmc"))
	eq(t, 2, bmc.count("GET /redfish/v1/Managers/bmc/VirtualMedia/Cd"))
}

// Hosts reconciled over and over through one factory share one client per
// target: the service root is read once, and connections are reused.
func TestClientReuse(t *testing.T) {
	bmc := newFakeBMC(t)
	f := New(Options{MaxConnsPerHost: 4})
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for range 200 {
		wg.Go(func() {
			p, err := f.Open(t.Context(), bmc.target("host-0"))
			if err != nil {
				errs <- err
				return
			}
			_, err = p.PowerState(t.Context())
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		noErr(t, err)
	}
	eq(t, 1, bmc.count("GET /redfish/v1/"), "the service root is read once per target")
	eq(t, 200, bmc.count("GET /redfish/v1/Systems/host-0"))
	bmc.mu.Lock()
	conns := bmc.conns
	bmc.mu.Unlock()
	if conns > 4 {
		t.Errorf("%d connections: want at most 4, reused", conns)
	}
	eq(t, 1, f.(*factory).size())

	// Another password is another target.
	other := bmc.target("host-0")
	other.Credentials.Password = "another"
	_, err := f.Open(t.Context(), other)
	noErr(t, err)
	eq(t, 2, f.(*factory).size())
	eq(t, 2, bmc.count("GET /redfish/v1/"))
}

func TestWrongCredentials(t *testing.T) {
	bmc := newFakeBMC(t)
	f := New(Options{})
	wrong := bmc.target("host-0")
	wrong.Credentials.Password = "not-" + bmc.pass
	p := open(t, f, wrong)
	err := p.Register(t.Context())
	errIs(t, err, provisioner.ErrCredentials)
	eq(t, "BMC "+bmc.srv.URL+": register: read system /redfish/v1/Systems/host-0: HTTP 401 Unauthorized: the BMC refused the credentials", err.Error())
	notContains(t, err.Error(), bmc.pass)
	eq(t, 0, f.(*factory).size(), "a client whose credentials were refused is dropped")

	// Fixed credentials: a new client, which works.
	noErr(t, open(t, f, bmc.target("host-0")).Register(t.Context()))
	eq(t, 1, f.(*factory).size())
}

func TestEviction(t *testing.T) {
	bmc := newFakeBMC(t)
	f := New(Options{MaxClients: 2})
	for _, pw := range []string{"a", "b", "c"} {
		target := bmc.target("host-0")
		target.Credentials.Password = pw
		open(t, f, target)
	}
	eq(t, 2, f.(*factory).size())
	// The most recent ones are kept: "c" needs no new connect.
	target := bmc.target("host-0")
	target.Credentials.Password = "c"
	before := bmc.count("GET /redfish/v1/")
	open(t, f, target)
	eq(t, before, bmc.count("GET /redfish/v1/"))
}

// Every failure wraps the sentinel its status says, names the endpoint and
// the operation, and quotes nothing of the answer's body (which here holds
// the password and the user-data).
func TestErrorsFromStatus(t *testing.T) {
	const system = "/redfish/v1/Systems/host-0"
	const cd = "/redfish/v1/Managers/bmc/VirtualMedia/Cd"
	tests := []struct {
		name   string
		fail   string
		status int
		do     func(context.Context, provisioner.BMC) error
		want   error
		msg    string
	}{
		{"system 401", "GET " + system, 401, register, provisioner.ErrCredentials, "register: read system " + system + ": HTTP 401 Unauthorized"},
		{"system 403", "GET " + system, 403, register, provisioner.ErrCredentials, "HTTP 403 Forbidden"},
		{"system 404", "GET " + system, 404, register, provisioner.ErrNoSystem, "HTTP 404 Not Found"},
		{"system 500", "GET " + system, 500, register, provisioner.ErrUnreachable, "HTTP 500 Internal Server Error"},
		{"system 503", "GET " + system, 503, register, provisioner.ErrUnreachable, "HTTP 503"},
		{"root 502", "GET /redfish/v1/", 502, register, provisioner.ErrUnreachable, "register: read the service root: HTTP 502"},
		{"reset 400", "POST " + system + "/Actions/ComputerSystem.Reset", 400, powerOn, provisioner.ErrRefused, "power on: reset On: HTTP 400 Bad Request"},
		{"reset 409", "POST " + system + "/Actions/ComputerSystem.Reset", 409, powerOn, provisioner.ErrRefused, "HTTP 409 Conflict"},
		{"reset 500", "POST " + system + "/Actions/ComputerSystem.Reset", 500, powerOn, provisioner.ErrUnreachable, "HTTP 500"},
		{"manager 404 is not the system", "GET /redfish/v1/Managers/bmc", 404, media, provisioner.ErrRefused, "media: read manager /redfish/v1/Managers/bmc: HTTP 404"},
		{"slot list 403", "GET /redfish/v1/Managers/bmc/VirtualMedia", 403, media, provisioner.ErrCredentials, "HTTP 403"},
		{"insert 400", "POST " + cd + "/Actions/VirtualMedia.InsertMedia", 400, boot, provisioner.ErrRefused, "boot: insert media into " + cd + ": HTTP 400"},
		{"insert 401", "POST " + cd + "/Actions/VirtualMedia.InsertMedia", 401, boot, provisioner.ErrCredentials, "HTTP 401"},
		{"override 405", "PATCH " + system, 405, boot, provisioner.ErrRefused, "boot: set the boot override to Cd once: HTTP 405"},
		{"drives 500", "GET " + system + "/Storage/1/Drives/1", 500, inspect, provisioner.ErrUnreachable, "inspect: read the drives of " + system + "/Storage/1: HTTP 500"},
		{"processor 500", "GET " + system + "/Processors/CPU0", 500, inspect, provisioner.ErrUnreachable, "inspect: read the processors: HTTP 500"},
		{"Ethernet interfaces 401", "GET " + system + "/EthernetInterfaces", 401, inspect, provisioner.ErrCredentials, "inspect: read the Ethernet interfaces: HTTP 401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bmc := newFakeBMC(t)
			f := New(Options{})
			p := open(t, f, bmc.target("host-0"))
			bmc.setFail(tt.fail, tt.status)
			err := tt.do(t.Context(), p)
			errIs(t, err, tt.want)
			for _, other := range []error{provisioner.ErrCredentials, provisioner.ErrUnreachable, provisioner.ErrNoSystem, provisioner.ErrRefused} {
				if !errors.Is(tt.want, other) {
					notErrIs(t, err, other)
				}
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			eq(t, tt.status, e.Status)
			eq(t, bmc.srv.URL, e.Endpoint)
			if !strings.HasPrefix(err.Error(), "BMC "+bmc.srv.URL+": ") {
				t.Errorf("%q does not start with the endpoint", err)
			}
			contains(t, err.Error(), tt.msg)
			notContains(t, err.Error(), bmc.pass)
		})
	}
}

func register(ctx context.Context, p provisioner.BMC) error { return p.Register(ctx) }
func powerOn(ctx context.Context, p provisioner.BMC) error  { return p.PowerOn(ctx) }
func media(ctx context.Context, p provisioner.BMC) error {
	_, err := p.Media(ctx)
	return err
}

func inspect(ctx context.Context, p provisioner.BMC) error {
	_, err := p.Inspect(ctx)
	return err
}

func boot(ctx context.Context, p provisioner.BMC) error {
	return p.Boot(ctx, provisioner.BootMedia{Image: metal3v1alpha1.Image{URL: "http://images.example/a.iso"}})
}

func TestErrorsFromTransport(t *testing.T) {
	t.Run("nothing listens", func(t *testing.T) {
		bmc := newFakeBMC(t)
		target := bmc.target("host-0")
		bmc.srv.Close()
		_, err := New(Options{}).Open(t.Context(), target)
		errIs(t, err, provisioner.ErrUnreachable)
		eq(t, "BMC "+bmc.srv.URL+": connect: cannot connect: connection refused: the BMC is unreachable", err.Error())
	})
	t.Run("the BMC goes away after connecting", func(t *testing.T) {
		bmc := newFakeBMC(t)
		p := open(t, New(Options{}), bmc.target("host-0"))
		bmc.srv.Close()
		err := p.PowerOn(t.Context())
		errIs(t, err, provisioner.ErrUnreachable)
		contains(t, err.Error(), "power on: read system /redfish/v1/Systems/host-0: ")
	})
	t.Run("slow answer beyond the request timeout", func(t *testing.T) {
		bmc := newFakeBMC(t)
		p := open(t, New(Options{HTTPTimeout: 200 * time.Millisecond}), bmc.target("host-0"))
		defer bmc.holdRequests()()
		err := p.Register(t.Context())
		errIs(t, err, provisioner.ErrUnreachable)
		contains(t, err.Error(), "timed out")
	})
	t.Run("caller's deadline", func(t *testing.T) {
		bmc := newFakeBMC(t)
		p := open(t, New(Options{}), bmc.target("host-0"))
		defer bmc.holdRequests()()
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		err := p.Register(ctx)
		errIs(t, err, provisioner.ErrUnreachable)
		errIs(t, err, context.DeadlineExceeded)
	})
	t.Run("caller cancels", func(t *testing.T) {
		bmc := newFakeBMC(t)
		p := open(t, New(Options{}), bmc.target("host-0"))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := p.Register(ctx)
		errIs(t, err, context.Canceled)
		notErrIs(t, err, provisioner.ErrUnreachable)
	})
	t.Run("not an http endpoint", func(t *testing.T) {
		bmc := newFakeBMC(t)
		target := bmc.target("host-0")
		target.Access.Endpoint = "ftp://bmc"
		_, err := New(Options{}).Open(t.Context(), target)
		errIs(t, err, provisioner.ErrRefused)
	})
}

func TestTLSVerification(t *testing.T) {
	tests := []struct {
		name     string
		insecure bool
		trust    bool
		wantErr  error
	}{
		{name: "untrusted certificate", wantErr: provisioner.ErrUnreachable},
		{name: "trusted certificate", trust: true},
		{name: "verification disabled", insecure: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bmc := newTLSFakeBMC(t)
			opts := Options{}
			if tt.trust {
				opts.RootCAs = bmc.pool()
			}
			target := bmc.target("host-0")
			target.InsecureSkipVerify = tt.insecure
			p, err := New(opts).Open(t.Context(), target)
			if tt.wantErr != nil {
				errIs(t, err, tt.wantErr)
				contains(t, err.Error(), "TLS certificate is not trusted")
				return
			}
			noErr(t, err)
			noErr(t, p.Register(t.Context()))
		})
	}
}

func TestArchOf(t *testing.T) {
	tests := []struct {
		set  schemas.InstructionSet
		arch schemas.ProcessorArchitecture
		want string
	}{
		{"x86-64", "x86", "x86_64"},
		{"ARM-A64", "ARM", "aarch64"},
		{"", "ARM", "aarch64"},
		{"PowerISA", "Power", "ppc64le"},
		{"", "MIPS", "mips"},
		{"OEM", "OEM", "OEM"},
		{"", "", ""},
	}
	for _, tt := range tests {
		eq(t, tt.want, archOf(tt.set, tt.arch), string(tt.set), string(tt.arch))
	}
}

func TestPickCD(t *testing.T) {
	floppy := &schemas.VirtualMedia{MediaTypes: []schemas.VirtualMediaType{"Floppy", "USBStick"}}
	dvd := &schemas.VirtualMedia{MediaTypes: []schemas.VirtualMediaType{"DVD"}}
	old := &schemas.VirtualMedia{MediaType: "CD"}
	tests := []struct {
		name  string
		media []*schemas.VirtualMedia
		want  *schemas.VirtualMedia
	}{
		{"none", nil, nil},
		{"floppy only", []*schemas.VirtualMedia{floppy}, nil},
		{"DVD after floppy", []*schemas.VirtualMedia{floppy, dvd}, dvd},
		{"MediaType only", []*schemas.VirtualMedia{floppy, old}, old},
	}
	for _, tt := range tests {
		if got := pickCD(tt.media); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
