package redfish

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// logLines collects what is logged through the context it returns.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) ctx(parent context.Context) context.Context {
	return log.IntoContext(parent, funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.lines = append(l.lines, prefix+" "+args)
	}, funcr.Options{}))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// fakeHardware is what Inspect reads of the fake BMC's host when it gives
// everything.
func fakeHardware() *metal3v1alpha1.HardwareDetails {
	return &metal3v1alpha1.HardwareDetails{
		SystemVendor: metal3v1alpha1.HardwareSystemVendor{Manufacturer: "Airship", ProductName: "Fake 1U", SerialNumber: "SN-0"},
		Firmware:     metal3v1alpha1.Firmware{BIOS: metal3v1alpha1.BIOS{Version: "1.2.3"}},
		RAMMebibytes: 64 * 1024,
		NIC:          []metal3v1alpha1.NIC{{Name: "eth0", MAC: "52:54:00:aa:bb:01", IP: "10.0.0.11", SpeedGbps: 25}},
		Storage: []metal3v1alpha1.Storage{
			{Name: "sda", Type: metal3v1alpha1.SSD, SizeBytes: 480103981056, Vendor: "Fake", Model: "FakeSSD", SerialNumber: "SSD-0001"},
			{Name: "sdb", Rotational: true, Type: metal3v1alpha1.HDD, SizeBytes: 4000787030016, Vendor: "Fake", Model: "FakeHDD", SerialNumber: "HDD-0001"},
		},
		CPU:      metal3v1alpha1.CPU{Arch: "x86_64", Model: "Fake Xeon", ClockMegahertz: 2400, Count: 16},
		Hostname: "node-0",
	}
}

// TestInspectMissingInventory: a part of the inventory the BMC links but
// has not (a client error) is left empty and logged by name; what the
// lifecycle needs, and a BMC failing or refusing the credentials, fail
// the inspection naming the part.
func TestInspectMissingInventory(t *testing.T) {
	const system = "/redfish/v1/Systems/host-0"
	tests := []struct {
		name    string
		edit    func(doc map[string]any)
		fail    map[string]int
		change  func(hw *metal3v1alpha1.HardwareDetails) // from fakeHardware
		logged  []string                                 // in the missing-inventory line
		wantErr error
		msg     string
	}{
		{name: "everything given: nothing logged"},
		{name: "dangling Memory link, no summary (sushy-tools' fake driver)",
			edit: func(doc map[string]any) {
				doc["MemorySummary"] = map[string]any{"Status": map[string]any{"State": "Enabled"}}
				doc["Memory"] = link(system + "/Memory")
			},
			change: func(hw *metal3v1alpha1.HardwareDetails) { hw.RAMMebibytes = 0 },
			logged: []string{"the memory (HTTP 404 Not Found)", "the memory size"}},
		{name: "Processors 404, ProcessorSummary gives the count",
			fail:   map[string]int{"GET " + system + "/Processors": 404},
			change: func(hw *metal3v1alpha1.HardwareDetails) { hw.CPU = metal3v1alpha1.CPU{Model: "Fake Xeon", Count: 16} },
			logged: []string{"the processors (HTTP 404 Not Found)"}},
		{name: "no ProcessorSummary, no Processors",
			edit: func(doc map[string]any) {
				delete(doc, "ProcessorSummary")
				delete(doc, "Processors")
			},
			change: func(hw *metal3v1alpha1.HardwareDetails) { hw.CPU = metal3v1alpha1.CPU{} },
			logged: []string{"the CPU count"}},
		{name: "one processor dangles: the other is read",
			fail:   map[string]int{"GET " + system + "/Processors/GPU0": 404},
			logged: []string{"the processors (HTTP 404 Not Found)"}},
		{name: "Ethernet interfaces 405",
			fail:   map[string]int{"GET " + system + "/EthernetInterfaces": 405},
			change: func(hw *metal3v1alpha1.HardwareDetails) { hw.NIC = nil },
			logged: []string{"the Ethernet interfaces (HTTP 405 Method Not Allowed)"}},
		{name: "a drive dangles: the other is read",
			fail:   map[string]int{"GET " + system + "/Storage/1/Drives/0": 404},
			change: func(hw *metal3v1alpha1.HardwareDetails) { hw.Storage = hw.Storage[1:] },
			logged: []string{"the drives of " + system + "/Storage/1 (HTTP 404 Not Found)"}},
		{name: "Storage 501, SimpleStorage dangles",
			edit:   func(doc map[string]any) { doc["SimpleStorage"] = link(system + "/SimpleStorage") },
			fail:   map[string]int{"GET " + system + "/Storage": 501},
			change: func(hw *metal3v1alpha1.HardwareDetails) { hw.Storage = nil },
			logged: []string{"the storage (HTTP 501 Not Implemented)", "the simple storage (HTTP 404 Not Found)"}},

		{name: "memory 500 fails the inspection", edit: func(doc map[string]any) {
			delete(doc, "MemorySummary")
			doc["Memory"] = link(system + "/Memory")
		}, fail: map[string]int{"GET " + system + "/Memory": 500}, wantErr: provisioner.ErrUnreachable, msg: "inspect: read the memory: HTTP 500"},
		{name: "processors 403 fails it", fail: map[string]int{"GET " + system + "/Processors": 403},
			wantErr: provisioner.ErrCredentials, msg: "inspect: read the processors: HTTP 403"},
		{name: "no Reset action", edit: func(doc map[string]any) { delete(doc, "Actions") },
			wantErr: provisioner.ErrRefused, msg: "system " + system + " offers no ComputerSystem.Reset action"},
		{name: "no power state", edit: func(doc map[string]any) { delete(doc, "PowerState") },
			wantErr: provisioner.ErrUnreachable, msg: "system " + system + " reports power state \"\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bmc := newFakeBMC(t)
			bmc.mu.Lock()
			bmc.editSystem = tt.edit
			bmc.mu.Unlock()
			for k, status := range tt.fail {
				bmc.setFail(k, status)
			}
			var logs logLines
			p := open(t, New(Options{}), bmc.target("host-0"))
			hw, err := p.Inspect(logs.ctx(t.Context()))
			if tt.wantErr != nil {
				errIs(t, err, tt.wantErr)
				contains(t, err.Error(), tt.msg)
				notContains(t, err.Error(), bmc.pass)
				return
			}
			noErr(t, err)
			want := fakeHardware()
			if tt.change != nil {
				tt.change(want)
			}
			eq(t, want, hw, "hardware details")
			got := logs.String()
			if len(tt.logged) == 0 && got != "" {
				t.Errorf("logged %q, want nothing", got)
			}
			for _, part := range tt.logged {
				contains(t, got, part)
			}
			notContains(t, got, bmc.pass)
		})
	}
}
