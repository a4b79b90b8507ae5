package redfish

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// fakeBMC is a small Redfish service for the tests of this package: one or
// more systems, one manager with a floppy and a CD slot. It checks basic
// auth on everything but the service root, records what it is asked, and
// can be told to answer a request with a status.
//
// It can be slow to show a power transition (lag), refuse a Reset sent
// while one is still showing (conflict), and serve recorded answers of
// another BMC instead of its own (newRecordedBMC), keeping its power, boot
// override and virtual media over them.
type fakeBMC struct {
	srv        *httptest.Server
	user, pass string

	mu          sync.Mutex
	systems     []string // system ids
	power       string
	bootTarget  string
	bootEnabled string
	inserted    bool
	image       string
	insertBody  map[string]any
	resets      []string
	inserts     int
	ejects      int
	requests    map[string]int // "GET /redfish/v1/" -> count
	conns       int
	fail        map[string]int // "POST /path" -> status to answer with
	noManagedBy bool
	// editSystem, when set, changes the system's document before it is
	// served (a quirk of a BMC: a summary left out, a dangling link).
	editSystem func(doc map[string]any)
	hold       chan struct{} // when set, requests wait for it to close

	// lag is how many GETs of the system after a Reset still report the
	// power state from before it; restartDips makes a restart report Off
	// for as long (sushy-tools' fake driver). lagLeft counts them down,
	// shown is what they report.
	lag         int
	restartDips bool
	lagLeft     int
	shown       string
	// conflict, when set, is the status a Reset gets while a transition
	// is still showing (409 as iDRAC answers one it is already at, 400 as
	// iLO does); nothing changes.
	conflict int
	// resetPosts counts the Reset POSTs, refused ones included; resets
	// holds the accepted ones' types.
	resetPosts int

	// docs are recorded answers by path; sysPath and cdPath name the
	// system and the CD slot whose state the fake keeps over them.
	docs            map[string]map[string]any
	sysPath, cdPath string
}

func newFakeBMC(t *testing.T) *fakeBMC { return startFakeBMC(t, false) }

// newTLSFakeBMC serves HTTPS with a certificate of its own (pool trusts it).
func newTLSFakeBMC(t *testing.T) *fakeBMC { return startFakeBMC(t, true) }

func (f *fakeBMC) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(f.srv.Certificate())
	return pool
}

// holdRequests makes every request wait until the returned function is
// called (or the request ends).
func (f *fakeBMC) holdRequests() (release func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.hold = ch
	f.mu.Unlock()
	return func() { close(ch) }
}

func startFakeBMC(t *testing.T, useTLS bool) *fakeBMC {
	t.Helper()
	f := &fakeBMC{
		user: "admin", pass: "s3cret-pa55",
		systems: []string{"host-0"}, power: "Off",
		bootTarget: "None", bootEnabled: "Disabled",
		requests: map[string]int{}, fail: map[string]int{},
	}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.mu.Lock()
			f.conns++
			f.mu.Unlock()
		}
	}
	if useTLS {
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	t.Cleanup(f.srv.Close)
	return f
}

// target is the Target of system id (empty: no path in the address).
func (f *fakeBMC) target(id string) provisioner.Target {
	path := ""
	if id != "" {
		path = "/redfish/v1/Systems/" + id
	}
	return provisioner.Target{
		Access:      bmc.Access{Driver: bmc.RedfishVirtualMedia, Endpoint: f.srv.URL, SystemPath: path},
		Credentials: provisioner.Credentials{Username: f.user, Password: f.pass},
	}
}

func (f *fakeBMC) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[key]
}

func (f *fakeBMC) setFail(key string, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if status == 0 {
		delete(f.fail, key)
		return
	}
	f.fail[key] = status
}

func link(p string) map[string]string { return map[string]string{"@odata.id": p} }

func members(paths ...string) map[string]any {
	m := []map[string]string{}
	for _, p := range paths {
		m = append(m, link(p))
	}
	return map[string]any{"Members": m, "Members@odata.count": len(m)}
}

func (f *fakeBMC) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	hold := f.hold
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	path := strings.TrimSuffix(r.URL.Path, "/")
	key := r.Method + " " + r.URL.Path
	f.requests[key]++
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	if status, ok := f.fail[key]; ok {
		// The body quotes the password, as a careless BMC might: it may
		// not reach an error.
		reply(status, map[string]any{"error": map[string]any{"code": "Base.1.0.GeneralError",
			"message": "refused password " + f.pass}})
		return
	}
	if path == "/redfish/v1" && f.docs != nil {
		reply(200, f.docs[path])
		return
	}
	if path == "/redfish/v1" {
		reply(200, map[string]any{"@odata.id": "/redfish/v1/", "RedfishVersion": "1.15.0",
			"Systems": link("/redfish/v1/Systems"), "Managers": link("/redfish/v1/Managers")})
		return
	}
	if u, p, ok := r.BasicAuth(); !ok || u != f.user || p != f.pass {
		reply(http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "no " + f.pass}})
		return
	}
	var body map[string]any
	if r.Body != nil {
		_ = json.NewDecoder(r.Body).Decode(&body)
	}
	if f.docs != nil {
		f.serveRecorded(r.Method, path, body, w, reply)
		return
	}
	sys := "/redfish/v1/Systems/" + f.systems[0]
	cd := "/redfish/v1/Managers/bmc/VirtualMedia/Cd"
	switch {
	case r.Method == "GET" && path == "/redfish/v1/Systems":
		var ps []string
		for _, id := range f.systems {
			ps = append(ps, "/redfish/v1/Systems/"+id)
		}
		reply(200, members(ps...))
	case r.Method == "GET" && path == "/redfish/v1/Managers":
		reply(200, members("/redfish/v1/Managers/bmc"))
	case r.Method == "GET" && strings.HasPrefix(path, "/redfish/v1/Systems/") && strings.Count(path, "/") == 4:
		if !f.hasSystem(strings.TrimPrefix(path, "/redfish/v1/Systems/")) {
			reply(404, map[string]any{})
			return
		}
		reply(200, f.system(path))
	case r.Method == "PATCH" && path == sys:
		f.patchBoot(body, w)
	case r.Method == "POST" && path == sys+"/Actions/ComputerSystem.Reset":
		f.reset(body, w, reply)
	case r.Method == "GET" && path == sys+"/Processors":
		reply(200, members(sys+"/Processors/CPU0", sys+"/Processors/GPU0"))
	case r.Method == "GET" && path == sys+"/Processors/CPU0":
		reply(200, map[string]any{"@odata.id": path, "Id": "CPU0", "ProcessorType": "CPU",
			"InstructionSet": "x86-64", "ProcessorArchitecture": "x86", "Model": "Fake Xeon",
			"MaxSpeedMHz": 2400, "TotalCores": 8, "TotalThreads": 16})
	case r.Method == "GET" && path == sys+"/Processors/GPU0":
		reply(200, map[string]any{"@odata.id": path, "Id": "GPU0", "ProcessorType": "GPU", "TotalThreads": 1000})
	case r.Method == "GET" && path == sys+"/EthernetInterfaces":
		reply(200, members(sys+"/EthernetInterfaces/eth0"))
	case r.Method == "GET" && path == sys+"/EthernetInterfaces/eth0":
		reply(200, map[string]any{"@odata.id": path, "Id": "eth0", "Name": "Ethernet Interface",
			"MACAddress": "52:54:00:AA:BB:01", "SpeedMbps": 25000,
			"IPv4Addresses": []map[string]string{{"Address": "10.0.0.11"}}})
	case r.Method == "GET" && path == sys+"/Storage":
		reply(200, members(sys+"/Storage/1"))
	case r.Method == "GET" && path == sys+"/Storage/1":
		reply(200, map[string]any{"@odata.id": path, "Id": "1",
			"Drives": []map[string]string{link(sys + "/Storage/1/Drives/0"), link(sys + "/Storage/1/Drives/1")}})
	case r.Method == "GET" && path == sys+"/Storage/1/Drives/0":
		reply(200, map[string]any{"@odata.id": path, "Id": "0", "Name": "sda", "CapacityBytes": 480103981056,
			"MediaType": "SSD", "Model": "FakeSSD", "SerialNumber": "SSD-0001", "Manufacturer": "Fake"})
	case r.Method == "GET" && path == sys+"/Storage/1/Drives/1":
		reply(200, map[string]any{"@odata.id": path, "Id": "1", "Name": "sdb", "CapacityBytes": 4000787030016,
			"MediaType": "HDD", "Model": "FakeHDD", "SerialNumber": "HDD-0001", "Manufacturer": "Fake"})
	case r.Method == "GET" && path == "/redfish/v1/Managers/bmc":
		reply(200, map[string]any{"@odata.id": path, "Id": "bmc",
			"VirtualMedia": link("/redfish/v1/Managers/bmc/VirtualMedia")})
	case r.Method == "GET" && path == "/redfish/v1/Managers/bmc/VirtualMedia":
		reply(200, members("/redfish/v1/Managers/bmc/VirtualMedia/Floppy", cd))
	case r.Method == "GET" && path == "/redfish/v1/Managers/bmc/VirtualMedia/Floppy":
		reply(200, map[string]any{"@odata.id": path, "Id": "Floppy", "MediaTypes": []string{"Floppy", "USBStick"}})
	case r.Method == "GET" && path == cd:
		reply(200, map[string]any{"@odata.id": path, "Id": "Cd", "MediaTypes": []string{"CD", "DVD"},
			"Inserted": f.inserted, "Image": f.image,
			"Actions": map[string]any{
				"#VirtualMedia.InsertMedia": map[string]string{"target": cd + "/Actions/VirtualMedia.InsertMedia"},
				"#VirtualMedia.EjectMedia":  map[string]string{"target": cd + "/Actions/VirtualMedia.EjectMedia"},
			}})
	case r.Method == "POST" && path == cd+"/Actions/VirtualMedia.InsertMedia":
		f.insert(body, w, reply)
	case r.Method == "POST" && path == cd+"/Actions/VirtualMedia.EjectMedia":
		f.eject(w)
	default:
		reply(404, map[string]any{"error": map[string]any{"message": "no " + key}})
	}
}

func (f *fakeBMC) hasSystem(id string) bool {
	for _, s := range f.systems {
		if s == id {
			return true
		}
	}
	return false
}

func (f *fakeBMC) system(path string) map[string]any {
	links := map[string]any{"ManagedBy": []map[string]string{link("/redfish/v1/Managers/bmc")}}
	if f.noManagedBy {
		links = map[string]any{}
	}
	doc := map[string]any{
		"@odata.id": path, "Id": strings.TrimPrefix(path, "/redfish/v1/Systems/"),
		"Manufacturer": "Airship", "Model": "Fake 1U", "SerialNumber": "SN-" + path[len(path)-1:],
		"BiosVersion": "1.2.3", "HostName": "node-0", "PowerState": f.reportedPower(),
		"Boot":               map[string]any{"BootSourceOverrideTarget": f.bootTarget, "BootSourceOverrideEnabled": f.bootEnabled},
		"ProcessorSummary":   map[string]any{"Count": 1, "Model": "Fake Xeon", "LogicalProcessorCount": 16},
		"MemorySummary":      map[string]any{"TotalSystemMemoryGiB": 64},
		"Processors":         link(path + "/Processors"),
		"EthernetInterfaces": link(path + "/EthernetInterfaces"),
		"Storage":            link(path + "/Storage"),
		"Links":              links,
		"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{
			"target":                            path + "/Actions/ComputerSystem.Reset",
			"ResetType@Redfish.AllowableValues": []string{"On", "ForceOff", "GracefulShutdown", "ForceRestart", "GracefulRestart"},
		}},
	}
	if f.editSystem != nil {
		f.editSystem(doc)
	}
	return doc
}

// reportedPower is the power state a GET of the system shows: the one
// from before the last transition while it lags.
func (f *fakeBMC) reportedPower() string {
	if f.lagLeft > 0 {
		f.lagLeft--
		return f.shown
	}
	return f.power
}

// reset answers a ComputerSystem.Reset POST.
func (f *fakeBMC) reset(body map[string]any, w http.ResponseWriter, reply func(int, any)) {
	f.resetPosts++
	if f.conflict != 0 && f.lagLeft > 0 {
		reply(f.conflict, map[string]any{"error": map[string]any{"code": "Base.1.8.GeneralError",
			"message": "a power transition is in progress"}})
		return
	}
	rt, _ := body["ResetType"].(string)
	f.resets = append(f.resets, rt)
	before := f.power
	restart := strings.Contains(rt, "Restart")
	switch rt {
	case "On", "ForceOn", "ForceRestart", "GracefulRestart":
		f.power = "On"
	case "ForceOff", "GracefulShutdown":
		f.power = "Off"
	}
	f.shown = before
	if restart && f.restartDips {
		f.shown = "Off"
	}
	if f.shown != f.power {
		f.lagLeft = f.lag
	}
	w.WriteHeader(204)
}

// patchBoot answers a PATCH of the system's boot override.
func (f *fakeBMC) patchBoot(body map[string]any, w http.ResponseWriter) {
	boot, _ := body["Boot"].(map[string]any)
	f.bootTarget, _ = boot["BootSourceOverrideTarget"].(string)
	f.bootEnabled, _ = boot["BootSourceOverrideEnabled"].(string)
	w.WriteHeader(204)
}

// newRecordedBMC serves the answers recorded under dir, laid out as a DMTF
// mockup (the answer to GET <path> in <dir>/<path>/index.json), over HTTP
// with basic auth. It keeps the power state and boot override of the
// system at sysPath, and the media of the CD slot at cdPath, over the
// recorded ones (starting from them), and answers the Reset, InsertMedia
// and EjectMedia targets those documents name; any other path is a 404.
func newRecordedBMC(t *testing.T, dir, sysPath, cdPath string) *fakeBMC {
	t.Helper()
	docs := map[string]map[string]any{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "index.json" {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		docs["/"+filepath.ToSlash(rel)] = doc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sys, cd := docs[sysPath], docs[cdPath]
	if sys == nil || cd == nil {
		t.Fatalf("%s records no system %s or no CD slot %s", dir, sysPath, cdPath)
	}
	f := newFakeBMC(t)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.docs, f.sysPath, f.cdPath = docs, sysPath, cdPath
	f.power, _ = sys["PowerState"].(string)
	boot, _ := sys["Boot"].(map[string]any)
	f.bootTarget, _ = boot["BootSourceOverrideTarget"].(string)
	f.bootEnabled, _ = boot["BootSourceOverrideEnabled"].(string)
	f.inserted, _ = cd["Inserted"].(bool)
	f.image, _ = cd["Image"].(string)
	return f
}

// actionTarget is the target of a recorded document's action.
func actionTarget(doc map[string]any, name string) string {
	actions, _ := doc["Actions"].(map[string]any)
	a, _ := actions[name].(map[string]any)
	target, _ := a["target"].(string)
	return target
}

// serveRecorded answers a request from the recorded documents.
func (f *fakeBMC) serveRecorded(method, path string, body map[string]any, w http.ResponseWriter, reply func(int, any)) {
	sys, cd := f.docs[f.sysPath], f.docs[f.cdPath]
	switch {
	case method == "GET" && f.docs[path] != nil:
		doc := maps.Clone(f.docs[path])
		switch path {
		case f.sysPath:
			doc["PowerState"] = f.reportedPower()
			boot, _ := doc["Boot"].(map[string]any)
			boot = maps.Clone(boot)
			if boot == nil {
				boot = map[string]any{}
			}
			boot["BootSourceOverrideTarget"], boot["BootSourceOverrideEnabled"] = f.bootTarget, f.bootEnabled
			doc["Boot"] = boot
		case f.cdPath:
			doc["Inserted"], doc["Image"] = f.inserted, f.image
		}
		reply(200, doc)
	case method == "POST" && path == actionTarget(sys, "#ComputerSystem.Reset"):
		f.reset(body, w, reply)
	case method == "POST" && path == actionTarget(cd, "#VirtualMedia.InsertMedia"):
		f.insert(body, w, reply)
	case method == "POST" && path == actionTarget(cd, "#VirtualMedia.EjectMedia"):
		f.eject(w)
	case method == "PATCH" && path == f.sysPath:
		f.patchBoot(body, w)
	case method == "PATCH" && path == f.cdPath:
		if in, _ := body["Inserted"].(bool); in {
			f.insert(body, w, reply)
		} else {
			f.eject(w)
		}
	default:
		reply(404, map[string]any{"error": map[string]any{"code": "Base.1.8.ResourceMissingAtURI", "message": "no " + method + " " + path}})
	}
}

// insert answers VirtualMedia.InsertMedia (or a PATCH inserting).
func (f *fakeBMC) insert(body map[string]any, w http.ResponseWriter, reply func(int, any)) {
	if f.inserted {
		reply(409, map[string]any{"error": map[string]any{"message": "already inserted"}})
		return
	}
	f.inserts++
	f.insertBody = body
	f.inserted = true
	f.image, _ = body["Image"].(string)
	w.WriteHeader(204)
}

// eject answers VirtualMedia.EjectMedia (or a PATCH ejecting).
func (f *fakeBMC) eject(w http.ResponseWriter) {
	f.ejects++
	f.inserted, f.image = false, ""
	w.WriteHeader(204)
}

func (f *fakeBMC) String() string { return fmt.Sprintf("fake BMC at %s", f.srv.URL) }
