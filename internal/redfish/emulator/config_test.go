package emulator

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stmcginnis/gofish/schemas"
)

func TestGenerate(t *testing.T) {
	a, b := Generate(300, 4), Generate(300, 4)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two calls differ")
	}
	if a[0].Name != "host-0000" || a[299].Name != "host-0299" {
		t.Errorf("names %s .. %s", a[0].Name, a[299].Name)
	}
	if a[5].Labels["rack"] != "rack-1" || a[3].Labels["rack"] != "rack-3" {
		t.Errorf("racks: %v %v", a[5].Labels, a[3].Labels)
	}
	if _, err := New(Config{Username: "u", Password: "p", Hosts: a}, Options{}); err != nil {
		t.Errorf("generated hosts are not valid: %v", err)
	}
	if g := Generate(2, 0); g[1].Labels["rack"] != "rack-0" {
		t.Errorf("0 racks: %v", g[1].Labels)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", `username: admin
password: pw
bootDelay: 1500ms
hosts:
- name: node-a
  labels: {rack: r1}
  cpus: 16
  memoryMiB: 32768
  nics:
  - {name: eno1, mac: "AA:BB:CC:00:00:01", ip: 192.168.1.10/24, speedGbps: 25}
  disks:
  - {name: nvme0n1, sizeGiB: 960, model: Fast, serial: S1}
  - {name: sdb, sizeGiB: 4000, rotational: true}
- name: node-b
  username: other
  password: other-pw
`)
	cfg, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BootDelay != 1500*time.Millisecond || cfg.Username != "admin" || len(cfg.Hosts) != 2 {
		t.Fatalf("config %+v", cfg)
	}
	s, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hosts := s.Hosts()
	a, b := hosts[0], hosts[1]
	if a.CPUs != 16 || a.NICs[0].MAC != "aa:bb:cc:00:00:01" || a.NICs[0].SpeedGbps != 25 || a.Disks[1].Model != "Emulated HDD" || a.Disks[1].Serial == "" {
		t.Errorf("node-a %+v", a)
	}
	if b.CPUs != DefaultCPUs || b.MemoryMiB != DefaultMemoryMiB || len(b.NICs) != 1 || b.NICs[0].MAC == "" || len(b.Disks) != 1 || b.Disks[0].SizeGiB != DefaultDiskGiB {
		t.Errorf("node-b defaults %+v", b)
	}
	if u, p, _ := s.Credentials("node-b"); u != "other" || p != "other-pw" {
		t.Errorf("node-b credentials %s", u)
	}

	for _, tc := range []struct{ name, content, want string }{
		{"unknown field", "username: a\npassword: b\nhosts:\n- name: x\n  cpu: 3\n", `unknown field "hosts[0].cpu"`},
		{"unknown top field", "username: a\npassword: b\nhost: []\n", `unknown field "host"`},
		{"bad name", "username: a\npassword: b\nhosts:\n- name: Bad_Name\n", "hosts[0] (Bad_Name): name:"},
		{"no name", "username: a\npassword: b\nhosts:\n- cpus: 2\n", "hosts[0]: name:"},
		{"duplicate name", "username: a\npassword: b\nhosts:\n- name: x\n- name: x\n", "hosts[1] (x): name: duplicate"},
		{"bad MAC", "username: a\npassword: b\nhosts:\n- name: x\n  nics: [{name: e, mac: zz}]\n", `nics[0].mac "zz"`},
		{"duplicate MAC", "username: a\npassword: b\nhosts:\n- name: x\n  nics: [{name: e, mac: '02:00:00:00:00:01'}]\n- name: h2\n  nics: [{name: e, mac: '02:00:00:00:00:01'}]\n", "also the MAC of x nics[0]"},
		{"bad IP", "username: a\npassword: b\nhosts:\n- name: x\n  nics: [{name: e, ip: 10.0.0.300}]\n", `nics[0].ip: "10.0.0.300"`},
		{"no credentials", "hosts:\n- name: x\n", "no credentials"},
		{"negative delay", "username: a\npassword: b\nbootDelay: -1s\nhosts: []\n", "bootDelay: must not be negative"},
		{"bad delay", "username: a\npassword: b\nbootDelay: soon\nhosts: []\n", "emulator config"},
		{"bad label", "username: a\npassword: b\nhosts:\n- name: x\n  labels: {rack: 'a b'}\n", "labels[rack]"},
		{"wrong type", "username: a\npassword: b\nhosts:\n- name: x\n  cpus: many\n", "emulator config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(tc.name, " ", "-")+".yaml", tc.content)
			_, err := LoadConfig(p)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name the file and %q", err, tc.want)
			}
		})
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

// TestInventoryStable: two servers of one config show the same hosts.
func TestInventoryStable(t *testing.T) {
	cfg := Config{Hosts: append(Generate(3, 2), Host{Name: "custom"})}
	var seen [2][]string
	for i := range seen {
		_, base := start(t, cfg, Options{})
		c := connect(t, base, testUser, testPassword, true)
		systems, err := c.Service.Systems()
		if err != nil {
			t.Fatal(err)
		}
		for _, sys := range systems {
			nics, err := sys.EthernetInterfaces()
			if err != nil {
				t.Fatal(err)
			}
			drives := driveSerials(t, sys)
			seen[i] = append(seen[i], sys.ID, sys.UUID, sys.SerialNumber, nics[0].MACAddress, drives)
		}
	}
	if len(seen[0]) != 4*5 || !reflect.DeepEqual(seen[0], seen[1]) {
		t.Errorf("inventories differ:\n%v\n%v", seen[0], seen[1])
	}
}

func driveSerials(t *testing.T, sys *schemas.ComputerSystem) string {
	t.Helper()
	storage, err := sys.Storage()
	if err != nil {
		t.Fatal(err)
	}
	drives, err := storage[0].Drives()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range drives {
		out = append(out, d.SerialNumber)
	}
	return strings.Join(out, ",")
}
