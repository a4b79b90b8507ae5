package direct

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"k8s.io/utils/clock"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// Defaults of Options.
const (
	// DefaultPowerTimeout is how long a power request is taken as in
	// flight while the BMC reports the old state.
	DefaultPowerTimeout = 2 * time.Minute
	// DefaultPowerRetries is how many times a power request is sent
	// again after it timed out, before the transition fails.
	DefaultPowerRetries = 2
	// DefaultPollInterval is when to look again at a power request in
	// flight.
	DefaultPollInterval = 2 * time.Second
)

// Options tune the direct provisioner.
type Options struct {
	// PowerTimeout is how long a power request is in flight before the
	// same request is sent again; 0 is DefaultPowerTimeout.
	PowerTimeout time.Duration
	// PowerRetries is how many times a request is sent again after a
	// timeout before the transition fails with ErrPowerTimeout; 0 is
	// DefaultPowerRetries, a negative value none.
	PowerRetries int
	// PollInterval is the RequeueAfter of a Dirty power result; 0 is
	// DefaultPollInterval.
	PollInterval time.Duration
	// Clock times the power requests; nil is the real clock.
	Clock clock.PassiveClock
}

// New returns the direct lifecycle Factory over bmcs, with the default
// Options.
func New(bmcs provisioner.BMCFactory) provisioner.Factory {
	return NewWithOptions(bmcs, Options{})
}

// NewWithOptions returns the direct lifecycle Factory over bmcs.
func NewWithOptions(bmcs provisioner.BMCFactory, o Options) provisioner.Factory {
	if o.PowerTimeout <= 0 {
		o.PowerTimeout = DefaultPowerTimeout
	}
	switch {
	case o.PowerRetries == 0:
		o.PowerRetries = DefaultPowerRetries
	case o.PowerRetries < 0:
		o.PowerRetries = 0
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &factory{bmcs: bmcs, o: o, hosts: map[string]*hostMemory{}}
}

// powerRequest is a power request sent and not yet seen done.
type powerRequest struct {
	target provisioner.PowerState
	// force is a power-off's, sent again as it was.
	force bool
	// first and last are when the first and the latest request went.
	first, last time.Time
	// sent counts the requests of this transition, refused counts those
	// the BMC refused as it was still at it.
	sent, refused int
}

// hostMemory is what the factory remembers of a host between passes, in
// memory only.
type hostMemory struct {
	// power is the request in flight, nil when none.
	power *powerRequest
	// booted is the URL of the image Boot was sent for since the host was
	// last deprovisioned.
	booted string
}

type factory struct {
	bmcs provisioner.BMCFactory
	o    Options

	mu    sync.Mutex
	hosts map[string]*hostMemory
}

// Open opens the host's BMC.
func (f *factory) Open(ctx context.Context, h provisioner.Host) (provisioner.Provisioner, error) {
	b, err := f.bmcs.Open(ctx, h.BMC)
	if err != nil {
		return nil, err
	}
	key := h.UID
	if key == "" {
		key = h.Namespace + "/" + h.Name
	}
	return &direct{f: f, bmc: b, host: h, key: key}, nil
}

// update runs fn on key's memory under the lock; an empty memory is
// forgotten.
func (f *factory) update(key string, fn func(m *hostMemory)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.hosts[key]
	if m == nil {
		m = &hostMemory{}
	}
	fn(m)
	if m.power == nil && m.booted == "" {
		delete(f.hosts, key)
		return
	}
	f.hosts[key] = m
}

// memory is a copy of key's memory.
func (f *factory) memory(key string) hostMemory {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.hosts[key]
	if m == nil {
		return hostMemory{}
	}
	c := *m
	if m.power != nil {
		p := *m.power
		c.power = &p
	}
	return c
}

// sent records a request for target: a new transition, or the same one
// sent again.
func (f *factory) sent(key string, target provisioner.PowerState, force, refused bool) {
	now := f.o.Clock.Now()
	f.update(key, func(m *hostMemory) {
		if m.power == nil || m.power.target != target {
			m.power = &powerRequest{target: target, first: now}
		}
		m.power.force, m.power.last = force, now
		m.power.sent++
		if refused {
			m.power.refused++
		}
	})
}

// settled forgets the power request of key.
func (f *factory) settled(key string) {
	f.update(key, func(m *hostMemory) { m.power = nil })
}

// forget forgets all of key.
func (f *factory) forget(key string) {
	f.update(key, func(m *hostMemory) { *m = hostMemory{} })
}

// direct is one host's lifecycle over its BMC.
type direct struct {
	f    *factory
	bmc  provisioner.BMC
	host provisioner.Host
	key  string
}

var _ provisioner.Provisioner = (*direct)(nil)

// Register checks new or changed credentials with the BMC. The id is the
// host's UID: there is no engine record.
func (d *direct) Register(ctx context.Context, r provisioner.RegisterData) (provisioner.Result, string, error) {
	if r.CredentialsChanged {
		if err := d.bmc.Register(ctx); err != nil {
			return provisioner.Result{}, "", err
		}
	}
	return provisioner.Result{}, d.host.UID, nil
}

// Inspect reads the inventory from the BMC, every time it is asked.
func (d *direct) Inspect(ctx context.Context, _ provisioner.InspectData) (provisioner.Result, *metal3v1alpha1.HardwareDetails, error) {
	hw, err := d.bmc.Inspect(ctx)
	if err != nil {
		return provisioner.Result{}, nil, err
	}
	return provisioner.Result{}, hw, nil
}

// Prepare has nothing to apply: root device hints, RAID and firmware
// settings need a deploy ramdisk or an engine, and there is neither. The
// controller records the hints and boot mode in the status as given.
func (d *direct) Prepare(context.Context, provisioner.PrepareData) (provisioner.Result, error) {
	return provisioner.Result{}, nil
}

// errNothingToProvision: Provision was asked for with neither an image
// nor a custom deploy.
var errNothingToProvision = errors.New("neither spec.image nor spec.customDeploy is set")

// LiveISO is the spec.image.format of an ISO booted from virtual media.
const LiveISO = "live-iso"

// ErrDiskImage: spec.image is a disk image, which only an engine's
// deploy ramdisk can write to a disk; the message names the field and
// why.
var ErrDiskImage = errors.New("spec.image: a disk image needs Ironic to be written to the host's disk; " +
	"this metal3-operator has no --ironic-endpoint (only live-iso images are booted from virtual media)")

// Provision boots a live ISO from virtual media: it inserts the ISO by
// URL and restarts the host into it (boot override Cd, once), unless the
// virtual CD already holds the image's URL or Boot was already sent for
// it since the host was last deprovisioned (so a BMC slow to show the
// media, or showing it otherwise, gets one Boot); then it makes sure the
// host is on. A power request still in flight (spec.online's, a reboot's)
// is waited for first: Boot powers on or restarts by the state the BMC
// reports, which is stale until then. The ISO carries its own
// configuration: the user-data, network-data and meta-data are not sent
// (a BMC has nowhere to put them). Any other image (qcow2, raw, no
// format, ...) is refused with an ErrorMessage naming spec.image, nothing
// sent to the BMC. A custom deploy without an image only powers the host
// on: there is no deploy ramdisk to run its method, whatever deploys the
// host is outside this provisioner.
func (d *direct) Provision(ctx context.Context, p provisioner.ProvisionData) (provisioner.Result, error) {
	if p.Image == nil || p.Image.URL == "" {
		if p.CustomDeploy == nil || p.CustomDeploy.Method == "" {
			return provisioner.Result{ErrorMessage: errNothingToProvision.Error()}, nil
		}
		return d.PowerOn(ctx)
	}
	if !IsLiveISO(p.Image) {
		return provisioner.Result{ErrorMessage: ErrDiskImage.Error()}, nil
	}
	mem := d.f.memory(d.key)
	if req := mem.power; req != nil && req.target != provisioner.PowerOn {
		if res, err := d.power(ctx, req.target, req.force); err != nil || res != (provisioner.Result{}) {
			return res, err
		}
	}
	if mem.booted != p.Image.URL {
		if req := mem.power; req != nil && req.target == provisioner.PowerOn {
			if res, err := d.power(ctx, provisioner.PowerOn, false); err != nil || res != (provisioner.Result{}) {
				return res, err
			}
		}
		state, err := d.bmc.Media(ctx)
		if err != nil {
			return provisioner.Result{}, err
		}
		if !state.Inserted || state.Image != p.Image.URL {
			if err := d.bmc.Boot(ctx, provisioner.BootMedia{Image: *p.Image.DeepCopy()}); err != nil {
				return provisioner.Result{}, err
			}
			// Boot powers the host on: that is the request in flight.
			d.f.sent(d.key, provisioner.PowerOn, false, false)
		}
		d.f.update(d.key, func(m *hostMemory) { m.booted = p.Image.URL })
	}
	return d.PowerOn(ctx)
}

// IsLiveISO reports whether an image is booted from virtual media
// (spec.image.format live-iso) rather than written to a disk.
func IsLiveISO(img *metal3v1alpha1.Image) bool {
	return img != nil && img.DiskFormat != nil && *img.DiskFormat == LiveISO
}

// Adopt has nothing to do: the BMC keeps no record of a deployment.
func (d *direct) Adopt(context.Context, provisioner.AdoptData) (provisioner.Result, error) {
	return provisioner.Result{}, nil
}

// Deprovision ejects the virtual media and powers the host off, done once
// the BMC reports it off (one power-off request, as PowerOff). A live ISO
// is only ever on virtual media, so ejecting it is the cleaning, whatever
// the automated cleaning mode.
func (d *direct) Deprovision(ctx context.Context, _ provisioner.DeprovisionData) (provisioner.Result, error) {
	if req := d.f.memory(d.key).power; req == nil || req.target != provisioner.PowerOff {
		if err := d.bmc.EjectMedia(ctx); err != nil {
			return provisioner.Result{}, err
		}
		d.f.update(d.key, func(m *hostMemory) { m.booted = "" })
	}
	return d.PowerOff(ctx, true)
}

// Delete has no engine record to remove; it forgets what is remembered
// of the host.
func (d *direct) Delete(context.Context) (provisioner.Result, error) {
	d.f.forget(d.key)
	return provisioner.Result{}, nil
}

// Detach is Delete: nothing on the BMC changes.
func (d *direct) Detach(ctx context.Context) (provisioner.Result, error) {
	return d.Delete(ctx)
}

// PowerState reads the power state from the BMC.
func (d *direct) PowerState(ctx context.Context) (provisioner.PowerState, error) {
	return d.bmc.PowerState(ctx)
}

// PowerOn turns the host on, once per transition.
func (d *direct) PowerOn(ctx context.Context) (provisioner.Result, error) {
	return d.power(ctx, provisioner.PowerOn, false)
}

// PowerOff turns the host off, gracefully unless force, once per
// transition.
func (d *direct) PowerOff(ctx context.Context, force bool) (provisioner.Result, error) {
	return d.power(ctx, provisioner.PowerOff, force)
}

// Reboot restarts the host, gracefully unless force. It is done once the
// BMC accepted the request (the power state cannot tell a restart that
// happened from one to come); a power-on asked for within the power
// timeout is taken as this request in flight.
func (d *direct) Reboot(ctx context.Context, force bool) (provisioner.Result, error) {
	if err := d.bmc.Reboot(ctx, force); err != nil {
		return provisioner.Result{}, err
	}
	d.f.sent(d.key, provisioner.PowerOn, false, false)
	return provisioner.Result{}, nil
}

// ErrPowerTimeout: the BMC accepted the power requests of a transition
// (the first and PowerRetries more, each given PowerTimeout) and still
// reports the old state. The ErrorMessage of the power call says which
// state, since when and how many requests went.
var ErrPowerTimeout = errors.New("the BMC did not reach the power state asked for")

// powerAction is what to do next about a power transition.
type powerAction int

const (
	// powerDone: the BMC reports the target.
	powerDone powerAction = iota
	// powerWait: the request is in flight; nothing is sent.
	powerWait
	// powerSend: send the request, the first time or again after it
	// timed out.
	powerSend
	// powerGiveUp: the retries are spent.
	powerGiveUp
)

// nextPower chooses what to do about a transition to target, given the
// request in flight for the host (nil when none) and the state the BMC
// reports.
func nextPower(req *powerRequest, target, state provisioner.PowerState, now time.Time, o Options) powerAction {
	switch {
	case state == target:
		return powerDone
	case req == nil || req.target != target:
		return powerSend
	case now.Sub(req.last) < o.PowerTimeout:
		return powerWait
	case req.sent <= o.PowerRetries:
		return powerSend
	}
	return powerGiveUp
}

// power brings the host to target, sending one request per transition:
// while it is in flight the result is Dirty and nothing is sent; after
// PowerTimeout it is sent again, at most PowerRetries times, then the
// transition fails (ErrPowerTimeout, in the ErrorMessage). A BMC that
// refuses a request sent again (it is still at the first: 409 or 400) is
// taken as still at it; one that refuses a first request while already
// reporting target has done it.
func (d *direct) power(ctx context.Context, target provisioner.PowerState, force bool) (provisioner.Result, error) {
	state, err := d.bmc.PowerState(ctx)
	if err != nil {
		return provisioner.Result{}, err
	}
	req := d.f.memory(d.key).power
	switch nextPower(req, target, state, d.f.o.Clock.Now(), d.f.o) {
	case powerDone:
		d.f.settled(d.key)
		return provisioner.Result{}, nil
	case powerWait:
		return d.dirty(req, state), nil
	case powerGiveUp:
		d.f.settled(d.key)
		msg := fmt.Errorf("power %s: %w: it still reports the host %s %s after the first request (%d sent, %d of them refused as in progress, each given %s)",
			strings.ToLower(string(target)), ErrPowerTimeout, state, d.f.o.Clock.Since(req.first).Round(time.Second), req.sent, req.refused, d.f.o.PowerTimeout)
		return provisioner.Result{ErrorMessage: msg.Error()}, nil
	}
	again := req != nil && req.target == target
	if err := d.send(ctx, target, force); err != nil {
		if again && errors.Is(err, provisioner.ErrRefused) {
			d.f.sent(d.key, target, force, true)
			return d.dirty(d.f.memory(d.key).power, state), nil
		}
		d.f.settled(d.key)
		if errors.Is(err, provisioner.ErrRefused) {
			if now, rerr := d.bmc.PowerState(ctx); rerr == nil && now == target {
				return provisioner.Result{}, nil
			}
		}
		return provisioner.Result{}, err
	}
	d.f.sent(d.key, target, force, false)
	if state, err = d.bmc.PowerState(ctx); err != nil {
		return provisioner.Result{}, err
	}
	if state != target {
		return d.dirty(d.f.memory(d.key).power, state), nil
	}
	d.f.settled(d.key)
	return provisioner.Result{}, nil
}

// send sends the request for target.
func (d *direct) send(ctx context.Context, target provisioner.PowerState, force bool) error {
	if target == provisioner.PowerOn {
		return d.bmc.PowerOn(ctx)
	}
	return d.bmc.PowerOff(ctx, force)
}

// dirty is the result of a request in flight.
func (d *direct) dirty(req *powerRequest, state provisioner.PowerState) provisioner.Result {
	res := provisioner.Result{Dirty: true, RequeueAfter: d.f.o.PollInterval}
	if req != nil {
		res.Progress = fmt.Sprintf("power %s requested %s ago (%d sent); the BMC still reports %s",
			strings.ToLower(string(req.target)), d.f.o.Clock.Since(req.first).Round(time.Second), req.sent, state)
	}
	return res
}
