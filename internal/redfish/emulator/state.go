package emulator

import (
	"time"

	"github.com/airshipit/airship-go/internal/ipaagent"

	"github.com/airshipit/airship-go/internal/redact"
)

// hostStatus is a host's mutable state, guarded by Server.mu.
type hostStatus struct {
	power      bool
	override   BootOverride
	media      Media
	booted     bool
	bootedFrom string
	resets     int
	fault      Fault
	// gen counts power transitions; a boot timer of an older one is stale.
	gen   uint64
	timer *time.Timer
	// provisioned: the host booted from a config drive (a disk's or a
	// live ISO's) and its Node was not deleted since; node is its Node.
	provisioned bool
	node        nodeWant
	// nodeDisk names the disk whose config drive node came from; "" for
	// a Node of a live ISO.
	nodeDisk string
	// probe is the fetch of the inserted media (nil: not fetched);
	// waitProbe is the power generation of a boot waiting for it.
	probe     *mediaProbe
	waitProbe uint64
	// agent is the deploy agent of a host that booted a deploy ISO.
	agent *ipaagent.Agent
	// apiWant is the API server port the host should serve
	// (Options.HostAPIServers); apiWorker: runAPIPort runs for the host.
	apiWant   apiForward
	apiWorker bool
}

// nodeState is what a host's Node should be.
type nodeState int

const (
	nodeNone     nodeState = iota // nothing to do
	nodeReady                     // exists, managed by kwok
	nodeNotReady                  // exists, not managed by kwok, Ready False
	nodeAbsent                    // deleted
)

func (n nodeState) String() string {
	return [...]string{"none", "ready", "not ready", "absent"}[n]
}

// nodeWant is the Node a host should have.
type nodeWant struct {
	state nodeState
	// cluster is the API server URL of the cluster the host's user-data
	// named; empty for the target cluster (Server.target, maybe none).
	cluster    string
	name       string
	providerID string
	labels     map[string]string
	ip         string
	// kubeadmConfig is the ClusterConfiguration a kubeadm init uploads
	// as kube-system/kubeadm-config; nil for a join.
	kubeadmConfig []byte
	// stale are Nodes of earlier provisionings to delete.
	stale []nodeRef
}

// nodeRef is a Node in a cluster (as nodeWant.cluster).
type nodeRef struct {
	cluster, name string
}

// Reset types the systems accept.
var resetTypes = []string{"On", "ForceOff", "GracefulShutdown", "ForceRestart", "GracefulRestart"}

// reset applies an accepted ComputerSystem.Reset (the request counted it).
// Called with s.mu held.
func (s *Server) reset(h *hostEntry, resetType string) {
	st := &h.st
	switch resetType {
	case "On":
		if !st.power {
			s.powerOn(h)
		}
	case "ForceOff", "GracefulShutdown":
		if st.power {
			s.powerOff(h)
		}
	case "ForceRestart", "GracefulRestart":
		if st.power {
			s.powerOff(h)
		}
		s.powerOn(h)
	}
}

// powerOn turns a host on and starts its boot: from the virtual CD when
// media is inserted, else from disk, which boots only a disk holding a
// config drive.
func (s *Server) powerOn(h *hostEntry) {
	st := &h.st
	st.power = true
	st.gen++
	st.booted, st.bootedFrom = false, ""
	s.setAPIForward(h, apiForward{})
	source := "Hdd"
	switch {
	case st.media.Inserted:
		source = "Cd"
	case st.override.Enabled != "Disabled" && st.override.Target == "Pxe":
		source = "Pxe"
	case st.override.Enabled != "Disabled" && st.override.Target == "Cd":
		source = "" // an empty CD drive boots nothing
	}
	if st.override.Enabled == "Once" {
		st.override.Enabled = "Disabled"
	}
	s.logger.Printf("%s: power on (boot source %s)", h.Name, sourceName(source))
	if source == "Cd" || source == "Hdd" {
		gen := st.gen
		if s.cfg.BootDelay <= 0 {
			s.finishBoot(h, gen, source)
			return
		}
		st.timer = time.AfterFunc(s.cfg.BootDelay, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.finishBoot(h, gen, source)
		})
	}
}

func sourceName(source string) string {
	switch source {
	case "":
		return "empty CD drive, nothing to boot"
	case "Pxe":
		return "Pxe, no PXE server, nothing to boot"
	case "Hdd":
		return "Hdd"
	}
	return source
}

// finishBoot marks a host booted unless it was turned off or on again
// since the boot began. Called with s.mu held.
func (s *Server) finishBoot(h *hostEntry, gen uint64, source string) {
	st := &h.st
	if s.closed || st.gen != gen || !st.power {
		return
	}
	st.timer = nil
	switch {
	case source == "Cd" && st.probe != nil && !st.probe.done:
		// The media is still being fetched: its end finishes the boot.
		st.waitProbe = gen
		return
	case source == "Cd" && st.probe != nil && st.probe.apiURL != "":
		st.booted, st.bootedFrom = true, source
		s.logger.Printf("%s: booted the deploy ISO from Cd", h.Name)
		s.startAgent(h, st.probe.apiURL)
		return
	case source == "Cd" && (st.probe == nil || st.probe.drive == nil):
		st.booted, st.bootedFrom = true, source
		s.logger.Printf("%s: booted the live ISO from Cd; it is no config drive: no Node", h.Name)
		return
	case source == "Cd":
		s.setNode(h, s.nodeFromDrive(h, st.probe.drive))
		st.nodeDisk = ""
		s.logger.Printf("%s: the live ISO is a config drive", h.Name)
		s.apiBoot(h, st.probe.drive)
	default:
		db := s.readDiskBoot(h)
		if db == nil {
			s.logger.Printf("%s: no disk holds a config drive; nothing to boot", h.Name)
			return
		}
		d := readDriveData(db.data)
		s.setNode(h, s.nodeFromDrive(h, d))
		st.nodeDisk = db.disk
		s.logger.Printf("%s: disk %s holds a config drive", h.Name, db.disk)
		s.apiBoot(h, d)
	}
	st.booted, st.bootedFrom = true, source
	st.node.state = nodeReady
	if st.node.cluster == "" && s.target == nil {
		s.logger.Printf("%s: booted from %s; no Node, no cluster", h.Name, source)
	} else {
		s.logger.Printf("%s: booted from %s; Node %s in %s", h.Name, source, st.node.name, s.clusterName(st.node.cluster))
	}
	s.syncNode(h)
}

// setNode makes want the host's Node, the previous one stale when it
// differs, and the host provisioned. Called with s.mu held.
func (s *Server) setNode(h *hostEntry, want nodeWant) {
	st := &h.st
	want.stale = append([]nodeRef(nil), st.node.stale...)
	if old := st.node; old.name != "" && (old.name != want.name || old.cluster != want.cluster) {
		want.stale = append(want.stale, nodeRef{cluster: old.cluster, name: old.name})
	}
	st.node = want
	st.provisioned = true
}

// powerOff turns a host off: its Node, if it has one, goes NotReady; its
// deploy agent and API server port stop.
func (s *Server) powerOff(h *hostEntry) {
	st := &h.st
	st.power = false
	st.gen++
	st.waitProbe = 0
	s.stopAgent(h)
	s.setAPIForward(h, apiForward{})
	st.booted, st.bootedFrom = false, ""
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	s.logger.Printf("%s: power off", h.Name)
	if st.provisioned {
		st.node.state = nodeNotReady
		s.syncNode(h)
	}
}

// deprovision forgets a host's provisioning and deletes its Node: the
// deploy agent wrote or erased a disk (see diskChanged); why says which.
func (s *Server) deprovision(h *hostEntry, why string) {
	st := &h.st
	st.provisioned = false
	st.nodeDisk = ""
	st.node.state = nodeAbsent
	s.setAPIForward(h, apiForward{})
	s.logger.Printf("%s: deprovisioned (%s); deleting Node %s", h.Name, why, st.node.name)
	s.syncNode(h)
}

// insertMedia records inserted media. Called with s.mu held.
func (s *Server) insertMedia(h *hostEntry, m Media) {
	h.st.media = m
	s.logger.Printf("%s: media inserted: %s", h.Name, redact.URL(m.Image))
}

// ejectMedia empties the virtual CD; the Node, if any, stays. Called
// with s.mu held.
func (s *Server) ejectMedia(h *hostEntry) {
	st := &h.st
	was := st.media.Inserted
	st.media = Media{}
	st.probe = nil
	if was {
		s.logger.Printf("%s: media ejected", h.Name)
	}
}

// setBoot applies a PATCH of Boot. Called with s.mu held.
func (s *Server) setBoot(h *hostEntry, p bootPatch) {
	o := &h.st.override
	if p.Target != nil {
		o.Target = *p.Target
	}
	if p.Enabled != nil {
		o.Enabled = *p.Enabled
	}
	if p.Mode != nil {
		o.Mode = *p.Mode
	}
	s.logger.Printf("%s: boot override %s %s (%s)", h.Name, o.Target, o.Enabled, o.Mode)
}

// syncNode hands the host to the Node syncer.
func (s *Server) syncNode(h *hostEntry) {
	s.nodes.enqueue(h.Name)
}
