package direct

import (
	"context"
	"errors"
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
	// DefaultPollInterval is when to look again at a power request in
	// flight.
	DefaultPollInterval = 2 * time.Second
)

// Options tune the direct provisioner.
type Options struct {
	// PowerTimeout is how long a power request is in flight before the
	// same request is sent again; 0 is DefaultPowerTimeout.
	PowerTimeout time.Duration
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
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	return &factory{bmcs: bmcs, o: o, pending: map[string]pendingPower{}}
}

// pendingPower is a power request sent and not yet seen done.
type pendingPower struct {
	target provisioner.PowerState
	sent   time.Time
}

type factory struct {
	bmcs provisioner.BMCFactory
	o    Options

	mu      sync.Mutex
	pending map[string]pendingPower
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

// inFlight reports whether a request for target is in flight for key.
func (f *factory) inFlight(key string, target provisioner.PowerState) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pending[key]
	return ok && p.target == target && f.o.Clock.Since(p.sent) < f.o.PowerTimeout
}

// sent records a request for target.
func (f *factory) sent(key string, target provisioner.PowerState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending[key] = pendingPower{target: target, sent: f.o.Clock.Now()}
}

// settled forgets the request of key.
func (f *factory) settled(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.pending, key)
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

// Provision boots a live ISO from virtual media: unless the virtual CD
// already holds the image's URL, it inserts the ISO by URL and restarts
// the host into it (boot override Cd, once); then it makes sure the host
// is on. The ISO carries its own configuration: the user-data,
// network-data and meta-data are not sent (a BMC has nowhere to put
// them). Any other image (qcow2, raw, no format, ...) is refused with an
// ErrorMessage naming spec.image, nothing sent to the BMC. A custom
// deploy without an image only powers the host on: there is no deploy
// ramdisk to run its method, whatever deploys the host is outside this
// provisioner.
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
	state, err := d.bmc.Media(ctx)
	if err != nil {
		return provisioner.Result{}, err
	}
	if !state.Inserted || state.Image != p.Image.URL {
		if err := d.bmc.Boot(ctx, provisioner.BootMedia{Image: *p.Image.DeepCopy()}); err != nil {
			return provisioner.Result{}, err
		}
		// Boot powers the host on: that is the request in flight.
		d.f.sent(d.key, provisioner.PowerOn)
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

// Deprovision ejects the virtual media and powers the host off. A live
// ISO is only ever on virtual media, so ejecting it is the cleaning,
// whatever the automated cleaning mode.
func (d *direct) Deprovision(ctx context.Context, _ provisioner.DeprovisionData) (provisioner.Result, error) {
	if err := d.bmc.EjectMedia(ctx); err != nil {
		return provisioner.Result{}, err
	}
	if err := d.bmc.PowerOff(ctx, true); err != nil {
		return provisioner.Result{}, err
	}
	d.f.settled(d.key)
	return provisioner.Result{}, nil
}

// Delete has no engine record to remove; it forgets the host's power
// request.
func (d *direct) Delete(context.Context) (provisioner.Result, error) {
	d.f.settled(d.key)
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
	return d.power(ctx, provisioner.PowerOn, d.bmc.PowerOn)
}

// PowerOff turns the host off, gracefully unless force, once per
// transition.
func (d *direct) PowerOff(ctx context.Context, force bool) (provisioner.Result, error) {
	return d.power(ctx, provisioner.PowerOff, func(ctx context.Context) error { return d.bmc.PowerOff(ctx, force) })
}

// Reboot restarts the host, gracefully unless force. It is done once the
// BMC accepted the request (the power state cannot tell a restart that
// happened from one to come); a power-on asked for within the power
// timeout is taken as this request in flight.
func (d *direct) Reboot(ctx context.Context, force bool) (provisioner.Result, error) {
	if err := d.bmc.Reboot(ctx, force); err != nil {
		return provisioner.Result{}, err
	}
	d.f.sent(d.key, provisioner.PowerOn)
	return provisioner.Result{}, nil
}

// power brings the host to target: a request in flight is waited for
// (Dirty, nothing sent); otherwise the request is sent unless the host is
// already there, then the state is read: Dirty until the BMC reports
// target.
func (d *direct) power(ctx context.Context, target provisioner.PowerState, send func(context.Context) error) (provisioner.Result, error) {
	if !d.f.inFlight(d.key, target) {
		state, err := d.bmc.PowerState(ctx)
		if err != nil {
			return provisioner.Result{}, err
		}
		if state == target {
			d.f.settled(d.key)
			return provisioner.Result{}, nil
		}
		if err := send(ctx); err != nil {
			return provisioner.Result{}, err
		}
		d.f.sent(d.key, target)
	}
	state, err := d.bmc.PowerState(ctx)
	if err != nil {
		return provisioner.Result{}, err
	}
	if state != target {
		return provisioner.Result{Dirty: true, RequeueAfter: d.f.o.PollInterval}, nil
	}
	d.f.settled(d.key)
	return provisioner.Result{}, nil
}
