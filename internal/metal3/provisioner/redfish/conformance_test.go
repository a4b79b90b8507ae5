package redfish

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
)

var update = flag.Bool("update", false, "rewrite testdata/conformance: our emulator's recorded answers and each kind's golden hardware.json")

const conformanceDir = "testdata/conformance"

// emulatorHost is the host whose answers testdata/conformance/airship-emulator
// records.
var emulatorHost = emulator.Host{
	Name: "node-0", UUID: "0f8b3f2e-1d5c-4c8e-9a4b-6e2d7c1a9b30", CPUs: 8, CPUModel: "Emulated x86-64 CPU @ 2.40GHz", MemoryMiB: 16384,
	NICs:  []emulator.NIC{{Name: "eno1", MAC: "52:54:00:00:00:01", IP: "192.0.2.10/24", SpeedGbps: 25}},
	Disks: []emulator.Disk{{Name: "sda", SizeGiB: 120, Model: "Emulated SSD", Serial: "EMU-0001"}, {Name: "sdb", SizeGiB: 2000, Rotational: true}},
}

// recordEmulator rewrites dir with what our emulator answers to a GET of
// every resource reachable from its service root, as a DMTF mockup.
func recordEmulator(t *testing.T, dir string) {
	t.Helper()
	srv, err := emulator.New(emulator.Config{Username: emuUser, Password: emuPassword, Hosts: []emulator.Host{emulatorHost}}, emulator.Options{})
	noErr(t, err)
	noErr(t, os.RemoveAll(filepath.Join(dir, "redfish")))
	queue, seen := []string{"/redfish/v1"}, map[string]bool{"/redfish/v1": true}
	for len(queue) > 0 && len(seen) < 500 {
		path := queue[0]
		queue = queue[1:]
		req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil)
		req.SetBasicAuth(emuUser, emuPassword)
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			continue
		}
		var doc any
		noErr(t, json.Unmarshal(rec.Body.Bytes(), &doc))
		out, err := json.MarshalIndent(doc, "", "  ")
		noErr(t, err)
		if strings.Contains(string(out), emuPassword) {
			t.Fatalf("%s holds the password: not recorded", path)
		}
		noErr(t, os.MkdirAll(filepath.Join(dir, path), 0o755))
		noErr(t, os.WriteFile(filepath.Join(dir, path, "index.json"), append(out, '\n'), 0o600))
		for _, l := range links(doc) {
			l = strings.TrimSuffix(l, "/")
			if strings.HasPrefix(l, "/redfish/v1/") && !strings.Contains(l, "#") && !strings.Contains(l, "/Actions/") && !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
}

// links are the @odata.id values in a document but its own.
func links(doc any) []string {
	var out []string
	var walk func(v any, top bool)
	walk = func(v any, top bool) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == "@odata.id" && !top {
					out = append(out, s)
				}
				walk(e, false)
			}
		case []any:
			for _, e := range v {
				walk(e, false)
			}
		}
	}
	walk(doc, true)
	return out
}

// golden compares hw with dir/hardware.json, or rewrites it with -update.
func golden(t *testing.T, dir string, hw *metal3v1alpha1.HardwareDetails) {
	t.Helper()
	path := filepath.Join(dir, "hardware.json")
	if *update {
		out, err := json.MarshalIndent(hw, "", "  ")
		noErr(t, err)
		noErr(t, os.WriteFile(path, append(out, '\n'), 0o600))
		return
	}
	data, err := os.ReadFile(path)
	noErr(t, err)
	var want metal3v1alpha1.HardwareDetails
	noErr(t, json.Unmarshal(data, &want))
	eq(t, &want, hw, "hardware details against", path)
}

// TestConformance runs the lifecycle the metal3-operator drives without
// Ironic (the direct provisioner over this package) against recorded
// answers of several kinds of BMC, served over HTTP with basic auth by the
// fake BMC (which keeps power, boot override and media over them, lagging
// and refusing as each row says): our emulator; sushy-tools' fake and
// libvirt drivers, the emulators Metal3's own tests use (shapes from their
// templates); and quirks of vendors' BMCs: summaries only (no Memory or
// Processors collection) with a PowerState that lags and a 409 to a Reset
// mid-transition, and virtual media on the system, PATCHed, with a 400
// to a Reset mid-transition. Each row registers, inspects (exact
// details, golden), powers on and off, boots an ISO from virtual media
// from off and from on, ejects it and powers off before delete, with one
// Reset POST per transition and none refused.
func TestConformance(t *testing.T) {
	if *update {
		recordEmulator(t, filepath.Join(conformanceDir, "airship-emulator"))
	}
	tests := []struct {
		kind            string
		system          string // the address's system id; "" has the BMC's only one used
		sysPath, cdPath string
		lag             int
		dips            bool
		conflict        int
		missing         []string // logged by the inspection
	}{
		{kind: "airship-emulator", system: "node-0",
			sysPath: "/redfish/v1/Systems/node-0", cdPath: "/redfish/v1/Managers/node-0/VirtualMedia/Cd", lag: 2},
		{kind: "sushy-fake",
			sysPath: "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-f3527a1ef094", cdPath: "/redfish/v1/Systems/27946b59-9e44-4fa7-8e91-f3527a1ef094/VirtualMedia/Cd",
			lag: 3, dips: true, missing: []string{"the memory (HTTP 404 Not Found)", "the CPU count", "the memory size"}},
		{kind: "sushy-libvirt", system: "5b7a2b8e-6a0e-4f61-9c0b-2d9d6f3c4a11",
			sysPath: "/redfish/v1/Systems/5b7a2b8e-6a0e-4f61-9c0b-2d9d6f3c4a11", cdPath: "/redfish/v1/Systems/5b7a2b8e-6a0e-4f61-9c0b-2d9d6f3c4a11/VirtualMedia/Cd",
			lag: 1, missing: []string{"the processors (an answer that is not the Redfish JSON expected)"}},
		{kind: "summaries-only", system: "System.Embedded.1",
			sysPath: "/redfish/v1/Systems/System.Embedded.1", cdPath: "/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/CD",
			lag: 4, conflict: http.StatusConflict},
		{kind: "system-vmedia", system: "1",
			sysPath: "/redfish/v1/Systems/1", cdPath: "/redfish/v1/Systems/1/VirtualMedia/CD1",
			lag: 2, conflict: http.StatusBadRequest, missing: []string{"the Ethernet interfaces (HTTP 404 Not Found)"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			dir := filepath.Join(conformanceDir, tt.kind)
			bmc := newRecordedBMC(t, dir, tt.sysPath, tt.cdPath)
			bmc.mu.Lock()
			bmc.lag, bmc.restartDips, bmc.conflict = tt.lag, tt.dips, tt.conflict
			startedOn := bmc.power == "On"
			bmc.mu.Unlock()
			p, _ := lifecycle(t, bmc.target(tt.system))

			res, _, err := p.Register(t.Context(), provisioner.RegisterData{CredentialsChanged: true})
			if err != nil || res != (provisioner.Result{}) {
				t.Fatalf("register: %+v %v", res, err)
			}

			var logs logLines
			res, hw, err := p.Inspect(logs.ctx(t.Context()), provisioner.InspectData{})
			if err != nil || res != (provisioner.Result{}) {
				t.Fatalf("inspect: %+v %v", res, err)
			}
			golden(t, dir, hw)
			if got := logs.String(); len(tt.missing) == 0 && got != "" {
				t.Errorf("inspection logged %q, want nothing missing", got)
			}
			for _, m := range tt.missing {
				contains(t, logs.String(), m)
			}

			calls := 0
			step := func(what string, fn func(context.Context) (provisioner.Result, error)) {
				calls = max(calls, until(t, what, fn))
			}
			step("power on", p.PowerOn)
			step("power off", powerOff(p, false))
			step("provision from off", provision(p))
			bmc.mu.Lock()
			if !bmc.inserted || bmc.image != isoImage.URL || bmc.bootTarget != "Cd" || bmc.bootEnabled != "Once" {
				t.Errorf("after provisioning: media inserted %v %q, boot override %s %s; want the ISO, Cd once", bmc.inserted, bmc.image, bmc.bootTarget, bmc.bootEnabled)
			}
			eq(t, map[string]any{"Image": isoImage.URL, "Inserted": true, "WriteProtected": true}, bmc.insertBody, "insert body")
			bmc.mu.Unlock()
			step("deprovision", deprovision(p))
			step("power on", p.PowerOn)
			step("provision from on", provision(p))
			step("deprovision", deprovision(p))
			step("power off before delete", powerOff(p, true))

			bmc.mu.Lock()
			defer bmc.mu.Unlock()
			want := []string{"GracefulShutdown", "On", "ForceOff", "On", "ForceRestart", "ForceOff"}
			if !startedOn {
				want = append([]string{"On"}, want...)
			}
			eq(t, want, bmc.resets, "accepted Resets")
			eq(t, len(want), bmc.resetPosts, "Reset POSTs")
			eq(t, 2, bmc.inserts, "media insertions")
			if bmc.inserted || bmc.power != "Off" {
				t.Errorf("at the end: media inserted %v, power %s; want ejected, off", bmc.inserted, bmc.power)
			}
			if tt.lag > 1 && calls < 2 {
				t.Errorf("every step was done in one call: the lag of %d was not seen", tt.lag)
			}
		})
	}
}
