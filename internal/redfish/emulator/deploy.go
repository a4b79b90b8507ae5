package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/ipaagent"
	"github.com/airshipit/airship-go/internal/redact"
)

// Media the emulator fetches to see whether it is a deploy ISO.
const (
	// MaxMediaSize caps a fetched virtual media image.
	MaxMediaSize = 64 << 20
	// mediaTimeout bounds its download.
	mediaTimeout = 30 * time.Second
	// APIURLParam is the kernel parameter of a deploy ISO naming Ironic's
	// API (the contract with the builder of the deploy ISO).
	APIURLParam = "ipa-api-url"
)

// bootConfigs are where a deploy ISO's kernel command line is looked for.
var bootConfigs = []string{"boot/grub/grub.cfg", "EFI/BOOT/grub.cfg", "isolinux/isolinux.cfg"}

// mediaProbe is the fetch of inserted media: done once it ended; apiURL
// is the ipa-api-url of a deploy ISO; drive what the host makes of a live
// ISO that is a config drive; both empty for any other media.
type mediaProbe struct {
	done   bool
	apiURL string
	drive  *driveData
}

// mediaFound is what a fetch of media found: the ipa-api-url of a deploy
// ISO, or the content of a config drive.
type mediaFound struct {
	apiURL string
	drive  *configdrive.Data
}

// probeMedia fetches newly inserted media (an http or https URL) to see
// whether it is a deploy ISO or a config drive, and then finishes a boot
// that waited for it. Called with s.mu held.
func (s *Server) probeMedia(h *hostEntry, m Media) {
	u, err := url.Parse(m.Image)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return
	}
	p := &mediaProbe{}
	h.st.probe = p
	go func() {
		found, why := s.media.fetch(s.ctx, m.Image, s.fetchMedia)
		var drive *driveData
		if found.drive != nil {
			// Outside the lock: user-data may be megabytes of YAML.
			drive = readDriveData(*found.drive)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		p.done, p.apiURL, p.drive = true, found.apiURL, drive
		switch {
		case found.apiURL != "":
			s.logger.Printf("%s: media %s is a deploy ISO (%s %s)", h.Name, redact.URL(m.Image), APIURLParam, found.apiURL)
		case drive != nil:
			s.logger.Printf("%s: media %s is a live ISO holding a config drive", h.Name, redact.URL(m.Image))
		case why != "":
			s.logger.Printf("%s: media %s: neither a deploy ISO nor a config drive: %s", h.Name, redact.URL(m.Image), why)
		}
		st := &h.st
		if st.probe == p && st.waitProbe != 0 && st.waitProbe == st.gen {
			st.waitProbe = 0
			s.finishBoot(h, st.gen, "Cd")
		}
	}()
}

// mediaCacheTTL is how long what a media URL held is remembered: the
// hosts Ironic gives one deploy ISO fetch it once.
const mediaCacheTTL = 30 * time.Second

// mediaCache remembers, per media URL, what its fetch found; a fetch
// under way is waited for, a failed one is not remembered.
type mediaCache struct {
	mu      sync.Mutex
	fetches map[string]*mediaFetch
}

type mediaFetch struct {
	done   chan struct{}
	found  mediaFound
	why    string
	failed bool
	at     time.Time
}

func (f *mediaFetch) usable() bool {
	select {
	case <-f.done:
		return !f.failed && time.Since(f.at) < mediaCacheTTL
	default:
		return true // under way
	}
}

// fetch returns what fetch found at image, fetching it at most once at a
// time and once per mediaCacheTTL.
func (c *mediaCache) fetch(ctx context.Context, image string, fetch func(string) (mediaFound, string, bool)) (mediaFound, string) {
	c.mu.Lock()
	f := c.fetches[image]
	if f == nil || !f.usable() {
		if c.fetches == nil {
			c.fetches = map[string]*mediaFetch{}
		}
		for k, old := range c.fetches {
			if !old.usable() {
				delete(c.fetches, k)
			}
		}
		f = &mediaFetch{done: make(chan struct{})}
		c.fetches[image] = f
		c.mu.Unlock()
		f.found, f.why, f.failed = fetch(image)
		f.at = time.Now()
		close(f.done)
		return f.found, f.why
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.found, f.why
	case <-ctx.Done():
		return mediaFound{}, "the emulator stopped"
	}
}

// fetchMedia downloads media and tells what it is (examineMedia); else
// why not, and whether the fetch itself failed (not to be remembered).
func (s *Server) fetchMedia(image string) (found mediaFound, why string, failed bool) {
	ctx, cancel := context.WithTimeout(s.ctx, mediaTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, image, nil)
	if err != nil {
		return mediaFound{}, "bad URL", false
	}
	resp, err := s.mediaClient.Do(req)
	if err != nil {
		return mediaFound{}, "fetching it failed: " + redact.Text(strings.ReplaceAll(err.Error(), image, redact.URL(image))), true
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return mediaFound{}, "fetching it: " + resp.Status, true
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxMediaSize+1))
	if err != nil {
		return mediaFound{}, fmt.Sprintf("reading it: %v", err), true
	}
	if len(data) > MaxMediaSize {
		return mediaFound{}, fmt.Sprintf("more than %d MiB", MaxMediaSize>>20), false
	}
	found, why = examineMedia(data)
	return found, why, false
}

// examineMedia tells a config drive (an ISO 9660 image labelled config-2:
// its content) from a deploy ISO (the ipa-api-url of its boot
// configuration); else why it is neither. The content of a config drive
// is never quoted.
func examineMedia(data []byte) (mediaFound, string) {
	r, size := bytes.NewReader(data), int64(len(data))
	switch configdrive.VolumeLabel(r, size) {
	case "":
		return mediaFound{}, "not an ISO 9660 image"
	case configdrive.Label:
		d, err := configdrive.Read(r, size)
		if err != nil {
			return mediaFound{}, err.Error()
		}
		return mediaFound{drive: &d}, ""
	}
	for _, name := range bootConfigs {
		cfg, err := configdrive.ReadISOFile(r, size, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return mediaFound{}, err.Error()
		}
		if u := kernelParam(string(cfg), APIURLParam); u != "" {
			return mediaFound{apiURL: u}, ""
		}
	}
	return mediaFound{}, "no " + APIURLParam + " in its boot configuration"
}

// kernelParam finds key=value among the space-separated tokens of a boot
// configuration's lines.
func kernelParam(cfg, key string) string {
	for _, line := range strings.Split(cfg, "\n") {
		for _, tok := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(tok, key+"="); ok && v != "" {
				return strings.Trim(v, `"'`)
			}
		}
	}
	return ""
}

// startAgent runs the deploy agent of a host that booted a deploy ISO,
// until the host powers off. Called with s.mu held.
func (s *Server) startAgent(h *hostEntry, apiURL string) {
	disks, err := s.agentDisks(h)
	if err != nil {
		s.logger.Printf("%s: deploy agent not started: %v", h.Name, err)
		return
	}
	macs := make([]string, len(h.NICs))
	for i, n := range h.NICs {
		macs[i] = n.MAC
	}
	gen := h.st.gen
	name := h.Name
	cfg := ipaagent.Config{
		APIURL: apiURL, MACs: macs, Disks: disks, NoHeartbeat: h.st.fault.NoHeartbeat,
		HTTPClient: s.agentClient, HeartbeatInterval: s.opts.HeartbeatInterval,
		Logf:        func(format string, args ...any) { s.logger.Printf("%s: agent: %s", name, fmt.Sprintf(format, args...)) },
		PowerOff:    func() { s.agentPower(h, gen, false) },
		Reboot:      func() { s.agentPower(h, gen, true) },
		DiskChanged: func(disk string) { s.diskChanged(h, disk) },
	}
	a, err := ipaagent.Start(s.ctx, cfg)
	if err != nil {
		s.logger.Printf("%s: deploy agent not started: %v", h.Name, err)
		return
	}
	h.st.agent = a
	s.logger.Printf("%s: deploy agent for %s serving at %s", h.Name, redact.URL(apiURL), a.URL())
}

// stopAgent stops a host's agent, if any, without waiting under s.mu.
// Called with s.mu held.
func (s *Server) stopAgent(h *hostEntry) {
	if a := h.st.agent; a != nil {
		h.st.agent = nil
		go a.Stop()
	}
}

// agentPower powers the host off (or reboots it), as the agent's
// power_off or run_image command asks, if the host still runs that boot.
func (s *Server) agentPower(h *hostEntry, gen uint64, reboot bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.st.gen != gen || !h.st.power {
		return
	}
	s.logger.Printf("%s: the deploy agent powers the host off", h.Name)
	s.powerOff(h)
	if reboot {
		s.powerOn(h)
	}
}

// diskChanged deletes the Node a host booted from a disk the agent wrote
// or erased (a Node of a live ISO goes with any disk written).
func (s *Server) diskChanged(h *hostEntry, disk string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &h.st
	if st.provisioned && (st.nodeDisk == "" || st.nodeDisk == disk) {
		s.deprovision(h, "disk "+disk+" erased or overwritten")
	}
}

// newMediaClient is the bounded client fetching media.
func newMediaClient() *http.Client {
	return httplimit.NewClient(httplimit.ClientOptions{Timeout: mediaTimeout, MaxResponseBytes: MaxMediaSize + 1})
}
