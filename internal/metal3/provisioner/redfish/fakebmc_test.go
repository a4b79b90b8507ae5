package redfish

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
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
		boot, _ := body["Boot"].(map[string]any)
		f.bootTarget, _ = boot["BootSourceOverrideTarget"].(string)
		f.bootEnabled, _ = boot["BootSourceOverrideEnabled"].(string)
		w.WriteHeader(204)
	case r.Method == "POST" && path == sys+"/Actions/ComputerSystem.Reset":
		rt, _ := body["ResetType"].(string)
		f.resets = append(f.resets, rt)
		switch rt {
		case "On", "ForceRestart", "GracefulRestart":
			f.power = "On"
		case "ForceOff", "GracefulShutdown":
			f.power = "Off"
		}
		w.WriteHeader(204)
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
		if f.inserted {
			reply(409, map[string]any{"error": map[string]any{"message": "already inserted"}})
			return
		}
		f.inserts++
		f.insertBody = body
		f.inserted = true
		f.image, _ = body["Image"].(string)
		w.WriteHeader(204)
	case r.Method == "POST" && path == cd+"/Actions/VirtualMedia.EjectMedia":
		f.ejects++
		f.inserted, f.image = false, ""
		w.WriteHeader(204)
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
		"BiosVersion": "1.2.3", "HostName": "node-0", "PowerState": f.power,
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

func (f *fakeBMC) String() string { return fmt.Sprintf("fake BMC at %s", f.srv.URL) }
