package hostopstest

import (
	"context"
	"fmt"
	"sync"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// Factory opens in-memory hosts by BMC endpoint and system path. A target
// with no host, or whose credentials are not the host's, fails as a BMC would.
type Factory struct {
	mu    sync.Mutex
	hosts map[string]*Host
	opens []provisioner.Target
}

// Host is one fake BMC's system. Set its fields before the Factory is used
// (or under Lock); read them with State.
type Host struct {
	// Username and Password the BMC accepts.
	Username, Password string
	// Power and Media are the system's state.
	Power provisioner.PowerState
	Media provisioner.MediaState
	// Lag is how many PowerState reads after an operation still return the
	// old power state, as a slow BMC would.
	Lag int
	// Fail makes the named method ("PowerOn", "Boot", ...) return Err.
	Fail map[string]error
	// Ignore makes the named operations succeed without changing anything.
	Ignore map[string]bool
	// Block, when set, is called at the start of every operation (not of
	// reads), with the context of the call; it may wait.
	Block func(ctx context.Context)

	f      *Factory
	lag    int
	calls  []string
	boots  []provisioner.BootMedia
	forced []bool
}

// NewFactory returns an empty Factory.
func NewFactory() *Factory { return &Factory{hosts: map[string]*Host{}} }

// Add registers a host at endpoint+systemPath (as bmc.Access splits it) and returns it.
func (f *Factory) Add(address string, h *Host) *Host {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h.Power == "" {
		h.Power = provisioner.PowerOff
	}
	h.f = f
	f.hosts[address] = h
	return h
}

// Opens returns the targets opened so far.
func (f *Factory) Opens() []provisioner.Target {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]provisioner.Target(nil), f.opens...)
}

// State returns a copy of a host's state and the operations called on it.
func (f *Factory) State(address string) (power provisioner.PowerState, media provisioner.MediaState, calls []string, boots []provisioner.BootMedia) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[address]
	if h == nil {
		return "", provisioner.MediaState{}, nil, nil
	}
	return h.Power, h.Media, append([]string(nil), h.calls...), append([]provisioner.BootMedia(nil), h.boots...)
}

// Forced returns the force argument of each PowerOff and Reboot call.
func (f *Factory) Forced(address string) []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h := f.hosts[address]; h != nil {
		return append([]bool(nil), h.forced...)
	}
	return nil
}

// Open implements provisioner.BMCFactory.
func (f *Factory) Open(_ context.Context, t provisioner.Target) (provisioner.BMC, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opens = append(f.opens, t)
	h := f.hosts[t.Access.Endpoint+t.Access.SystemPath]
	if h == nil {
		return nil, fmt.Errorf("%s%s: %w", t.Access.Endpoint, t.Access.SystemPath, provisioner.ErrUnreachable)
	}
	return &prov{h: h, creds: t.Credentials}, nil
}

type prov struct {
	h     *Host
	creds provisioner.Credentials
}

// enter checks credentials and faults for a method; op says it changes state.
func (p *prov) enter(ctx context.Context, method string, op bool) (func(), error) {
	if op && p.h.Block != nil {
		p.h.Block(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.h.f.mu.Lock()
	unlock := p.h.f.mu.Unlock
	if p.creds.Username != p.h.Username || p.creds.Password != p.h.Password {
		unlock()
		return nil, provisioner.ErrCredentials
	}
	if op {
		p.h.calls = append(p.h.calls, method)
	}
	if err := p.h.Fail[method]; err != nil {
		unlock()
		return nil, err
	}
	if op && p.h.Ignore[method] {
		unlock()
		return nil, nil
	}
	return unlock, nil
}

func (p *prov) do(ctx context.Context, method string, fn func(h *Host)) error {
	unlock, err := p.enter(ctx, method, true)
	if err != nil || unlock == nil {
		return err
	}
	defer unlock()
	fn(p.h)
	p.h.lag = p.h.Lag
	return nil
}

func (p *prov) Register(ctx context.Context) error {
	unlock, err := p.enter(ctx, "Register", false)
	if err != nil {
		return err
	}
	unlock()
	return nil
}

func (p *prov) Inspect(ctx context.Context) (*metal3v1alpha1.HardwareDetails, error) {
	unlock, err := p.enter(ctx, "Inspect", false)
	if err != nil {
		return nil, err
	}
	unlock()
	return &metal3v1alpha1.HardwareDetails{}, nil
}

// PowerState returns the state before the last operation while lag lasts.
func (p *prov) PowerState(ctx context.Context) (provisioner.PowerState, error) {
	unlock, err := p.enter(ctx, "PowerState", false)
	if err != nil {
		return "", err
	}
	defer unlock()
	if p.h.lag > 0 {
		p.h.lag--
		if p.h.Power == provisioner.PowerOn {
			return provisioner.PowerOff, nil
		}
		return provisioner.PowerOn, nil
	}
	return p.h.Power, nil
}

func (p *prov) PowerOn(ctx context.Context) error {
	return p.do(ctx, "PowerOn", func(h *Host) { h.Power = provisioner.PowerOn })
}

func (p *prov) PowerOff(ctx context.Context, force bool) error {
	return p.do(ctx, "PowerOff", func(h *Host) {
		h.forced = append(h.forced, force)
		h.Power = provisioner.PowerOff
	})
}

func (p *prov) Reboot(ctx context.Context, force bool) error {
	return p.do(ctx, "Reboot", func(h *Host) {
		h.forced = append(h.forced, force)
		h.Power = provisioner.PowerOn
	})
}

func (p *prov) Boot(ctx context.Context, m provisioner.BootMedia) error {
	return p.do(ctx, "Boot", func(h *Host) {
		h.boots = append(h.boots, m)
		h.Media = provisioner.MediaState{Inserted: true, Image: m.Image.URL}
		h.Power = provisioner.PowerOn
	})
}

func (p *prov) EjectMedia(ctx context.Context) error {
	return p.do(ctx, "EjectMedia", func(h *Host) { h.Media = provisioner.MediaState{} })
}

func (p *prov) Media(ctx context.Context) (provisioner.MediaState, error) {
	unlock, err := p.enter(ctx, "Media", false)
	if err != nil {
		return provisioner.MediaState{}, err
	}
	defer unlock()
	return p.h.Media, nil
}
