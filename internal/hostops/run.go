package hostops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	urlredact "github.com/airshipit/airship-go/internal/redact"
)

// Defaults of a Runner.
const (
	DefaultTimeout      = 300 * time.Second
	DefaultParallelism  = 10
	DefaultPollInterval = time.Second
)

// Keys of the BMC credentials Secret.
const (
	UsernameKey = "username"
	PasswordKey = "password"
)

// Request is an operation to run on every selected host.
type Request struct {
	// Operation is reboot, power-off, power-on, remote-direct or eject-virtual-media.
	Operation v1.BaremetalOperation
	// ISOURL is the image remote-direct boots.
	ISOURL string
	// Graceful asks the host's OS to shut down or restart (power-off,
	// reboot) instead of forcing it, which is the default as upstream.
	Graceful bool
}

// Validate checks the operation and its options.
func (r Request) Validate() error {
	switch r.Operation {
	case v1.BaremetalOperationReboot, v1.BaremetalOperationPowerOff, v1.BaremetalOperationPowerOn, v1.BaremetalOperationEjectVirtualMedia:
		return nil
	case v1.BaremetalOperationRemoteDirect:
		if r.ISOURL == "" {
			return errors.New("remote-direct needs the URL of an ISO to boot")
		}
		return nil
	}
	return fmt.Errorf("operation %q is not one of reboot, power-off, power-on, remote-direct, eject-virtual-media", r.Operation)
}

// needsMedia reports whether the operation's outcome is seen on the virtual CD.
func (r Request) needsMedia() bool {
	return r.Operation == v1.BaremetalOperationRemoteDirect || r.Operation == v1.BaremetalOperationEjectVirtualMedia
}

// Target describes the state the operation leaves a host in.
func (r Request) Target() string {
	switch r.Operation {
	case v1.BaremetalOperationPowerOff:
		return "power Off"
	case v1.BaremetalOperationRemoteDirect:
		return fmt.Sprintf("power On with %s inserted", urlredact.URL(r.ISOURL))
	case v1.BaremetalOperationEjectVirtualMedia:
		return "no virtual media inserted"
	}
	return "power On"
}

// Reached reports whether a host observed as res is in the operation's target state.
func (r Request) Reached(res Result) bool {
	if res.Err != nil {
		return false
	}
	switch r.Operation {
	case v1.BaremetalOperationPowerOff:
		return res.PowerState == provisioner.PowerOff
	case v1.BaremetalOperationRemoteDirect:
		return res.PowerState == provisioner.PowerOn && res.Media != nil && res.Media.Inserted && res.Media.Image == r.ISOURL
	case v1.BaremetalOperationEjectVirtualMedia:
		return res.Media != nil && !res.Media.Inserted
	}
	return res.PowerState == provisioner.PowerOn
}

// Media is a host's virtual CD.
type Media struct {
	Inserted bool   `json:"inserted"`
	Image    string `json:"image,omitempty"`
}

// Result is what became of one host.
type Result struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// BMC is the endpoint and system path the host was reached at.
	BMC string `json:"bmc,omitempty"`
	// PowerState last observed; empty when the BMC was not read.
	PowerState provisioner.PowerState `json:"powerState,omitempty"`
	// Media last observed; nil when not read (a host without virtual media).
	Media *Media `json:"media,omitempty"`
	// Error is Err's message.
	Error string `json:"error,omitempty"`
	// Err is why the host failed; nil when it did not.
	Err error `json:"-"`
}

// ID is namespace/name.
func (r Result) ID() string { return r.Namespace + "/" + r.Name }

// Failed returns an error naming each host that failed, nil when none did.
func Failed(results []Result) error {
	var failed []string
	for _, r := range results {
		if r.Err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", r.ID(), r.Err))
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d hosts failed:\n  - %s", len(failed), len(results), strings.Join(failed, "\n  - "))
}

// Progress is one step of one host.
type Progress struct {
	// Host is namespace/name.
	Host    string
	Message string
}

// Runner runs operations on the hosts of one cluster.
type Runner struct {
	// Client reads BareMetalHosts and Secrets.
	Client client.Reader
	// Factory reaches BMCs.
	Factory provisioner.BMCFactory
	// Timeout bounds a whole Run or Status, hosts included (default DefaultTimeout).
	Timeout time.Duration
	// Parallelism is how many hosts are worked on at once (default DefaultParallelism).
	Parallelism int
	// PollInterval is how often a host is read while waiting (default DefaultPollInterval).
	PollInterval time.Duration
	// Progress, when set, is told each step; calls are serialized.
	Progress func(Progress)

	progressMu sync.Mutex
}

// Run selects the hosts and runs the request on each, waiting until each
// reaches the request's target state. The error names every host that
// failed; the results cover every selected host either way.
func (r *Runner) Run(ctx context.Context, sel Selector, req Request) ([]Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if r.Factory == nil {
		return nil, errors.New("no BMC provisioner to reach the hosts with")
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	hosts, err := Select(ctx, r.Client, sel)
	if err != nil {
		return nil, err
	}
	results := r.each(ctx, hosts, func(ctx context.Context, h *metal3v1alpha1.BareMetalHost, res *Result) error {
		p, password, err := r.open(ctx, h, res)
		if err != nil {
			return err
		}
		return r.run(ctx, p, res, req, password)
	})
	return results, Failed(results)
}

// Status selects the hosts and reads each one's power state, and its
// virtual CD when its BMC address boots from virtual media or want needs
// it (remote-direct, eject-virtual-media; want may be nil). Hosts that
// could not be read have Err set; the error is only for the selection.
func (r *Runner) Status(ctx context.Context, sel Selector, want *Request) ([]Result, error) {
	if r.Factory == nil {
		return nil, errors.New("no BMC provisioner to reach the hosts with")
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	hosts, err := Select(ctx, r.Client, sel)
	if err != nil {
		return nil, err
	}
	return r.each(ctx, hosts, func(ctx context.Context, h *metal3v1alpha1.BareMetalHost, res *Result) error {
		p, password, err := r.open(ctx, h, res)
		if err != nil {
			return err
		}
		media := want != nil && want.needsMedia()
		if a, perr := bmc.Parse(h.Spec.BMC.Address); perr == nil && a.VirtualMedia() {
			media = true
		}
		return redact(observe(ctx, p, res, media), password)
	}), nil
}

func (r *Runner) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

func (r *Runner) pollInterval() time.Duration {
	if r.PollInterval > 0 {
		return r.PollInterval
	}
	return DefaultPollInterval
}

func (r *Runner) report(res *Result, format string, args ...any) {
	if r.Progress == nil {
		return
	}
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	r.Progress(Progress{Host: res.ID(), Message: fmt.Sprintf(format, args...)})
}

// each runs fn on every host, at most Parallelism at once, and returns
// the results in the hosts' order.
func (r *Runner) each(ctx context.Context, hosts []metal3v1alpha1.BareMetalHost, fn func(context.Context, *metal3v1alpha1.BareMetalHost, *Result) error) []Result {
	n := r.Parallelism
	if n <= 0 {
		n = DefaultParallelism
	}
	results := make([]Result, len(hosts))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range hosts {
		h, res := &hosts[i], &results[i]
		res.Namespace, res.Name = h.Namespace, h.Name
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				res.Err = fmt.Errorf("not started: %w", context.Cause(ctx))
				res.Error = res.Err.Error()
				return
			}
			if err := fn(ctx, h, res); err != nil {
				res.Err = err
				res.Error = err.Error()
			}
		}()
	}
	wg.Wait()
	return results
}

// open reaches a host's BMC with the credentials of its Secret, and
// returns the password so errors can be checked for it.
func (r *Runner) open(ctx context.Context, h *metal3v1alpha1.BareMetalHost, res *Result) (provisioner.BMC, string, error) {
	t, err := r.target(ctx, h)
	if err != nil {
		return nil, "", err
	}
	res.BMC = t.Access.Endpoint + t.Access.SystemPath
	p, err := r.Factory.Open(ctx, t)
	if err != nil {
		return nil, t.Credentials.Password, redact(fmt.Errorf("opening BMC %s: %w", res.BMC, err), t.Credentials.Password)
	}
	return p, t.Credentials.Password, nil
}

// target builds a host's provisioner target from its spec.bmc and credentials Secret.
func (r *Runner) target(ctx context.Context, h *metal3v1alpha1.BareMetalHost) (provisioner.Target, error) {
	access, err := bmc.Parse(h.Spec.BMC.Address)
	if err != nil {
		return provisioner.Target{}, fmt.Errorf("spec.bmc.address: %w", err)
	}
	name := h.Spec.BMC.CredentialsName
	if name == "" {
		return provisioner.Target{}, errors.New("spec.bmc.credentialsName is empty: name the Secret holding the BMC username and password")
	}
	s := corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: h.Namespace, Name: name}, &s); err != nil {
		return provisioner.Target{}, fmt.Errorf("reading BMC credentials Secret %s/%s: %w", h.Namespace, name, err)
	}
	creds := provisioner.Credentials{Username: string(s.Data[UsernameKey]), Password: string(s.Data[PasswordKey])}
	for key, v := range map[string]string{UsernameKey: creds.Username, PasswordKey: creds.Password} {
		if v == "" {
			return provisioner.Target{}, fmt.Errorf("BMC credentials Secret %s/%s has no %q key (or it is empty)", h.Namespace, name, key)
		}
	}
	return provisioner.Target{Access: access, Credentials: creds, InsecureSkipVerify: h.Spec.BMC.DisableCertificateVerification}, nil
}

// run asks for the operation and waits for its target state. Errors, and
// the progress that reports them, have the password redacted.
func (r *Runner) run(ctx context.Context, p provisioner.BMC, res *Result, req Request, password string) error {
	fail := func(err error) error {
		err = redact(err, password)
		r.report(res, "failed: %v", err)
		return err
	}
	r.report(res, "%s at %s", req.Operation, res.BMC)
	var err error
	switch req.Operation {
	case v1.BaremetalOperationPowerOn:
		err = p.PowerOn(ctx)
	case v1.BaremetalOperationPowerOff:
		err = p.PowerOff(ctx, !req.Graceful)
	case v1.BaremetalOperationReboot:
		err = p.Reboot(ctx, !req.Graceful)
	case v1.BaremetalOperationRemoteDirect:
		err = p.Boot(ctx, provisioner.BootMedia{Image: metal3v1alpha1.Image{URL: req.ISOURL}})
	case v1.BaremetalOperationEjectVirtualMedia:
		err = p.EjectMedia(ctx)
	}
	if err != nil {
		return fail(fmt.Errorf("%s: %w", req.Operation, err))
	}
	r.report(res, "waiting for %s", req.Target())
	if err := r.wait(ctx, p, res, req); err != nil {
		return fail(err)
	}
	r.report(res, "done: %s", res.State())
	return nil
}

// wait reads the host until it reaches the request's target; read errors
// on the way are retried (a BMC may not answer while its host restarts).
func (r *Runner) wait(ctx context.Context, p provisioner.BMC, res *Result, req Request) error {
	t := time.NewTicker(r.pollInterval())
	defer t.Stop()
	var lastErr error
	for {
		err := observe(ctx, p, res, req.needsMedia())
		switch {
		case err == nil && req.Reached(*res):
			return nil
		case err == nil:
			lastErr = nil
		case ctx.Err() == nil:
			// A read cut short by the deadline says nothing of the host.
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("%s: waiting for %s: %w", req.Operation, req.Target(), lastErr)
			}
			return fmt.Errorf("%s: %s not reached (%s): %w", req.Operation, req.Target(), res.State(), context.Cause(ctx))
		case <-t.C:
		}
	}
}

// observe reads the power state, and the virtual CD when media is set.
func observe(ctx context.Context, p provisioner.BMC, res *Result, media bool) error {
	ps, err := p.PowerState(ctx)
	if err != nil {
		return fmt.Errorf("reading the power state: %w", err)
	}
	res.PowerState = ps
	if media {
		m, err := p.Media(ctx)
		if err != nil {
			return fmt.Errorf("reading the virtual media: %w", err)
		}
		res.Media = &Media{Inserted: m.Inserted, Image: m.Image}
	}
	return nil
}

// State says what was last observed of the host: its power state, and its
// virtual CD when read.
func (res Result) State() string {
	s := "power " + string(res.PowerState)
	if res.PowerState == "" {
		s = "power state unknown"
	}
	if res.Media != nil {
		if res.Media.Inserted {
			s += ", media " + res.Media.Image
		} else {
			s += ", no media"
		}
	}
	return s
}

// redacted hides a password an error's text holds, keeping the chain for errors.Is.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// redact returns err with every occurrence of password replaced. The
// provisioners never put a password in an error; this is the second lock.
func redact(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return &redacted{msg: strings.ReplaceAll(err.Error(), password, "***"), err: err}
}
