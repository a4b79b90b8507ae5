package emulator

import (
	"crypto/sha1" //nolint:gosec // a name-based (version 5) UUID is defined on SHA-1
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/airshipit/airship-go/internal/strictyaml"
)

// Config is what the emulator serves.
type Config struct {
	// Username and Password log in to every host's BMC, with basic auth or
	// a session, unless the host overrides them. Every request but the
	// service root and the creation of a session needs them.
	Username, Password string
	// BootDelay is how long a powered-on host takes to boot.
	BootDelay time.Duration
	// Hosts are the emulated machines, one ComputerSystem and one Manager each.
	Hosts []Host
}

// Host is one emulated machine.
type Host struct {
	// Name is the host's ComputerSystem id (/redfish/v1/Systems/<Name>) and
	// Manager id (/redfish/v1/Managers/<Name>); a DNS label, as it also
	// names the host's BareMetalHost and Secrets.
	Name string `json:"name"`
	// UUID is the system's UUID; derived from Name when empty.
	UUID string `json:"uuid,omitempty"`
	// Labels go on the host's BareMetalHost (such as "rack").
	Labels map[string]string `json:"labels,omitempty"`
	// CPUs is the number of logical processors (default 4), CPUModel their
	// model, MemoryMiB the memory (default 8192).
	CPUs      int    `json:"cpus,omitempty"`
	CPUModel  string `json:"cpuModel,omitempty"`
	MemoryMiB int    `json:"memoryMiB,omitempty"`
	// NICs are the host's Ethernet interfaces; the first is the boot NIC.
	// Default: one NIC with a MAC derived from Name.
	NICs []NIC `json:"nics,omitempty"`
	// Disks are the host's drives. Default: one 100 GiB SSD.
	Disks []Disk `json:"disks,omitempty"`
	// Username and Password override the Config's credentials for this
	// host's BMC.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
}

// NIC is an Ethernet interface.
type NIC struct {
	Name string `json:"name"`
	MAC  string `json:"mac,omitempty"`
	// IP is an IPv4 or IPv6 address, with or without a prefix length
	// (10.23.0.1/16); it becomes the booted Node's InternalIP.
	IP        string `json:"ip,omitempty"`
	SpeedGbps int    `json:"speedGbps,omitempty"`
}

// Disk is a drive.
type Disk struct {
	Name       string `json:"name"`
	SizeGiB    int    `json:"sizeGiB,omitempty"`
	Rotational bool   `json:"rotational,omitempty"`
	Model      string `json:"model,omitempty"`
	Serial     string `json:"serial,omitempty"`
}

// Defaults of a host's inventory.
const (
	DefaultCPUs      = 4
	DefaultCPUModel  = "Emulated x86-64 CPU @ 2.40GHz"
	DefaultMemoryMiB = 8192
	DefaultDiskGiB   = 100
	DefaultNICSpeed  = 10
)

// configFile is the YAML form of Config.
type configFile struct {
	Username  string          `json:"username,omitempty"`
	Password  string          `json:"password,omitempty"`
	BootDelay metav1.Duration `json:"bootDelay,omitempty"`
	Hosts     []Host          `json:"hosts"`
}

// LoadConfig reads a YAML (or JSON) host definition file:
//
//	username: admin
//	password: secret
//	bootDelay: 2s
//	hosts:
//	- name: node-0
//	  labels: {rack: rack-0}
//	  cpus: 8
//	  memoryMiB: 16384
//	  nics: [{name: enp1s0, mac: "52:54:00:00:00:01", ip: 10.23.0.1/16}]
//	  disks: [{name: sda, sizeGiB: 200}]
//
// Unknown fields are errors naming the file and the field. Values are
// checked as New checks them.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("emulator config: %w", err)
	}
	var f configFile
	if err := strictyaml.Unmarshal(data, &f); err != nil {
		return Config{}, fmt.Errorf("emulator config %s: %w", path, err)
	}
	cfg := Config{Username: f.Username, Password: f.Password, BootDelay: f.BootDelay.Duration, Hosts: f.Hosts}
	if _, err := normalize(cfg); err != nil {
		return Config{}, fmt.Errorf("emulator config %s: %w", path, err)
	}
	return cfg, nil
}

// Generate returns n hosts named host-0000, host-0001, ..., spread over
// racks racks (label rack: rack-<i mod racks>). Everything about host i is
// derived from i: its MACs (52:54:00 followed by i and the NIC's number),
// its IP (10.23.0.0/16 onwards), its disks' serials, so two calls agree.
func Generate(n, racks int) []Host {
	if racks < 1 {
		racks = 1
	}
	hosts := make([]Host, n)
	for i := range n {
		hosts[i] = Host{
			Name:      fmt.Sprintf("host-%04d", i),
			Labels:    map[string]string{"rack": fmt.Sprintf("rack-%d", i%racks)},
			CPUs:      DefaultCPUs,
			CPUModel:  DefaultCPUModel,
			MemoryMiB: DefaultMemoryMiB,
			NICs: []NIC{
				{Name: "enp1s0", MAC: indexMAC(i, 0), IP: indexIP(i), SpeedGbps: DefaultNICSpeed},
				{Name: "enp2s0", MAC: indexMAC(i, 1), SpeedGbps: DefaultNICSpeed},
			},
			Disks: []Disk{{Name: "sda", SizeGiB: DefaultDiskGiB, Model: "Emulated SSD", Serial: fmt.Sprintf("EMU-SSD-%06d", i)}},
		}
	}
	return hosts
}

// indexMAC is the MAC of NIC nic of generated host i: 52:54:00, then i in
// 18 bits and nic in 3 (up to 262,144 hosts of 8 NICs).
func indexMAC(i, nic int) string {
	v := (i&0x3ffff)<<3 | nic&7
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", v>>16&0xff, v>>8&0xff, v&0xff)
}

// indexIP is the address of generated host i: 10.23.0.1/16 onwards, 250
// per /24 (.1 to .250), spilling into 10.24, 10.25 ... past 64,000 hosts.
func indexIP(i int) string {
	third := i / 250
	return fmt.Sprintf("10.%d.%d.%d/16", 23+third/256, third%256, i%250+1)
}

// host is a Host with defaults filled in and what the server derives from it.
type host struct {
	Host
	index    int
	uuid     string
	serial   string
	credsKey string
}

// normalize checks cfg and fills in defaults; hosts keep their order. The
// error joins every problem found, each naming its host and field.
func normalize(cfg Config) ([]*host, error) {
	nz := &normalizer{cfg: cfg, names: map[string]bool{}, macs: map[string]string{}}
	if cfg.BootDelay < 0 {
		nz.errs = append(nz.errs, errors.New("bootDelay: must not be negative"))
	}
	out := make([]*host, 0, len(cfg.Hosts))
	for i, h := range cfg.Hosts {
		out = append(out, nz.host(i, h))
	}
	return out, errors.Join(nz.errs...)
}

// normalizer is one normalize call: the problems found so far and what
// must be unique across hosts.
type normalizer struct {
	cfg   Config
	errs  []error
	names map[string]bool
	// macs: MAC → the host and NIC that has it.
	macs map[string]string
}

// badFunc records one problem of a host.
type badFunc func(format string, args ...any)

// host checks and fills in the i-th host.
func (nz *normalizer) host(i int, h Host) *host {
	where := fmt.Sprintf("hosts[%d]", i)
	if h.Name != "" {
		where = fmt.Sprintf("hosts[%d] (%s)", i, h.Name)
	}
	bad := func(format string, args ...any) {
		nz.errs = append(nz.errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
	}
	username, password := nz.checkHost(h, bad)
	n := &host{Host: h, index: i}
	n.Labels = copyMap(h.Labels)
	n.NICs = append([]NIC(nil), h.NICs...)
	n.Disks = append([]Disk(nil), h.Disks...)
	if n.CPUs == 0 {
		n.CPUs = DefaultCPUs
	}
	if n.CPUModel == "" {
		n.CPUModel = DefaultCPUModel
	}
	if n.MemoryMiB == 0 {
		n.MemoryMiB = DefaultMemoryMiB
	}
	nz.nics(n, bad)
	disks(n, bad)
	n.uuid = h.UUID
	if n.uuid == "" {
		n.uuid = nameUUID(h.Name)
	}
	n.UUID = n.uuid
	n.serial = "EMU-" + strings.ToUpper(hashHex(h.Name)[:10])
	n.credsKey = credsKey(username, password)
	return n
}

// checkHost checks the host's own fields and returns the credentials its
// BMC takes: its own, else the Config's.
func (nz *normalizer) checkHost(h Host, bad badFunc) (username, password string) {
	for _, m := range validation.IsDNS1123Label(h.Name) {
		bad("name: %s", m)
	}
	if nz.names[h.Name] {
		bad("name: duplicate")
	}
	nz.names[h.Name] = true
	username, password = nz.cfg.Username, nz.cfg.Password
	if h.Username != "" {
		username = h.Username
	}
	if h.Password != "" {
		password = h.Password
	}
	if username == "" || password == "" {
		bad("no credentials: set username and password (top level or per host)")
	}
	if h.CPUs < 0 || h.MemoryMiB < 0 {
		bad("cpus and memoryMiB must not be negative")
	}
	for k, v := range h.Labels {
		for _, m := range validation.IsQualifiedName(k) {
			bad("labels: key %q: %s", k, m)
		}
		for _, m := range validation.IsValidLabelValue(v) {
			bad("labels[%s]: %s", k, m)
		}
	}
	return username, password
}

// nics checks and fills in the host's NICs (one by default). A MAC must be
// unique across all hosts, as the BareMetalHosts are told apart by it.
func (nz *normalizer) nics(n *host, bad badFunc) {
	if len(n.NICs) == 0 {
		n.NICs = []NIC{{Name: "enp1s0"}}
	}
	nicNames := map[string]bool{}
	for j := range n.NICs {
		nic := &n.NICs[j]
		itemName(&nic.Name, "nics", "nic", j, nicNames, bad)
		if nic.MAC == "" {
			nic.MAC = nameMAC(n.Name, j)
		}
		hw, err := net.ParseMAC(nic.MAC)
		if err != nil || len(hw) != 6 {
			bad("nics[%d].mac %q: not a 6-byte MAC address", j, nic.MAC)
		} else {
			nic.MAC = hw.String()
			if other, dup := nz.macs[nic.MAC]; dup {
				bad("nics[%d].mac %s: also the MAC of %s", j, nic.MAC, other)
			}
			nz.macs[nic.MAC] = fmt.Sprintf("%s nics[%d]", n.Name, j)
		}
		if nic.IP != "" {
			if _, err := parseIP(nic.IP); err != nil {
				bad("nics[%d].ip: %v", j, err)
			}
		}
		if nic.SpeedGbps == 0 {
			nic.SpeedGbps = DefaultNICSpeed
		}
		if nic.SpeedGbps < 0 {
			bad("nics[%d].speedGbps must not be negative", j)
		}
	}
}

// itemName fills in the name of the j-th NIC or disk (prefix and its
// number by default) and checks it is a DNS label unique among the host's.
func itemName(name *string, field, prefix string, j int, seen map[string]bool, bad badFunc) {
	if *name == "" {
		*name = fmt.Sprintf("%s%d", prefix, j)
	}
	for _, m := range validation.IsDNS1123Label(strings.ToLower(*name)) {
		bad("%s[%d].name: %s", field, j, m)
	}
	if seen[*name] {
		bad("%s[%d].name: duplicate %q", field, j, *name)
	}
	seen[*name] = true
}

// disks checks and fills in the host's disks (one SSD by default).
func disks(n *host, bad badFunc) {
	if len(n.Disks) == 0 {
		n.Disks = []Disk{{Name: "sda"}}
	}
	diskNames := map[string]bool{}
	for j := range n.Disks {
		d := &n.Disks[j]
		itemName(&d.Name, "disks", "disk", j, diskNames, bad)
		if d.SizeGiB == 0 {
			d.SizeGiB = DefaultDiskGiB
		}
		if d.SizeGiB < 0 {
			bad("disks[%d].sizeGiB must not be negative", j)
		}
		if d.Model == "" {
			d.Model = "Emulated SSD"
			if d.Rotational {
				d.Model = "Emulated HDD"
			}
		}
		if d.Serial == "" {
			d.Serial = "EMU-" + strings.ToUpper(hashHex(n.Name + "/disk/" + d.Name)[:12])
		}
	}
}

// parseIP reads an address with or without a prefix length.
func parseIP(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// nameMAC derives a locally administered MAC from a host name and NIC number.
func nameMAC(name string, nic int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/nic/%d", name, nic))
	return fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", sum[0], sum[1], sum[2], sum[3], sum[4])
}

// uuidNamespace is the namespace of the emulator's name-based UUIDs.
var uuidNamespace = [16]byte{0x6f, 0x1c, 0x5e, 0x0a, 0x9b, 0x43, 0x4d, 0x2e, 0x8a, 0x51, 0x3c, 0x7d, 0x20, 0xe4, 0x91, 0x0b}

// nameUUID is the version 5 UUID of name in the emulator's namespace.
func nameUUID(name string) string {
	h := sha1.New() //nolint:gosec // see the import
	h.Write(uuidNamespace[:])
	h.Write([]byte(name))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// credsKey identifies a username and password pair without holding the password.
func credsKey(username, password string) string {
	return hashHex(username + "\x00" + password)
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
