package emulator

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Paths of the service.
const (
	rootPath     = "/redfish/v1"
	systemsPath  = rootPath + "/Systems"
	managersPath = rootPath + "/Managers"
	sessionSvc   = rootPath + "/SessionService"
	sessionsPath = sessionSvc + "/Sessions"
	// mediaID is the id of each manager's virtual CD.
	mediaID = "Cd"
)

// sessionTimeout is how long an unused session lives.
const sessionTimeout = 30 * time.Minute

// session is a login; key identifies its credentials.
type session struct {
	id, token, key, username string
	lastUsed                 time.Time
}

// identity is who a request authenticated as.
type identity struct {
	key     string
	session *session
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /redfish", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, obj{"v1": rootPath + "/"})
	})
	mux.HandleFunc("GET "+rootPath, s.serviceRoot)
	mux.HandleFunc("POST "+sessionsPath, s.createSession)
	mux.HandleFunc("GET "+sessionSvc, s.authed(s.sessionService))
	mux.HandleFunc("GET "+sessionsPath, s.authed(s.listSessions))
	mux.HandleFunc("GET "+sessionsPath+"/{id}", s.authed(s.getSession))
	mux.HandleFunc("DELETE "+sessionsPath+"/{id}", s.authed(s.deleteSession))

	mux.HandleFunc("GET "+systemsPath, s.authed(s.listHosts(systemsPath, "ComputerSystemCollection", "Computer System Collection")))
	mux.HandleFunc("GET "+managersPath, s.authed(s.listHosts(managersPath, "ManagerCollection", "Manager Collection")))

	sys := systemsPath + "/{host}"
	mux.HandleFunc("GET "+sys, s.hostRoute(s.getSystem))
	mux.HandleFunc("PATCH "+sys, s.hostRoute(s.patchSystem))
	mux.HandleFunc("POST "+sys+"/Actions/ComputerSystem.Reset", s.hostRoute(s.resetSystem))
	mux.HandleFunc("GET "+sys+"/Bios", s.hostRoute(s.getBios))
	mux.HandleFunc("GET "+sys+"/Processors", s.hostRoute(s.listProcessors))
	mux.HandleFunc("GET "+sys+"/Processors/{id}", s.hostRoute(s.getProcessor))
	mux.HandleFunc("GET "+sys+"/Memory", s.hostRoute(s.listMemory))
	mux.HandleFunc("GET "+sys+"/Memory/{id}", s.hostRoute(s.getMemory))
	mux.HandleFunc("GET "+sys+"/EthernetInterfaces", s.hostRoute(s.listNICs))
	mux.HandleFunc("GET "+sys+"/EthernetInterfaces/{id}", s.hostRoute(s.getNIC))
	mux.HandleFunc("GET "+sys+"/Storage", s.hostRoute(s.listStorage))
	mux.HandleFunc("GET "+sys+"/Storage/{id}", s.hostRoute(s.getStorage))
	mux.HandleFunc("GET "+sys+"/Storage/{id}/Drives/{drive}", s.hostRoute(s.getDrive))
	mux.HandleFunc("GET "+sys+"/SimpleStorage", s.hostRoute(s.listSimpleStorage))
	mux.HandleFunc("GET "+sys+"/SimpleStorage/{id}", s.hostRoute(s.getSimpleStorage))

	mgr := managersPath + "/{host}"
	mux.HandleFunc("GET "+mgr, s.hostRoute(s.getManager))
	mux.HandleFunc("GET "+mgr+"/VirtualMedia", s.hostRoute(s.listVirtualMedia))
	mux.HandleFunc("GET "+mgr+"/VirtualMedia/{id}", s.hostRoute(s.getVirtualMedia))
	mux.HandleFunc("POST "+mgr+"/VirtualMedia/{id}/Actions/VirtualMedia.InsertMedia", s.hostRoute(s.insertMediaAction))
	mux.HandleFunc("POST "+mgr+"/VirtualMedia/{id}/Actions/VirtualMedia.EjectMedia", s.hostRoute(s.ejectMediaAction))

	mux.HandleFunc("/", s.authed(func(w http.ResponseWriter, r *http.Request, _ identity) {
		writeError(w, errNotFound(r.URL.Path))
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /redfish/v1/ and /redfish/v1/Systems/ are the same resources
		// without the slash.
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			r = r.Clone(r.Context())
			r.URL.Path = strings.TrimRight(p, "/")
			r.URL.RawPath = ""
		}
		mux.ServeHTTP(w, r)
	})
}

// authenticate finds who a request is: a session token, else basic
// credentials that open at least one host.
func (s *Server) authenticate(r *http.Request) (identity, *apiError) {
	if tok := r.Header.Get("X-Auth-Token"); tok != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		sess := s.sessions[tok]
		if sess == nil {
			return identity{}, errNoSession()
		}
		now := time.Now()
		if now.Sub(sess.lastUsed) > sessionTimeout {
			s.dropSession(sess)
			return identity{}, errNoSession()
		}
		sess.lastUsed = now
		return identity{key: sess.key, session: sess}, nil
	}
	if u, p, ok := r.BasicAuth(); ok {
		k := credsKey(u, p)
		if s.valid[k] {
			return identity{key: k}, nil
		}
		s.logger.Printf("basic auth refused for user %s", quoteShort(u))
		return identity{}, &apiError{status: http.StatusUnauthorized, id: "NoValidSession", msg: "the username or password is wrong"}
	}
	return identity{}, errNoSession()
}

// authed wraps a handler of a resource that is not a host's.
func (s *Server) authed(fn func(http.ResponseWriter, *http.Request, identity)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, e := s.authenticate(r)
		if e != nil {
			writeError(w, e)
			return
		}
		fn(w, r, id)
	}
}

// hostRoute wraps a handler of a host's resource: the host's faults,
// then authentication with the host's credentials.
func (s *Server) hostRoute(fn func(http.ResponseWriter, *http.Request, *hostEntry)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h := s.byName[r.PathValue("host")]
		var f Fault
		if h != nil {
			s.mu.Lock()
			f = h.st.fault
			s.mu.Unlock()
			if f.Unreachable {
				drop(w)
				return
			}
			if f.Delay > 0 {
				t := time.NewTimer(f.Delay)
				select {
				case <-t.C:
				case <-r.Context().Done():
					t.Stop()
					return
				}
			}
		}
		id, e := s.authenticate(r)
		if e != nil {
			writeError(w, e)
			return
		}
		if h == nil {
			writeError(w, errNotFound(r.URL.Path))
			return
		}
		if f.WrongCredentials || id.key != h.credsKey {
			s.logger.Printf("%s: credentials refused", h.Name)
			writeError(w, &apiError{status: http.StatusUnauthorized, id: "NoValidSession", msg: "the credentials do not open this system"})
			return
		}
		fn(w, r, h)
	}
}

// drop closes the connection without an answer, as an unreachable BMC
// would; 503 when the connection cannot be taken (HTTP/2, a recorder).
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	writeError(w, &apiError{status: http.StatusServiceUnavailable, id: "ServiceTemporarilyUnavailable", msg: "the BMC is unreachable"})
}

func (s *Server) serviceRoot(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":      rootPath + "/",
		"@odata.type":    "#ServiceRoot.v1_15_0.ServiceRoot",
		"Id":             "RootService",
		"Name":           "Root Service",
		"RedfishVersion": "1.15.0",
		"UUID":           nameUUID("redfish-emulator service root"),
		"Product":        "Airship Redfish BMC emulator",
		"Vendor":         "Airship",
		"Systems":        link(systemsPath),
		"Managers":       link(managersPath),
		"SessionService": link(sessionSvc),
		"Links":          obj{"Sessions": link(sessionsPath)},
	})
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	data, e := readBody(r)
	if e == nil {
		var user, password string
		user, password, e = decodeSession(data)
		if e == nil {
			key := credsKey(user, password)
			if !s.valid[key] {
				s.logger.Printf("session refused for user %s", quoteShort(user))
				e = &apiError{status: http.StatusUnauthorized, id: "NoValidSession", msg: "the username or password is wrong"}
			} else {
				sess := s.newSession(user, key)
				w.Header().Set("X-Auth-Token", sess.token)
				w.Header().Set("Location", sessionsPath+"/"+sess.id)
				writeJSON(w, http.StatusCreated, sessionResource(sess))
				return
			}
		}
	}
	writeError(w, e)
}

func (s *Server) newSession(user, key string) *session {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastSweep) > time.Minute {
		s.lastSweep = now
		for _, old := range s.sessions {
			if now.Sub(old.lastUsed) > sessionTimeout {
				s.dropSession(old)
			}
		}
	}
	s.nextSession++
	sess := &session{id: strconv.Itoa(s.nextSession), token: hex.EncodeToString(b), key: key, username: user, lastUsed: now}
	s.sessions[sess.token] = sess
	s.sessionIDs[sess.id] = sess
	return sess
}

// dropSession forgets a session. Called with s.mu held.
func (s *Server) dropSession(sess *session) {
	delete(s.sessions, sess.token)
	delete(s.sessionIDs, sess.id)
}

func sessionResource(sess *session) obj {
	return obj{
		"@odata.id":   sessionsPath + "/" + sess.id,
		"@odata.type": "#Session.v1_7_0.Session",
		"Id":          sess.id,
		"Name":        "User Session",
		"UserName":    sess.username,
	}
}

func (s *Server) sessionService(w http.ResponseWriter, _ *http.Request, _ identity) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":      sessionSvc,
		"@odata.type":    "#SessionService.v1_1_9.SessionService",
		"Id":             "SessionService",
		"Name":           "Session Service",
		"ServiceEnabled": true,
		"SessionTimeout": int(sessionTimeout / time.Second),
		"Sessions":       link(sessionsPath),
	})
}

// visibleSession: a client sees the sessions of its own credentials.
func (s *Server) visibleSession(idn identity, id string) *session {
	sess := s.sessionIDs[id]
	if sess == nil || sess.key != idn.key {
		return nil
	}
	return sess
}

func (s *Server) listSessions(w http.ResponseWriter, _ *http.Request, idn identity) {
	s.mu.Lock()
	var ids []int
	for _, sess := range s.sessionIDs {
		if sess.key == idn.key {
			n, _ := strconv.Atoi(sess.id)
			ids = append(ids, n)
		}
	}
	s.mu.Unlock()
	slices.Sort(ids)
	members := make([]string, len(ids))
	for i, n := range ids {
		members[i] = sessionsPath + "/" + strconv.Itoa(n)
	}
	writeJSON(w, http.StatusOK, collection(sessionsPath, "SessionCollection", "Session Collection", members))
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request, idn identity) {
	s.mu.Lock()
	sess := s.visibleSession(idn, r.PathValue("id"))
	var res obj
	if sess != nil {
		res = sessionResource(sess)
	}
	s.mu.Unlock()
	if res == nil {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request, idn identity) {
	s.mu.Lock()
	sess := s.visibleSession(idn, r.PathValue("id"))
	if sess != nil {
		s.dropSession(sess)
	}
	s.mu.Unlock()
	if sess == nil {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	noContent(w)
}

// listHosts renders the Systems or Managers collection: the hosts the
// client's credentials open.
func (s *Server) listHosts(path, odataType, name string) func(http.ResponseWriter, *http.Request, identity) {
	return func(w http.ResponseWriter, _ *http.Request, idn identity) {
		var members []string
		for _, h := range s.hosts {
			if h.credsKey == idn.key {
				members = append(members, path+"/"+h.Name)
			}
		}
		writeJSON(w, http.StatusOK, collection(path, odataType, name, members))
	}
}

func (s *Server) resetSystem(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	data, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	resetType, e := decodeReset(data)
	if e != nil {
		writeError(w, e)
		return
	}
	s.mu.Lock()
	if h.st.fault.FailResets {
		s.mu.Unlock()
		s.logger.Printf("%s: reset %s failed (injected fault)", h.Name, resetType)
		writeError(w, &apiError{status: http.StatusInternalServerError, id: "InternalError", msg: "the reset failed"})
		return
	}
	h.st.resets++
	if lag := h.st.fault.PowerLag; lag > 0 {
		s.mu.Unlock()
		s.logger.Printf("%s: reset %s accepted, applied in %s (injected fault)", h.Name, resetType, lag)
		time.AfterFunc(lag, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !s.closed {
				s.reset(h, resetType)
			}
		})
		noContent(w)
		return
	}
	s.reset(h, resetType)
	s.mu.Unlock()
	noContent(w)
}

func (s *Server) patchSystem(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	data, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	p, e := decodeBootPatch(data)
	if e != nil {
		writeError(w, e)
		return
	}
	s.mu.Lock()
	s.setBoot(h, p)
	s.mu.Unlock()
	noContent(w)
}

func (s *Server) insertMediaAction(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	if r.PathValue("id") != mediaID {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	data, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	m, e := decodeInsertMedia(data)
	if e != nil {
		writeError(w, e)
		return
	}
	s.mu.Lock()
	if h.st.media.Inserted {
		s.mu.Unlock()
		writeError(w, &apiError{status: http.StatusConflict, id: "ResourceInUse", msg: "media is already inserted; eject it first"})
		return
	}
	s.insertMedia(h, m)
	s.probeMedia(h, m)
	s.mu.Unlock()
	noContent(w)
}

func (s *Server) ejectMediaAction(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	if r.PathValue("id") != mediaID {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	data, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	if e := decodeNoParameters(data, "VirtualMedia.EjectMedia"); e != nil {
		writeError(w, e)
		return
	}
	s.mu.Lock()
	s.ejectMedia(h)
	s.mu.Unlock()
	noContent(w)
}

// Inventory resources.

func status() obj { return obj{"State": "Enabled", "Health": "OK"} }

func sysPath(h *hostEntry) string { return systemsPath + "/" + h.Name }
func mgrPath(h *hostEntry) string { return managersPath + "/" + h.Name }

func powerState(on bool) string {
	if on {
		return "On"
	}
	return "Off"
}

func (s *Server) getSystem(w http.ResponseWriter, _ *http.Request, h *hostEntry) {
	s.mu.Lock()
	on, o := h.st.power, h.st.override
	s.mu.Unlock()
	p := sysPath(h)
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":    p,
		"@odata.type":  "#ComputerSystem.v1_20_0.ComputerSystem",
		"Id":           h.Name,
		"Name":         h.Name,
		"SystemType":   "Physical",
		"Manufacturer": "Airship",
		"Model":        "Emulated Server",
		"SKU":          "EMU-1",
		"SerialNumber": h.serial,
		"HostName":     h.Name,
		"UUID":         h.uuid,
		"BiosVersion":  biosVersion,
		"PowerState":   powerState(on),
		"Status":       status(),
		"Boot": obj{
			"BootSourceOverrideTarget":                         o.Target,
			"BootSourceOverrideTarget@Redfish.AllowableValues": bootTargets,
			"BootSourceOverrideEnabled":                        o.Enabled,
			"BootSourceOverrideMode":                           o.Mode,
		},
		"ProcessorSummary": obj{
			"Count":                 1,
			"CoreCount":             h.CPUs,
			"LogicalProcessorCount": h.CPUs,
			"Model":                 h.CPUModel,
			"Status":                status(),
		},
		"MemorySummary": obj{
			"TotalSystemMemoryGiB": float64(h.MemoryMiB) / 1024,
			"Status":               status(),
		},
		"Bios":               link(p + "/Bios"),
		"Processors":         link(p + "/Processors"),
		"Memory":             link(p + "/Memory"),
		"EthernetInterfaces": link(p + "/EthernetInterfaces"),
		"Storage":            link(p + "/Storage"),
		"SimpleStorage":      link(p + "/SimpleStorage"),
		"Links":              obj{"ManagedBy": links(mgrPath(h))},
		"Actions": obj{"#ComputerSystem.Reset": obj{
			"target":                            p + "/Actions/ComputerSystem.Reset",
			"ResetType@Redfish.AllowableValues": resetTypes,
		}},
	})
}

// biosVersion is every system's BIOS version.
const biosVersion = "EMU-1.0.0"

func (s *Server) getBios(w http.ResponseWriter, _ *http.Request, h *hostEntry) {
	s.mu.Lock()
	mode := h.st.override.Mode
	s.mu.Unlock()
	if mode == "UEFI" {
		mode = "Uefi"
	} else {
		mode = "Bios"
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":         sysPath(h) + "/Bios",
		"@odata.type":       "#Bios.v1_2_0.Bios",
		"Id":                "BIOS",
		"Name":              "BIOS Configuration",
		"AttributeRegistry": "BiosAttributeRegistry.v1_0_0",
		"Attributes": obj{
			"BootMode":           mode,
			"ProcVirtualization": "Enabled",
			"SystemVersion":      biosVersion,
		},
	})
}

// Each system has one processor, CPU0, with CPUs cores of one thread.
const cpuID = "CPU0"

func (s *Server) listProcessors(w http.ResponseWriter, _ *http.Request, h *hostEntry) {
	p := sysPath(h) + "/Processors"
	writeJSON(w, http.StatusOK, collection(p, "ProcessorCollection", "Processors Collection", []string{p + "/" + cpuID}))
}

func (s *Server) getProcessor(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	if r.PathValue("id") != cpuID {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":             sysPath(h) + "/Processors/" + cpuID,
		"@odata.type":           "#Processor.v1_18_0.Processor",
		"Id":                    cpuID,
		"Name":                  "Processor",
		"Socket":                "CPU 0",
		"ProcessorType":         "CPU",
		"ProcessorArchitecture": "x86",
		"InstructionSet":        "x86-64",
		"Manufacturer":          "Airship",
		"Model":                 h.CPUModel,
		"MaxSpeedMHz":           2400,
		"OperatingSpeedMHz":     2400,
		"TotalCores":            h.CPUs,
		"TotalEnabledCores":     h.CPUs,
		"TotalThreads":          h.CPUs,
		"Status":                status(),
	})
}

// Each system has one DIMM, DIMM0, holding all its memory.
const dimmID = "DIMM0"

func (s *Server) listMemory(w http.ResponseWriter, _ *http.Request, h *hostEntry) {
	p := sysPath(h) + "/Memory"
	writeJSON(w, http.StatusOK, collection(p, "MemoryCollection", "Memory Collection", []string{p + "/" + dimmID}))
}

func (s *Server) getMemory(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	if r.PathValue("id") != dimmID {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":         sysPath(h) + "/Memory/" + dimmID,
		"@odata.type":       "#Memory.v1_17_0.Memory",
		"Id":                dimmID,
		"Name":              "DIMM 0",
		"MemoryDeviceType":  "DDR4",
		"MemoryType":        "DRAM",
		"CapacityMiB":       h.MemoryMiB,
		"OperatingSpeedMhz": 3200,
		"Manufacturer":      "Airship",
		"Status":            status(),
	})
}

func (s *Server) listNICs(w http.ResponseWriter, _ *http.Request, h *hostEntry) {
	p := sysPath(h) + "/EthernetInterfaces"
	members := make([]string, len(h.NICs))
	for i, n := range h.NICs {
		members[i] = p + "/" + n.Name
	}
	writeJSON(w, http.StatusOK, collection(p, "EthernetInterfaceCollection", "Ethernet Interface Collection", members))
}

func (s *Server) getNIC(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	i := slices.IndexFunc(h.NICs, func(n NIC) bool { return n.Name == r.PathValue("id") })
	if i < 0 {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	n := h.NICs[i]
	res := obj{
		"@odata.id":           sysPath(h) + "/EthernetInterfaces/" + n.Name,
		"@odata.type":         "#EthernetInterface.v1_12_0.EthernetInterface",
		"Id":                  n.Name,
		"Name":                n.Name,
		"Description":         fmt.Sprintf("Ethernet interface %d", i),
		"MACAddress":          n.MAC,
		"PermanentMACAddress": n.MAC,
		"SpeedMbps":           n.SpeedGbps * 1000,
		"FullDuplex":          true,
		"AutoNeg":             true,
		"LinkStatus":          "LinkUp",
		"InterfaceEnabled":    true,
		"Status":              status(),
		"IPv4Addresses":       []obj{},
		"IPv6Addresses":       []obj{},
	}
	if n.IP != "" {
		if p, err := parseIP(n.IP); err == nil {
			a := p.Addr()
			if a.Is4() {
				res["IPv4Addresses"] = []obj{{"Address": a.String(), "SubnetMask": netmask(p.Bits()), "AddressOrigin": "Static"}}
			} else {
				res["IPv6Addresses"] = []obj{{"Address": a.String(), "PrefixLength": p.Bits(), "AddressOrigin": "Static"}}
			}
		}
	}
	writeJSON(w, http.StatusOK, res)
}

// netmask writes an IPv4 prefix length as a dotted mask.
func netmask(bits int) string {
	m := uint32(0)
	if bits > 0 {
		m = ^uint32(0) << (32 - bits)
	}
	return fmt.Sprintf("%d.%d.%d.%d", m>>24, m>>16&0xff, m>>8&0xff, m&0xff)
}

// Each system has one storage subsystem, "1", holding all its drives.
const storageID = "1"

func (s *Server) listStorage(w http.ResponseWriter, _ *http.Request, h *hostEntry) {
	p := sysPath(h) + "/Storage"
	writeJSON(w, http.StatusOK, collection(p, "StorageCollection", "Storage Collection", []string{p + "/" + storageID}))
}

func (s *Server) getStorage(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	if r.PathValue("id") != storageID {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	p := sysPath(h) + "/Storage/" + storageID
	drives := make([]string, len(h.Disks))
	for i, d := range h.Disks {
		drives[i] = p + "/Drives/" + d.Name
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":          p,
		"@odata.type":        "#Storage.v1_15_0.Storage",
		"Id":                 storageID,
		"Name":               "Storage Controller",
		"Status":             status(),
		"Drives":             links(drives...),
		"Drives@odata.count": len(drives),
	})
}

func (s *Server) getDrive(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	i := slices.IndexFunc(h.Disks, func(d Disk) bool { return d.Name == r.PathValue("drive") })
	if r.PathValue("id") != storageID || i < 0 {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	d := h.Disks[i]
	res := obj{
		"@odata.id":     sysPath(h) + "/Storage/" + storageID + "/Drives/" + d.Name,
		"@odata.type":   "#Drive.v1_17_0.Drive",
		"Id":            d.Name,
		"Name":          d.Name,
		"Model":         d.Model,
		"SerialNumber":  d.Serial,
		"Manufacturer":  "Airship",
		"CapacityBytes": int64(d.SizeGiB) << 30,
		"Protocol":      "SATA",
		"MediaType":     "SSD",
		"Status":        status(),
	}
	if d.Rotational {
		res["MediaType"] = "HDD"
		res["RotationSpeedRPM"] = 7200
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) listSimpleStorage(w http.ResponseWriter, _ *http.Request, h *hostEntry) {
	p := sysPath(h) + "/SimpleStorage"
	writeJSON(w, http.StatusOK, collection(p, "SimpleStorageCollection", "Simple Storage Collection", []string{p + "/" + storageID}))
}

func (s *Server) getSimpleStorage(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	if r.PathValue("id") != storageID {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	devices := make([]obj, len(h.Disks))
	for i, d := range h.Disks {
		devices[i] = obj{"Name": d.Name, "Model": d.Model, "Manufacturer": "Airship", "CapacityBytes": int64(d.SizeGiB) << 30, "Status": status()}
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":   sysPath(h) + "/SimpleStorage/" + storageID,
		"@odata.type": "#SimpleStorage.v1_3_1.SimpleStorage",
		"Id":          storageID,
		"Name":        "Simple Storage Controller",
		"Devices":     devices,
		"Status":      status(),
	})
}

func (s *Server) getManager(w http.ResponseWriter, _ *http.Request, h *hostEntry) {
	p := mgrPath(h)
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":       p,
		"@odata.type":     "#Manager.v1_17_0.Manager",
		"Id":              h.Name,
		"Name":            "BMC of " + h.Name,
		"ManagerType":     "BMC",
		"Manufacturer":    "Airship",
		"Model":           "Emulated BMC",
		"FirmwareVersion": "redfish-emulator",
		"UUID":            nameUUID("bmc/" + h.Name),
		"PowerState":      "On",
		"Status":          status(),
		"VirtualMedia":    link(p + "/VirtualMedia"),
		"Links":           obj{"ManagerForServers": links(sysPath(h))},
	})
}

func (s *Server) listVirtualMedia(w http.ResponseWriter, _ *http.Request, h *hostEntry) {
	p := mgrPath(h) + "/VirtualMedia"
	writeJSON(w, http.StatusOK, collection(p, "VirtualMediaCollection", "Virtual Media Services", []string{p + "/" + mediaID}))
}

func (s *Server) getVirtualMedia(w http.ResponseWriter, r *http.Request, h *hostEntry) {
	if r.PathValue("id") != mediaID {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	s.mu.Lock()
	m := h.st.media
	s.mu.Unlock()
	p := mgrPath(h) + "/VirtualMedia/" + mediaID
	res := obj{
		"@odata.id":      p,
		"@odata.type":    "#VirtualMedia.v1_6_0.VirtualMedia",
		"Id":             mediaID,
		"Name":           "Virtual CD",
		"MediaTypes":     mediaTypes,
		"Inserted":       m.Inserted,
		"WriteProtected": m.WriteProtected,
		"ConnectedVia":   "NotConnected",
		"Image":          nil,
		"ImageName":      nil,
		"Actions": obj{
			"#VirtualMedia.InsertMedia": obj{"target": p + "/Actions/VirtualMedia.InsertMedia"},
			"#VirtualMedia.EjectMedia":  obj{"target": p + "/Actions/VirtualMedia.EjectMedia"},
		},
	}
	if m.Image != "" {
		// Shown without user information, which may hold a password.
		image := m.Image
		if u, err := url.Parse(m.Image); err == nil {
			u.User = nil
			image = u.String()
			res["ImageName"] = path.Base(u.Path)
		}
		res["Image"] = image
		res["ConnectedVia"] = "URI"
		res["TransferMethod"] = m.TransferMethod
	}
	writeJSON(w, http.StatusOK, res)
}
