package ironic

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/inventory"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

func ptr[T any](v T) *T { return &v }

func TestImageInfo(t *testing.T) {
	const url = "http://127.0.0.1/img.qcow2"
	cases := []struct {
		name    string
		img     *metal3v1alpha1.Image
		want    map[string]any // the keys set (non-nil)
		wantErr string
	}{
		{"md5", &metal3v1alpha1.Image{URL: url, Checksum: "abc", ChecksumType: metal3v1alpha1.MD5, DiskFormat: ptr("qcow2")},
			map[string]any{"image_source": url, "image_checksum": "abc", "image_disk_format": "qcow2"}, ""},
		{"no type", &metal3v1alpha1.Image{URL: url, Checksum: "abc"}, map[string]any{"image_source": url, "image_checksum": "abc"}, ""},
		{"auto", &metal3v1alpha1.Image{URL: url, Checksum: "abc", ChecksumType: metal3v1alpha1.AutoChecksum}, map[string]any{"image_source": url, "image_checksum": "abc"}, ""},
		{"sha256", &metal3v1alpha1.Image{URL: url, Checksum: "d1", ChecksumType: metal3v1alpha1.SHA256, DiskFormat: ptr("raw")},
			map[string]any{"image_source": url, "image_os_hash_algo": "sha256", "image_os_hash_value": "d1", "image_disk_format": "raw"}, ""},
		{"sha512", &metal3v1alpha1.Image{URL: url, Checksum: "d2", ChecksumType: metal3v1alpha1.SHA512},
			map[string]any{"image_source": url, "image_os_hash_algo": "sha512", "image_os_hash_value": "d2"}, ""},
		{"checksum URL", &metal3v1alpha1.Image{URL: url, Checksum: url + ".sha256sum", ChecksumType: metal3v1alpha1.SHA256},
			map[string]any{"image_source": url, "image_checksum": url + ".sha256sum"}, ""},
		{"live ISO", &metal3v1alpha1.Image{URL: "http://127.0.0.1/live.iso", DiskFormat: ptr("live-iso")}, map[string]any{"boot_iso": "http://127.0.0.1/live.iso"}, ""},
		{"no checksum", &metal3v1alpha1.Image{URL: url}, nil, "spec.image.checksum is required"},
		{"bad type", &metal3v1alpha1.Image{URL: url, Checksum: "x", ChecksumType: "crc32"}, nil, `spec.image.checksumType "crc32"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := imageInfo(c.img)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			set := map[string]any{}
			for k, v := range got {
				if v != nil {
					set[k] = v
				}
			}
			if !reflect.DeepEqual(set, c.want) {
				t.Errorf("got %v, want %v", set, c.want)
			}
			// Every other image key is removed, so a stale one goes.
			if len(got) != 6 {
				t.Errorf("%d keys, want all 6 image keys", len(got))
			}
		})
	}
}

func TestPlanDeploy(t *testing.T) {
	img := &metal3v1alpha1.Image{URL: "http://h/i.qcow2", Checksum: "abc"}
	cases := []struct {
		name       string
		d          provisioner.ProvisionData
		deploy     string
		steps      []nodes.DeployStep
		configured bool
		wantErr    string
	}{
		{"direct", provisioner.ProvisionData{Image: img, UserData: []byte("#cloud-config\n"), MetaData: []byte(`{"local-hostname": "n0"}`),
			NetworkData: []byte("links:\n- id: eth0\n")}, deployDirect, nil, true, ""},
		{"live ISO", provisioner.ProvisionData{Image: &metal3v1alpha1.Image{URL: "http://h/l.iso", DiskFormat: ptr("live-iso")}}, deployRamdisk, nil, false, ""},
		{"custom deploy", provisioner.ProvisionData{CustomDeploy: &metal3v1alpha1.CustomDeploy{Method: "install_coreos"}}, deployCustomAgent,
			[]nodes.DeployStep{{Interface: "deploy", Step: "install_coreos", Args: map[string]any{}, Priority: 80}}, true, ""},
		{"no image", provisioner.ProvisionData{}, "", nil, false, "spec.image.url is empty"},
		{"bad meta-data", provisioner.ProvisionData{Image: img, MetaData: []byte("- a list")}, "", nil, false, "spec.metaData"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := planDeploy(c.d)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.DeployInterface != c.deploy || !reflect.DeepEqual(p.DeploySteps, c.steps) || (p.ConfigDrive != nil) != c.configured {
				t.Errorf("plan %+v", p)
			}
			if !reflect.DeepEqual(p.InstanceInfo["capabilities"], map[string]any{"boot_mode": "uefi"}) {
				t.Errorf("capabilities %v", p.InstanceInfo["capabilities"])
			}
		})
	}
	p, err := planDeploy(cases[0].d)
	if err != nil {
		t.Fatal(err)
	}
	cd := p.ConfigDrive
	if cd.UserData != "#cloud-config\n" || cd.MetaData["local-hostname"] != "n0" || cd.NetworkData["links"] == nil {
		t.Errorf("config drive %+v", cd)
	}
}

func TestRootDeviceHints(t *testing.T) {
	got := rootDeviceHints(&metal3v1alpha1.RootDeviceHints{DeviceName: "sda", MinSizeGigabytes: 20, Rotational: ptr(false), Model: "QEMU"})
	want := map[string]any{"name": "s== /dev/sda", "size": ">= 20", "rotational": false, "model": "<in> QEMU"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if rootDeviceHints(&metal3v1alpha1.RootDeviceHints{}) != nil || rootDeviceHints(nil) != nil {
		t.Error("empty hints are not nil")
	}
}

func TestCapabilities(t *testing.T) {
	cases := []struct {
		existing any
		mode     metal3v1alpha1.BootMode
		want     string
	}{
		{nil, metal3v1alpha1.UEFI, "boot_mode:uefi"},
		{"cpu_vt:true,boot_mode:bios", metal3v1alpha1.UEFISecureBoot, "cpu_vt:true,boot_mode:uefi,secure_boot:true"},
		{"boot_mode:uefi,secure_boot:true", metal3v1alpha1.Legacy, "boot_mode:bios"},
		{"", "", "boot_mode:uefi"},
	}
	for _, c := range cases {
		if got := capabilities(c.existing, c.mode); got != c.want {
			t.Errorf("capabilities(%v, %s) = %q, want %q", c.existing, c.mode, got, c.want)
		}
	}
}

func TestRAIDAndFirmware(t *testing.T) {
	cfg, ok, err := raidConfig(&metal3v1alpha1.RAIDConfig{HardwareRAIDVolumes: []metal3v1alpha1.HardwareRAIDVolume{{Level: "1", Name: "root"}, {Level: "0", SizeGibibytes: ptr(100)}}})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	disks := cfg["logical_disks"].([]map[string]any)
	if len(disks) != 2 || disks[0]["size_gb"] != "MAX" || disks[0]["is_root_volume"] != true || disks[1]["size_gb"] != 100 || disks[0]["volume_name"] != "root" {
		t.Errorf("logical disks %v", disks)
	}
	if _, ok, err := raidConfig(nil); ok || err != nil {
		t.Error("nil RAID asks for something")
	}
	if _, _, err := raidConfig(&metal3v1alpha1.RAIDConfig{SoftwareRAIDVolumes: []metal3v1alpha1.SoftwareRAIDVolume{{Level: "1"}}}); err == nil || !strings.Contains(err.Error(), "spec.raid.softwareRAIDVolumes") {
		t.Errorf("software RAID: %v", err)
	}
	if err := firmwareSettings(&metal3v1alpha1.FirmwareConfig{SriovEnabled: ptr(true)}); err == nil || !strings.Contains(err.Error(), "spec.firmware") { //nolint:staticcheck // the deprecated spec.firmware is refused by name
		t.Errorf("firmware: %v", err)
	}
	if err := firmwareSettings(&metal3v1alpha1.FirmwareConfig{}); err != nil { //nolint:staticcheck // the deprecated spec.firmware is refused by name
		t.Errorf("empty firmware: %v", err)
	}
}

func TestDetails(t *testing.T) {
	props := map[string]any{"cpus": "4", "cpu_arch": "x86_64", "memory_mb": "8192", "local_gb": "99", "capabilities": "boot_mode:uefi", "vendor": "Airship"}
	ps := []ports.Port{{Address: "52:54:00:AA:00:01", PXEEnabled: true}, {Address: "52:54:00:aa:00:02"}}
	hw := details(props, ps, nil)
	want := &metal3v1alpha1.HardwareDetails{
		CPU: metal3v1alpha1.CPU{Arch: "x86_64", Count: 4}, RAMMebibytes: 8192,
		Storage:      []metal3v1alpha1.Storage{{SizeBytes: 100 << 30}},
		SystemVendor: metal3v1alpha1.HardwareSystemVendor{Manufacturer: "Airship"},
		NIC:          []metal3v1alpha1.NIC{{MAC: "52:54:00:aa:00:01", PXE: true}, {MAC: "52:54:00:aa:00:02"}},
	}
	if !reflect.DeepEqual(hw, want) {
		t.Errorf("from properties and ports:\n got %+v\nwant %+v", hw, want)
	}
	inv := &inventory.InventoryType{
		CPU:          inventory.CPUType{Architecture: "x86_64", Count: 8, ModelName: "QEMU Virtual CPU"},
		Memory:       inventory.MemoryType{PhysicalMb: 16384},
		Disks:        []inventory.RootDiskType{{Name: "/dev/sda", Size: 50 << 30, Serial: "S1"}},
		Interfaces:   []inventory.InterfaceType{{Name: "eth0", MACAddress: "52:54:00:aa:00:01", IPV4Address: "10.0.0.5"}},
		SystemVendor: inventory.SystemVendorType{Manufacturer: "Airship", Firmware: inventory.SystemFirmwareType{Version: "1.2"}},
		Boot:         inventory.BootInfoType{PXEInterface: "52:54:00:aa:00:01"},
		Hostname:     "node-0",
	}
	hw = details(props, ps, inv)
	if hw.CPU.Count != 8 || hw.CPU.Model != "QEMU Virtual CPU" || hw.RAMMebibytes != 16384 || len(hw.Storage) != 1 || hw.Storage[0].Name != "/dev/sda" ||
		len(hw.NIC) != 1 || !hw.NIC[0].PXE || hw.NIC[0].IP != "10.0.0.5" || hw.SystemVendor.Manufacturer != "Airship" || hw.Firmware.BIOS.Version != "1.2" || hw.Hostname != "node-0" {
		t.Errorf("from an inventory: %+v", hw)
	}
}

func TestVersionSupported(t *testing.T) {
	cases := []struct {
		body    string
		wantErr string
	}{
		{`{"versions":[{"id":"v1","version":"1.82","min_version":"1.1"}]}`, ""},
		{`{"versions":[{"id":"v1","version":"1.81","min_version":"1.1"}]}`, ""},
		{`{"default_version":{"id":"v1","version":"1.99","min_version":"1.1"}}`, ""},
		{`{"versions":[{"id":"v1","version":"1.80","min_version":"1.1"}]}`, "maximum version is 1.80; this provisioner needs 1.81"},
		{`{"versions":[{"id":"v1","version":"1.99","min_version":"1.90"}]}`, "minimum version is 1.90"},
		{`{"versions":[]}`, "no v1 API version"},
		{`<html>`, "not Ironic's list"},
		{`{"versions":[{"id":"v1","version":"latest"}]}`, "not MAJOR.MINOR"},
	}
	for _, c := range cases {
		err := versionSupported([]byte(c.body))
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: %v, want %q", c.body, err, c.wantErr)
		}
	}
}

func TestOptions(t *testing.T) {
	cases := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"noauth loopback", Options{Endpoint: "http://127.0.0.1:6385"}, ""},
		{"noauth localhost v1", Options{Endpoint: "http://localhost:6385/v1/"}, ""},
		{"noauth ipv6 loopback", Options{Endpoint: "http://[::1]:6385"}, ""},
		{"noauth remote", Options{Endpoint: "http://10.0.0.2:6385"}, "noauth is only allowed on a loopback address"},
		{"basic remote", Options{Endpoint: "https://10.0.0.2:6385", Auth: Auth{Type: HTTPBasic, Username: "u", Password: "p"}}, ""},
		{"basic without password", Options{Endpoint: "https://10.0.0.2:6385", Auth: Auth{Type: HTTPBasic, Username: "u"}}, "needs a username and a password"},
		{"user info", Options{Endpoint: "http://u:pw@127.0.0.1:6385"}, "user information"},
		{"no scheme", Options{Endpoint: "127.0.0.1:6385"}, "not an http(s) URL"},
		{"unknown auth", Options{Endpoint: "http://127.0.0.1", Auth: Auth{Type: "keystone"}}, `"keystone" is not supported`},
		{"missing CA", Options{Endpoint: "https://127.0.0.1", CAFile: "/nonexistent/ca.pem"}, "reading CA bundle"},
		{"download source", Options{Endpoint: "http://127.0.0.1", ImageDownloadSource: "swift"}, `image download source "swift"`},
		{"kernel without ramdisk", Options{Endpoint: "http://127.0.0.1", DeployKernel: "http://i/k"}, "go together"},
		{"kernel and ramdisk", Options{Endpoint: "http://127.0.0.1", DeployKernel: "http://i/k", DeployRamdisk: "http://i/r"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.o)
			if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("%v, want %q", err, c.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "pw@") {
				t.Errorf("error quotes the password: %v", err)
			}
		})
	}
	f, err := newFactory(Options{Endpoint: "http://127.0.0.1:6385/v1"})
	if err != nil || f.client.Endpoint != "http://127.0.0.1:6385/v1/" || f.opts.PollInterval != DefaultPollInterval {
		t.Errorf("endpoint %q, poll %v, %v", f.client.Endpoint, f.opts.PollInterval, err)
	}
}

func TestReadBasicAuthFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, err := ReadBasicAuthFile(write("ok", "username: ironic\npassword: pa55word\n", 0o600))
	if err != nil || a != (Auth{Type: HTTPBasic, Username: "ironic", Password: "pa55word"}) {
		t.Errorf("0600 file: %+v %v", a, err)
	}
	// A Secret volume with the pod's fsGroup: group-readable, read-only.
	for _, mode := range []os.FileMode{0o640, 0o440, 0o400} {
		if _, err := ReadBasicAuthFile(write(fmt.Sprintf("secret-%o", mode), "username: ironic\npassword: pa55word\n", mode)); err != nil {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
	for name, c := range map[string]struct {
		content string
		mode    os.FileMode
		wantErr string
	}{
		"readable":       {"username: ironic\npassword: pa55word\n", 0o644, "mode 0644"},
		"group-writable": {"username: ironic\npassword: pa55word\n", 0o660, "mode 0660"},
		"others read":    {"username: ironic\npassword: pa55word\n", 0o604, "mode 0604"},
		"no pass":        {"username: ironic\n", 0o600, "must both be set"},
		"unknown":        {"username: ironic\npassword: pa55word\nuser: x\n", 0o600, "not YAML with the keys"},
		"not yaml":       {"pa55word: [", 0o600, "not YAML with the keys"},
	} {
		_, err := ReadBasicAuthFile(write(name, c.content, c.mode))
		if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "pa55word") {
			t.Errorf("%s: %v, want %q and no password", name, err, c.wantErr)
		}
	}
}

func TestPatchOps(t *testing.T) {
	have := map[string]any{"image_source": "old", "image_checksum": "x", "capabilities": map[string]any{"boot_mode": "uefi"}}
	want := map[string]any{"image_source": "new", "image_checksum": nil, "image_os_hash_value": nil, "capabilities": map[string]string{"boot_mode": "uefi"}}
	got := patchOps("/instance_info", have, want)
	exp := nodes.UpdateOpts{
		nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/instance_info/image_checksum"},
		nodes.UpdateOperation{Op: nodes.AddOp, Path: "/instance_info/image_source", Value: "new"},
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("got %v, want %v", got, exp)
	}
}

func TestDriverInfo(t *testing.T) {
	h := testHost()
	h.BMC.InsecureSkipVerify = true
	di := driverInfo(h.BMC, Options{})
	if di["redfish_verify_ca"] != false || di["deploy_iso"] != nil {
		t.Errorf("driver_info %v", di)
	}
	for _, tt := range []struct {
		o                 Options
		iso, kernel, ramd any
	}{
		{Options{DeployKernel: "http://i/k", DeployRamdisk: "http://i/r"}, nil, "http://i/k", "http://i/r"},
		{Options{DeployISO: "http://i/iso", DeployKernel: "http://i/k", DeployRamdisk: "http://i/r"}, "http://i/iso", nil, nil},
		{Options{DeployISO: "http://i/iso"}, "http://i/iso", nil, nil},
	} {
		got := driverInfo(h.BMC, tt.o)
		if got["deploy_iso"] != tt.iso || got["deploy_kernel"] != tt.kernel || got["deploy_ramdisk"] != tt.ramd {
			t.Errorf("%+v: driver_info deploy_iso %v, deploy_kernel %v, deploy_ramdisk %v", tt.o, got["deploy_iso"], got["deploy_kernel"], got["deploy_ramdisk"])
		}
	}
	masked := map[string]any{}
	for k, v := range di {
		masked[k] = v
	}
	masked["redfish_password"] = "******"
	if !driverInfoMatches(masked, di) {
		t.Error("a masked password is a change")
	}
	masked["redfish_address"] = "http://127.0.0.1:8001"
	if driverInfoMatches(masked, di) {
		t.Error("a new BMC address is no change")
	}
}

func TestWantedPorts(t *testing.T) {
	h := testHost()
	h.BootMACAddress = "52:54:00:AA:00:01"
	h.Hardware = &metal3v1alpha1.HardwareDetails{NIC: []metal3v1alpha1.NIC{{MAC: "52:54:00:aa:00:01"}, {MAC: "52:54:00:AA:00:02", PXE: true}, {MAC: "52:54:00:aa:00:03"}, {}}}
	want := map[string]bool{"52:54:00:aa:00:01": true, "52:54:00:aa:00:02": true, "52:54:00:aa:00:03": false}
	if got := wantedPorts(h); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := wantedPorts(testHost()); len(got) != 0 {
		t.Errorf("no MAC known: %v", got)
	}
}

func TestMergeBMCDetails(t *testing.T) {
	ironicHW := func() *metal3v1alpha1.HardwareDetails {
		return &metal3v1alpha1.HardwareDetails{
			CPU: metal3v1alpha1.CPU{Arch: "x86_64", Count: 4}, RAMMebibytes: 8192,
			Storage:      []metal3v1alpha1.Storage{{SizeBytes: 100 << 30}},
			NIC:          []metal3v1alpha1.NIC{{MAC: "52:54:00:aa:00:01", PXE: true}},
			SystemVendor: metal3v1alpha1.HardwareSystemVendor{Manufacturer: "Ironic Says"},
		}
	}
	bmcHW := &metal3v1alpha1.HardwareDetails{
		CPU: metal3v1alpha1.CPU{Arch: "x86_64", Model: "Emulated CPU", ClockMegahertz: 2400, Count: 8}, RAMMebibytes: 1,
		Storage: []metal3v1alpha1.Storage{{Name: "sda", SizeBytes: 100 << 30, SerialNumber: "S1"}},
		NIC: []metal3v1alpha1.NIC{{Name: "enp1s0", MAC: "52:54:00:AA:00:01", IP: "10.0.0.1", SpeedGbps: 10},
			{Name: "enp2s0", MAC: "52:54:00:aa:00:02"}},
		SystemVendor: metal3v1alpha1.HardwareSystemVendor{Manufacturer: "BMC Says", ProductName: "Emulated", SerialNumber: "SN1"},
		Firmware:     metal3v1alpha1.Firmware{BIOS: metal3v1alpha1.BIOS{Version: "1.0"}},
		Hostname:     "host-0",
	}
	hw := ironicHW()
	mergeBMCDetails(hw, bmcHW)
	want := &metal3v1alpha1.HardwareDetails{
		// Ironic's figures win; the BMC fills what Ironic left empty.
		CPU: metal3v1alpha1.CPU{Arch: "x86_64", Model: "Emulated CPU", ClockMegahertz: 2400, Count: 4}, RAMMebibytes: 8192,
		Storage: []metal3v1alpha1.Storage{{Name: "sda", SizeBytes: 100 << 30, SerialNumber: "S1"}},
		NIC: []metal3v1alpha1.NIC{{Name: "enp1s0", MAC: "52:54:00:aa:00:01", IP: "10.0.0.1", SpeedGbps: 10, PXE: true},
			{Name: "enp2s0", MAC: "52:54:00:aa:00:02"}},
		SystemVendor: metal3v1alpha1.HardwareSystemVendor{Manufacturer: "Ironic Says", ProductName: "Emulated", SerialNumber: "SN1"},
		Firmware:     metal3v1alpha1.Firmware{BIOS: metal3v1alpha1.BIOS{Version: "1.0"}},
		Hostname:     "host-0",
	}
	if !reflect.DeepEqual(hw, want) {
		t.Errorf("merged\n%+v\nwant\n%+v", hw, want)
	}
	hw = ironicHW()
	mergeBMCDetails(hw, nil)
	if !reflect.DeepEqual(hw, ironicHW()) {
		t.Errorf("no BMC inventory changed Ironic's details: %+v", hw)
	}
}
