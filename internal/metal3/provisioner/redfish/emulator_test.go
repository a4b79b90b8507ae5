package redfish

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

const (
	emuUser     = "admin"
	emuPassword = "emulated-Pa55word"
)

// startEmulator serves hosts over real HTTP on loopback.
func startEmulator(t *testing.T, hosts []emulator.Host) *emulator.Server {
	t.Helper()
	srv, err := emulator.New(emulator.Config{Username: emuUser, Password: emuPassword, Hosts: hosts}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, err := srv.Start(ctx, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	return srv
}

// emuTarget is a host's Target as the controller builds it: its
// spec.bmc.address parsed, its credentials.
func emuTarget(t *testing.T, srv *emulator.Server, host string) provisioner.Target {
	t.Helper()
	access, err := bmc.Parse(srv.Address(host))
	if err != nil {
		t.Fatal(err)
	}
	user, password, ok := srv.Credentials(host)
	if !ok {
		t.Fatalf("no host %s", host)
	}
	return provisioner.Target{Access: access, Credentials: provisioner.Credentials{Username: user, Password: password}}
}

func emuState(t *testing.T, srv *emulator.Server, host string) emulator.HostState {
	t.Helper()
	st, ok := srv.State(host)
	if !ok {
		t.Fatalf("no host %s", host)
	}
	return st
}

// emuWaitBooted polls a host's state until it has booted.
func emuWaitBooted(t *testing.T, srv *emulator.Server, host string) emulator.HostState {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := emuState(t, srv, host)
		if st.Booted || time.Now().After(deadline) {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// want is what Inspect should read of an emulated host, but for the
// serial number and BIOS version, which the emulator derives itself.
func want(h emulator.Host) *metal3v1alpha1.HardwareDetails {
	d := &metal3v1alpha1.HardwareDetails{
		SystemVendor: metal3v1alpha1.HardwareSystemVendor{Manufacturer: "Airship", ProductName: "Emulated Server"},
		RAMMebibytes: h.MemoryMiB,
		Hostname:     h.Name,
		CPU:          metal3v1alpha1.CPU{Arch: "x86_64", Model: h.CPUModel, ClockMegahertz: 2400, Count: h.CPUs},
	}
	for _, n := range h.NICs {
		nic := metal3v1alpha1.NIC{Name: n.Name, MAC: n.MAC, SpeedGbps: n.SpeedGbps}
		if n.IP != "" {
			if p, err := netip.ParsePrefix(n.IP); err == nil {
				nic.IP = p.Addr().String()
			} else {
				nic.IP = n.IP
			}
		}
		d.NIC = append(d.NIC, nic)
	}
	for _, disk := range h.Disks {
		s := metal3v1alpha1.Storage{Name: disk.Name, SizeBytes: metal3v1alpha1.Capacity(disk.SizeGiB) * metal3v1alpha1.GibiByte,
			Rotational: disk.Rotational, Type: metal3v1alpha1.SSD, Vendor: "Airship", Model: disk.Model, SerialNumber: disk.Serial}
		if disk.Rotational {
			s.Type = metal3v1alpha1.HDD
		}
		d.Storage = append(d.Storage, s)
	}
	return d
}

func TestEmulatorInspect(t *testing.T) {
	hosts := append(emulator.Generate(2, 1), emulator.Host{
		Name: "custom", CPUs: 32, CPUModel: "Big CPU", MemoryMiB: 262144,
		NICs: []emulator.NIC{
			{Name: "eno1", MAC: "52:54:00:FF:00:01", IP: "fd00::5/64", SpeedGbps: 25},
			{Name: "eno2", MAC: "52:54:00:ff:00:02", IP: "192.168.7.9"},
		},
		Disks: []emulator.Disk{{Name: "sda", SizeGiB: 480}, {Name: "sdb", SizeGiB: 4000, Rotational: true}},
	})
	srv := startEmulator(t, hosts)
	f := New(Options{})
	for _, h := range srv.Hosts() {
		t.Run(h.Name, func(t *testing.T) {
			p := open(t, f, emuTarget(t, srv, h.Name))
			noErr(t, p.Register(t.Context()))
			got, err := p.Inspect(t.Context())
			noErr(t, err)
			if got.SystemVendor.SerialNumber == "" || got.Firmware.BIOS.Version == "" {
				t.Errorf("serial number %q, BIOS version %q: want both", got.SystemVendor.SerialNumber, got.Firmware.BIOS.Version)
			}
			got.SystemVendor.SerialNumber, got.Firmware.BIOS.Version = "", ""
			eq(t, want(h), got, "inventory of", h.Name)
		})
	}
}

func TestEmulatorPower(t *testing.T) {
	srv := startEmulator(t, emulator.Generate(1, 1))
	p := open(t, New(Options{}), emuTarget(t, srv, "host-0000"))
	steps := []struct {
		name       string
		do         func(context.Context) error
		wantOn     bool
		wantResets int
	}{
		{"power on", p.PowerOn, true, 1},
		{"power on again: nothing sent", p.PowerOn, true, 1},
		{"graceful reboot", func(ctx context.Context) error { return p.Reboot(ctx, false) }, true, 2},
		{"forced reboot", func(ctx context.Context) error { return p.Reboot(ctx, true) }, true, 3},
		{"graceful power off", func(ctx context.Context) error { return p.PowerOff(ctx, false) }, false, 4},
		{"power off again: nothing sent", func(ctx context.Context) error { return p.PowerOff(ctx, true) }, false, 4},
		{"reboot when off powers on", func(ctx context.Context) error { return p.Reboot(ctx, true) }, true, 5},
		{"forced power off", func(ctx context.Context) error { return p.PowerOff(ctx, true) }, false, 6},
	}
	for _, s := range steps {
		noErr(t, s.do(t.Context()))
		st := emuState(t, srv, "host-0000")
		if st.PowerOn != s.wantOn || st.Resets != s.wantResets {
			t.Fatalf("%s: emulator on=%v resets=%d, want on=%v resets=%d", s.name, st.PowerOn, st.Resets, s.wantOn, s.wantResets)
		}
		state, err := p.PowerState(t.Context())
		noErr(t, err)
		if wantState := map[bool]provisioner.PowerState{true: provisioner.PowerOn, false: provisioner.PowerOff}[s.wantOn]; state != wantState {
			t.Fatalf("%s: PowerState %s, want %s", s.name, state, wantState)
		}
	}
}

func TestEmulatorBootAndEject(t *testing.T) {
	srv := startEmulator(t, emulator.Generate(2, 1))
	p := open(t, New(Options{}), emuTarget(t, srv, "host-0001"))
	format := "live-iso"
	first := provisioner.BootMedia{
		Image: metal3v1alpha1.Image{URL: "http://images.example/ubuntu.iso", Checksum: "0123abcd",
			ChecksumType: metal3v1alpha1.SHA256, DiskFormat: &format},
	}
	noErr(t, p.Boot(t.Context(), first))
	// The emulator fetches the media (here in vain) before the host boots.
	st := emuWaitBooted(t, srv, "host-0001")
	eq(t, emulator.Media{
		Inserted: true, Image: first.Image.URL, WriteProtected: true, TransferMethod: "Stream",
	}, st.Media, "media after the first boot")
	// The override was set to Cd once; powering on used it up.
	eq(t, emulator.BootOverride{Target: "Cd", Enabled: "Disabled", Mode: "UEFI"}, st.BootOverride)
	if !st.PowerOn || !st.Booted || st.BootedFrom != "Cd" || st.Resets != 1 {
		t.Fatalf("after boot: on=%v booted=%v from %q resets=%d; want on, booted from Cd, 1 reset", st.PowerOn, st.Booted, st.BootedFrom, st.Resets)
	}
	m, err := p.Media(t.Context())
	noErr(t, err)
	eq(t, provisioner.MediaState{Inserted: true, Image: first.Image.URL}, m)

	// Booting other media on a running host ejects the first and restarts.
	second := provisioner.BootMedia{Image: metal3v1alpha1.Image{URL: "http://images.example/other.iso"}}
	noErr(t, p.Boot(t.Context(), second))
	st = emuWaitBooted(t, srv, "host-0001")
	eq(t, emulator.Media{Inserted: true, Image: second.Image.URL, WriteProtected: true, TransferMethod: "Stream"}, st.Media, "media after the second boot")
	if !st.PowerOn || !st.Booted || st.Resets != 2 {
		t.Fatalf("after the second boot: on=%v booted=%v resets=%d; want on, booted, 2 resets", st.PowerOn, st.Booted, st.Resets)
	}

	noErr(t, p.EjectMedia(t.Context()))
	eq(t, emulator.Media{}, emuState(t, srv, "host-0001").Media, "media after eject")
	noErr(t, p.EjectMedia(t.Context())) // nothing inserted is fine
	m, err = p.Media(t.Context())
	noErr(t, err)
	eq(t, provisioner.MediaState{}, m)

	// The other host was not touched.
	other := emuState(t, srv, "host-0000")
	if other.PowerOn || other.Media.Inserted || other.Resets != 0 {
		t.Errorf("host-0000 was touched: %+v", other)
	}
}

func TestEmulatorWrongCredentials(t *testing.T) {
	srv := startEmulator(t, emulator.Generate(1, 1))
	f := New(Options{})
	endpoint := emuTarget(t, srv, "host-0000").Access.Endpoint
	noSecret := func(t *testing.T, err error) {
		t.Helper()
		errIs(t, err, provisioner.ErrCredentials)
		notContains(t, err.Error(), emuPassword)
		contains(t, err.Error(), "BMC "+endpoint+": ")
	}

	wrong := emuTarget(t, srv, "host-0000")
	wrong.Credentials.Password = emuPassword + "-old"
	err := open(t, f, wrong).Register(t.Context())
	noSecret(t, err)
	notContains(t, err.Error(), wrong.Credentials.Password)

	// The BMC refuses even the right credentials for a while: the client
	// is dropped, and the next one works once the BMC accepts them again.
	right := emuTarget(t, srv, "host-0000")
	p := open(t, f, right)
	noErr(t, p.Register(t.Context()))
	srv.SetFault("host-0000", emulator.Fault{WrongCredentials: true})
	err = p.PowerOn(t.Context())
	noSecret(t, err)
	eq(t, 0, f.(*factory).size(), "clients kept after the refusal")
	srv.SetFault("host-0000", emulator.Fault{})
	noErr(t, open(t, f, right).PowerOn(t.Context()))
	eq(t, 1, f.(*factory).size(), "clients kept after recovery")
}

func TestEmulatorFaults(t *testing.T) {
	tests := []struct {
		name   string
		fault  emulator.Fault
		opts   Options
		do     func(context.Context, provisioner.BMC) error
		want   error
		detail string
	}{
		{"unreachable", emulator.Fault{Unreachable: true}, Options{}, register, provisioner.ErrUnreachable, "register: read system /redfish/v1/Systems/host-0000: "},
		{"slow beyond the timeout", emulator.Fault{Delay: time.Minute}, Options{HTTPTimeout: 300 * time.Millisecond}, register, provisioner.ErrUnreachable, "timed out"},
		{"failing resets", emulator.Fault{FailResets: true}, Options{}, powerOn, provisioner.ErrUnreachable, "power on: reset On: HTTP 500 Internal Server Error"},
		{"failing resets while booting", emulator.Fault{FailResets: true}, Options{}, boot, provisioner.ErrUnreachable, "boot: reset On: HTTP 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startEmulator(t, emulator.Generate(1, 1))
			p := open(t, New(tt.opts), emuTarget(t, srv, "host-0000"))
			srv.SetFault("host-0000", tt.fault)
			err := tt.do(t.Context(), p)
			errIs(t, err, tt.want)
			contains(t, err.Error(), tt.detail)
			notContains(t, err.Error(), emuPassword)

			// Recovery: the same provisioner works once the fault is gone.
			srv.SetFault("host-0000", emulator.Fault{})
			noErr(t, tt.do(t.Context(), p))
		})
	}
}

// countingServer serves the emulator's handler, counting requests by
// method and path, requests without credentials beyond the service root,
// and connections.
type countingServer struct {
	*httptest.Server
	mu        sync.Mutex
	requests  map[string]int
	anonymous int
	conns     int
}

func serveCounting(t *testing.T, h http.Handler) *countingServer {
	c := &countingServer{requests: map[string]int{}}
	c.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.requests[r.Method+" "+r.URL.Path]++
		if _, _, ok := r.BasicAuth(); !ok && strings.TrimSuffix(r.URL.Path, "/") != "/redfish/v1" {
			c.anonymous++
		}
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	c.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.mu.Lock()
			c.conns++
			c.mu.Unlock()
		}
	}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

// Many hosts behind one BMC endpoint, reconciled over and over: one client,
// one read of the service root, no sessions, basic auth on every request,
// and a bounded number of connections.
func TestEmulatorClientReuse(t *testing.T) {
	hosts := emulator.Generate(20, 4)
	srv, err := emulator.New(emulator.Config{Username: emuUser, Password: emuPassword, Hosts: hosts}, emulator.Options{})
	noErr(t, err)
	t.Cleanup(srv.Close)
	cs := serveCounting(t, srv.Handler())
	f := New(Options{MaxConnsPerHost: 4})

	const rounds = 5
	var wg sync.WaitGroup
	errs := make(chan error, len(hosts)*rounds)
	for range rounds {
		for _, h := range hosts {
			wg.Go(func() {
				target := provisioner.Target{
					Access:      bmc.Access{Driver: bmc.RedfishVirtualMedia, Endpoint: cs.URL, SystemPath: "/redfish/v1/Systems/" + h.Name},
					Credentials: provisioner.Credentials{Username: emuUser, Password: emuPassword},
				}
				p, err := f.Open(t.Context(), target)
				if err == nil {
					_, err = p.PowerState(t.Context())
				}
				if err == nil {
					_, err = p.Media(t.Context())
				}
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		noErr(t, err)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	eq(t, 1, cs.requests["GET /redfish/v1/"], "service root reads")
	eq(t, 0, cs.requests["POST /redfish/v1/SessionService/Sessions"], "sessions created")
	eq(t, 0, cs.anonymous, "requests without credentials")
	// The system is read by PowerState and by the first Media of each host
	// (which finds the slot); later Media read the remembered slot only.
	for _, h := range hosts {
		sys := "GET /redfish/v1/Systems/" + h.Name
		if n := cs.requests[sys]; n < rounds || n > 2*rounds {
			t.Errorf("%s: %d requests, want %d to %d", sys, n, rounds, 2*rounds)
		}
		mgr := "GET /redfish/v1/Managers/" + h.Name
		if n := cs.requests[mgr]; n < 1 || n > rounds {
			t.Errorf("%s: %d requests, want 1 to %d", mgr, n, rounds)
		}
	}
	if cs.conns > 4 {
		t.Errorf("%d connections, want at most 4", cs.conns)
	}
	eq(t, 1, f.(*factory).size(), "clients kept")
}
