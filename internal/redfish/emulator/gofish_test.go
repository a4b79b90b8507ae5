package emulator

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

// TestGofish drives every operation the BareMetalHost controller uses
// through gofish, logged in with a session and with basic auth.
func TestGofish(t *testing.T) {
	for _, basic := range []bool{false, true} {
		t.Run(fmt.Sprintf("basicAuth=%v", basic), func(t *testing.T) {
			hosts := Generate(3, 2)
			s, base := start(t, Config{Hosts: hosts}, Options{})
			c := connect(t, base, testUser, testPassword, basic)

			systems, err := c.Service.Systems()
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, sys := range systems {
				ids = append(ids, sys.ID)
			}
			if want := []string{"host-0000", "host-0001", "host-0002"}; !slices.Equal(ids, want) {
				t.Fatalf("systems %v, want %v", ids, want)
			}
			h := hosts[1]
			sys, err := schemas.GetComputerSystem(c, systemsPath+"/"+h.Name)
			if err != nil {
				t.Fatal(err)
			}
			t.Run("inventory", func(t *testing.T) { checkInventory(t, c, sys, h) })
			t.Run("reset", func(t *testing.T) { checkResets(t, s, c, sys, h.Name) })
			t.Run("boot", func(t *testing.T) { checkBoot(t, s, c, sys, h.Name) })
			t.Run("virtual media", func(t *testing.T) { checkVirtualMedia(t, s, c, h.Name) })
		})
	}
}

func checkInventory(t *testing.T, c *gofish.APIClient, sys *schemas.ComputerSystem, h Host) {
	if sys.PowerState != schemas.OffPowerState {
		t.Errorf("PowerState %q, want Off", sys.PowerState)
	}
	if sys.UUID != nameUUID(h.Name) || sys.Manufacturer != "Airship" || sys.Model == "" || sys.SerialNumber == "" || sys.BiosVersion != biosVersion {
		t.Errorf("identity: UUID %q Manufacturer %q Model %q SerialNumber %q BiosVersion %q", sys.UUID, sys.Manufacturer, sys.Model, sys.SerialNumber, sys.BiosVersion)
	}
	if got := gofish.Deref(sys.ProcessorSummary.LogicalProcessorCount); int(got) != h.CPUs {
		t.Errorf("ProcessorSummary.LogicalProcessorCount %d, want %d", got, h.CPUs)
	}
	if sys.ProcessorSummary.Model != h.CPUModel {
		t.Errorf("ProcessorSummary.Model %q, want %q", sys.ProcessorSummary.Model, h.CPUModel)
	}
	if got := gofish.Deref(sys.MemorySummary.TotalSystemMemoryGiB); got != float64(h.MemoryMiB)/1024 {
		t.Errorf("MemorySummary.TotalSystemMemoryGiB %v, want %v", got, float64(h.MemoryMiB)/1024)
	}
	procs, err := sys.Processors()
	if err != nil || len(procs) != 1 || gofish.Deref(procs[0].TotalThreads) != h.CPUs || procs[0].Model != h.CPUModel {
		t.Errorf("Processors: %v, %+v", err, procs)
	}
	mem, err := sys.Memory()
	if err != nil || len(mem) != 1 || gofish.Deref(mem[0].CapacityMiB) != h.MemoryMiB {
		t.Errorf("Memory: %v, %+v", err, mem)
	}
	nics, err := sys.EthernetInterfaces()
	if err != nil || len(nics) != len(h.NICs) {
		t.Fatalf("EthernetInterfaces: %v, %d of %d", err, len(nics), len(h.NICs))
	}
	for i, n := range nics {
		if n.ID != h.NICs[i].Name || n.MACAddress != h.NICs[i].MAC || gofish.Deref(n.SpeedMbps) != h.NICs[i].SpeedGbps*1000 {
			t.Errorf("NIC %d: %s %s %d, want %+v", i, n.ID, n.MACAddress, gofish.Deref(n.SpeedMbps), h.NICs[i])
		}
	}
	if len(nics[0].IPv4Addresses) != 1 || nics[0].IPv4Addresses[0].Address+"/16" != h.NICs[0].IP || nics[0].IPv4Addresses[0].SubnetMask != "255.255.0.0" {
		t.Errorf("NIC 0 addresses %+v, want %s", nics[0].IPv4Addresses, h.NICs[0].IP)
	}
	storage, err := sys.Storage()
	if err != nil || len(storage) != 1 {
		t.Fatalf("Storage: %v, %d", err, len(storage))
	}
	drives, err := storage[0].Drives()
	if err != nil || len(drives) != len(h.Disks) {
		t.Fatalf("Drives: %v, %d", err, len(drives))
	}
	d := drives[0]
	if gofish.Deref(d.CapacityBytes) != h.Disks[0].SizeGiB<<30 || d.SerialNumber != h.Disks[0].Serial || d.Model != h.Disks[0].Model || d.MediaType != schemas.SSDMediaType {
		t.Errorf("drive %+v, want %+v", d, h.Disks[0])
	}
	simple, err := sys.SimpleStorage()
	if err != nil || len(simple) != 1 || len(simple[0].Devices) != len(h.Disks) || gofish.Deref(simple[0].Devices[0].CapacityBytes) != uint(h.Disks[0].SizeGiB)<<30 {
		t.Errorf("SimpleStorage: %v, %+v", err, simple)
	}
	bios, err := sys.Bios()
	if err != nil || bios.Attributes["BootMode"] != "Uefi" {
		t.Errorf("Bios: %v, %+v", err, bios)
	}
	managers, err := sys.ManagedBy()
	if err != nil || len(managers) != 1 || managers[0].ID != h.Name {
		t.Errorf("ManagedBy: %v, %+v", err, managers)
	}
}

func checkResets(t *testing.T, s *Server, c *gofish.APIClient, sys *schemas.ComputerSystem, host string) {
	steps := []struct {
		reset schemas.ResetType
		on    bool
	}{
		{schemas.OnResetType, true},
		{schemas.ForceRestartResetType, true},
		{schemas.GracefulShutdownResetType, false},
		{schemas.GracefulRestartResetType, true},
		{schemas.ForceOffResetType, false},
		{schemas.ForceOffResetType, false},
		{schemas.OnResetType, true},
		{schemas.OnResetType, true},
	}
	before := mustState(t, s, host).Resets
	for i, step := range steps {
		if _, err := sys.Reset(step.reset); err != nil {
			t.Fatalf("Reset %s: %v", step.reset, err)
		}
		st := mustState(t, s, host)
		if st.PowerOn != step.on || st.Resets != before+i+1 {
			t.Errorf("after %s: power on %v resets %d, want %v and %d", step.reset, st.PowerOn, st.Resets, step.on, before+i+1)
		}
		got, err := schemas.GetComputerSystem(c, sys.ODataID)
		if err != nil {
			t.Fatal(err)
		}
		if want := powerState(step.on); string(got.PowerState) != want {
			t.Errorf("after %s: PowerState %q, want %q", step.reset, got.PowerState, want)
		}
	}
	types, err := sys.GetSupportedResetTypes()
	if err != nil || len(types) != len(resetTypes) {
		t.Errorf("supported reset types %v, %v", types, err)
	}
	for _, refused := range []string{"PushPowerButton", "Nmi", "ForceOn", ""} {
		_, err := c.Post(sys.ODataID+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": refused})
		if statusOf(err) != http.StatusBadRequest {
			t.Errorf("Reset %q: %v, want 400", refused, err)
		}
	}
	if st := mustState(t, s, host); st.Resets != before+len(steps) {
		t.Errorf("refused resets counted: %d", st.Resets)
	}
}

func checkBoot(t *testing.T, s *Server, c *gofish.APIClient, sys *schemas.ComputerSystem, host string) {
	for _, b := range []schemas.Boot{
		{BootSourceOverrideTarget: schemas.PxeBootSource, BootSourceOverrideEnabled: schemas.OnceBootSourceOverrideEnabled},
		{BootSourceOverrideTarget: schemas.CdBootSource, BootSourceOverrideEnabled: schemas.ContinuousBootSourceOverrideEnabled},
		{BootSourceOverrideTarget: schemas.HddBootSource, BootSourceOverrideEnabled: schemas.OnceBootSourceOverrideEnabled},
		{BootSourceOverrideTarget: schemas.NoneBootSource, BootSourceOverrideEnabled: schemas.DisabledBootSourceOverrideEnabled},
	} {
		if err := sys.SetBoot(&b); err != nil {
			t.Fatalf("SetBoot %+v: %v", b, err)
		}
		st := mustState(t, s, host)
		if st.BootOverride.Target != string(b.BootSourceOverrideTarget) || st.BootOverride.Enabled != string(b.BootSourceOverrideEnabled) {
			t.Errorf("SetBoot %s %s: state %+v", b.BootSourceOverrideTarget, b.BootSourceOverrideEnabled, st.BootOverride)
		}
		got, err := schemas.GetComputerSystem(c, sys.ODataID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Boot.BootSourceOverrideTarget != b.BootSourceOverrideTarget || got.Boot.BootSourceOverrideEnabled != b.BootSourceOverrideEnabled {
			t.Errorf("read back %s %s", got.Boot.BootSourceOverrideTarget, got.Boot.BootSourceOverrideEnabled)
		}
		if !slices.Contains(got.Boot.AllowableBootSourceOverrideTargetValues, b.BootSourceOverrideTarget) {
			t.Errorf("allowable targets %v lack %s", got.Boot.AllowableBootSourceOverrideTargetValues, b.BootSourceOverrideTarget)
		}
	}
	// A Once override is used by the next power-on, then Disabled.
	if err := sys.SetBoot(&schemas.Boot{BootSourceOverrideTarget: schemas.PxeBootSource, BootSourceOverrideEnabled: schemas.OnceBootSourceOverrideEnabled}); err != nil {
		t.Fatal(err)
	}
	if _, err := sys.Reset(schemas.ForceRestartResetType); err != nil {
		t.Fatal(err)
	}
	if st := mustState(t, s, host); st.BootOverride.Enabled != "Disabled" || st.BootOverride.Target != "Pxe" {
		t.Errorf("after a boot, a Once override is %+v, want Pxe Disabled", st.BootOverride)
	}
	if err := sys.SetBoot(&schemas.Boot{BootSourceOverrideTarget: "Floppy"}); statusOf(err) != http.StatusBadRequest {
		t.Errorf("SetBoot Floppy: %v, want 400", err)
	}
}

func checkVirtualMedia(t *testing.T, s *Server, c *gofish.APIClient, host string) {
	mgr, err := schemas.GetManager(c, managersPath+"/"+host)
	if err != nil {
		t.Fatal(err)
	}
	media, err := mgr.VirtualMedia()
	if err != nil || len(media) != 1 || media[0].ID != "Cd" {
		t.Fatalf("VirtualMedia: %v, %+v", err, media)
	}
	vm := media[0]
	if !vm.SupportsMediaInsert || !vm.SupportsMediaEject || gofish.Deref(vm.Inserted) {
		t.Fatalf("virtual CD: insert %v eject %v inserted %v", vm.SupportsMediaInsert, vm.SupportsMediaEject, gofish.Deref(vm.Inserted))
	}
	const image = "http://images.example/boot.iso"
	params := &schemas.VirtualMediaInsertMediaParameters{
		Image:          image,
		Inserted:       gofish.ToRef(true),
		WriteProtected: gofish.ToRef(true),
		TransferMethod: gofish.ToRef(schemas.StreamTransferMethod),
	}
	if _, err := vm.InsertMedia(params); err != nil {
		t.Fatalf("InsertMedia: %v", err)
	}
	if st := mustState(t, s, host); !st.Media.Inserted || st.Media.Image != image || !st.Media.WriteProtected {
		t.Errorf("after InsertMedia: %+v", st.Media)
	}
	got, err := schemas.GetVirtualMedia(c, vm.ODataID)
	if err != nil || !gofish.Deref(got.Inserted) || got.Image != image || got.ImageName != "boot.iso" || got.ConnectedVia != schemas.URIConnectedVia {
		t.Errorf("read back: %v, %+v", err, got)
	}
	if _, err := vm.InsertMedia(params); statusOf(err) != http.StatusConflict {
		t.Errorf("InsertMedia over inserted media: %v, want 409", err)
	}
	if _, err := vm.EjectMedia(); err != nil {
		t.Fatalf("EjectMedia: %v", err)
	}
	if st := mustState(t, s, host); st.Media.Inserted || st.Media.Image != "" {
		t.Errorf("after EjectMedia: %+v", st.Media)
	}
	if _, err := vm.EjectMedia(); err != nil {
		t.Errorf("EjectMedia of an empty drive: %v", err)
	}

	// An Oem section, the one the direct provisioner once sent included,
	// is accepted and ignored, as a real BMC ignores vendor sections it
	// does not know.
	body := map[string]any{
		"Image":    image,
		"Inserted": true,
		"Oem": map[string]any{"Airship": map[string]any{
			"ImageFormat": "qcow2",
			"UserData":    base64.StdEncoding.EncodeToString([]byte("#cloud-config\nhostname: x\n")),
			"MetaData":    base64.StdEncoding.EncodeToString([]byte("local-hostname: x\n")),
		}, "Vendor": []any{1, "two"}},
	}
	resp, err := c.Post(vm.ODataID+"/Actions/VirtualMedia.InsertMedia", body)
	if err != nil {
		t.Fatalf("InsertMedia with Oem: %v", err)
	}
	_ = resp.Body.Close() // only read: closing cannot lose data
	if st, want := mustState(t, s, host), (Media{Inserted: true, Image: image, WriteProtected: true, TransferMethod: "Stream"}); st.Media != want {
		t.Errorf("InsertMedia with Oem recorded %+v, want %+v", st.Media, want)
	}
	if _, err := vm.EjectMedia(); err != nil {
		t.Fatal(err)
	}
}
