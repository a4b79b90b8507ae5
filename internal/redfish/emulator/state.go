package emulator

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
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
	// provisioned: the host booted from media and was not deprovisioned
	// since; node is its Node.
	provisioned bool
	// ejectedSinceOn: media was ejected since the host last powered on.
	// A power-off request then deprovisions a provisioned host.
	ejectedSinceOn bool
	// mediaBooted: the inserted media is what the host last booted from.
	// Ejecting it while the host is off deprovisions the host.
	mediaBooted bool
	node        nodeWant
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

// nodeWant is the Node a host should have in the target cluster.
type nodeWant struct {
	state      nodeState
	name       string
	providerID string
	labels     map[string]string
	ip         string
	// stale are Nodes of earlier provisionings to delete.
	stale []string
}

// Reset types the systems accept.
var resetTypes = []string{"On", "ForceOff", "GracefulShutdown", "ForceRestart", "GracefulRestart"}

// reset applies an accepted ComputerSystem.Reset. Called with s.mu held.
func (s *Server) reset(h *hostEntry, resetType string) {
	st := &h.st
	st.resets++
	switch resetType {
	case "On":
		if !st.power {
			s.powerOn(h)
		}
	case "ForceOff", "GracefulShutdown":
		deprovision := st.provisioned && st.ejectedSinceOn && !st.media.Inserted
		if st.power {
			s.powerOff(h)
		}
		if deprovision {
			s.deprovision(h, "media ejected, then a power-off request")
		}
	case "ForceRestart", "GracefulRestart":
		if st.power {
			s.powerOff(h)
		}
		s.powerOn(h)
	}
}

// powerOn turns a host on and starts its boot: from the virtual CD when
// media is inserted, else from disk, which boots only a provisioned host.
func (s *Server) powerOn(h *hostEntry) {
	st := &h.st
	st.power = true
	st.gen++
	st.booted, st.bootedFrom = false, ""
	st.ejectedSinceOn = false
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
	if source == "Cd" || (source == "Hdd" && st.provisioned) {
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
	st.booted, st.bootedFrom = true, source
	if source == "Cd" {
		want := s.nodeFromMedia(h)
		if st.node.name != "" && st.node.name != want.name {
			want.stale = append(want.stale, st.node.name)
		}
		want.stale = append(append([]string(nil), st.node.stale...), want.stale...)
		st.node = want
		st.provisioned = true
		st.mediaBooted = true
	}
	st.node.state = nodeReady
	s.logger.Printf("%s: booted from %s; Node %s", h.Name, source, st.node.name)
	s.syncNode(h)
}

// powerOff turns a host off: its Node, if it has one, goes NotReady.
func (s *Server) powerOff(h *hostEntry) {
	st := &h.st
	st.power = false
	st.gen++
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

// deprovision forgets a host's provisioning and deletes its Node. It
// happens when media was ejected and then the host was told to power off,
// or when the media a host that is off booted from was ejected (a
// provisioner sends no power-off request to a host already off); why says
// which.
func (s *Server) deprovision(h *hostEntry, why string) {
	st := &h.st
	st.provisioned = false
	st.node.state = nodeAbsent
	s.logger.Printf("%s: deprovisioned (%s); deleting Node %s", h.Name, why, st.node.name)
	s.syncNode(h)
}

// insertMedia records inserted media. Called with s.mu held.
func (s *Server) insertMedia(h *hostEntry, m Media) {
	h.st.media = m
	h.st.mediaBooted = false
	s.logger.Printf("%s: media inserted: %s (format %q, checksum type %q, user-data %d bytes, network-data %d bytes, meta-data %d bytes)",
		h.Name, redactURL(m.Image), m.Format, m.ChecksumType, len(m.UserData), len(m.NetworkData), len(m.MetaData))
}

// ejectMedia empties the virtual CD. Ejecting the media a provisioned
// host that is off booted from deprovisions it; on a host that is on, it
// only makes the next power-off request do so. Called with s.mu held.
func (s *Server) ejectMedia(h *hostEntry) {
	st := &h.st
	was, booted := st.media.Inserted, st.mediaBooted
	st.media = Media{}
	st.mediaBooted = false
	st.ejectedSinceOn = true
	if was {
		s.logger.Printf("%s: media ejected", h.Name)
	}
	if was && booted && !st.power && st.provisioned {
		s.deprovision(h, "the media it booted from ejected while off")
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

// syncNode hands the host to the Node syncer, if there is a target cluster.
func (s *Server) syncNode(h *hostEntry) {
	if s.nodes != nil {
		s.nodes.enqueue(h.Name)
	}
}

// nodeFromMedia is the Node the inserted media's meta-data asks for:
// name from local-hostname (or local_hostname; else the host's name),
// spec.providerID from providerid (or provider-id), labels from labels,
// InternalIP from the first NIC's IP.
func (s *Server) nodeFromMedia(h *hostEntry) nodeWant {
	want := nodeWant{name: h.Name}
	for _, n := range h.NICs {
		if n.IP != "" {
			if p, err := parseIP(n.IP); err == nil {
				want.ip = p.Addr().String()
			}
			break
		}
	}
	md := map[string]any{}
	if len(h.st.media.MetaData) > 0 {
		if err := yaml.Unmarshal(h.st.media.MetaData, &md); err != nil {
			s.logger.Printf("%s: meta-data is neither JSON nor YAML, ignored (%d bytes)", h.Name, len(h.st.media.MetaData))
			md = map[string]any{}
		}
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := md[k].(string); ok && v != "" {
				return v
			}
		}
		return ""
	}
	if name := strings.ToLower(str("local-hostname", "local_hostname")); name != "" {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			s.logger.Printf("%s: meta-data local-hostname %q is not a Node name (%s); using %s", h.Name, name, strings.Join(msgs, "; "), h.Name)
		} else {
			want.name = name
		}
	}
	want.providerID = str("providerid", "provider-id", "providerID")
	if raw, ok := md["labels"].(map[string]any); ok {
		want.labels = map[string]string{}
		for k, v := range raw {
			val := fmt.Sprint(v)
			if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(val)) > 0 {
				s.logger.Printf("%s: meta-data label %q ignored: not a valid label", h.Name, k)
				continue
			}
			want.labels[k] = val
		}
	}
	if want.ip != "" {
		if _, err := netip.ParseAddr(want.ip); err != nil {
			want.ip = ""
		}
	}
	return want
}
