package baremetalmanager

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/apply"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/hostops"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// GVK of the executor document.
var GVK = v1.GroupVersion.WithKind("BaremetalManager")

// DefaultTimeout is spec.timeout's default.
const DefaultTimeout = 300 * time.Second

// DefaultFactory reaches, over Redfish, the BMCs of executors made by New,
// as the airship config's managementConfiguration mc says (nil: directly,
// certificates verified).
var DefaultFactory = hostops.NewFactory

// Executor is a BaremetalManager executor for one phase.
type Executor struct {
	cfg     executor.Config
	api     *v1.BaremetalManager
	factory provisioner.BMCFactory
	// pollInterval of waits; 0 is the hosts package's default.
	pollInterval time.Duration
}

// New decodes the executor document strictly; BMCs are reached through
// DefaultFactory with the config's managementConfiguration.
func New(cfg executor.Config) (executor.Executor, error) {
	return NewWithFactory(cfg, DefaultFactory(cfg.Management))
}

// NewWithFactory is New with the BMCs reached through f.
func NewWithFactory(cfg executor.Config, f provisioner.BMCFactory) (*Executor, error) {
	api := &v1.BaremetalManager{}
	if err := cfg.ExecutorDoc.DecodeStrict(api); err != nil {
		return nil, fmt.Errorf("phase %q: executor document: %w", cfg.PhaseName, err)
	}
	return &Executor{cfg: cfg, api: api, factory: f}, nil
}

// Validate checks the operation and host selector.
func (e *Executor) Validate(context.Context) error {
	id := e.cfg.ExecutorDoc.ID()
	s := e.api.Spec
	var errs []error
	switch s.Operation {
	case v1.BaremetalOperationReboot, v1.BaremetalOperationPowerOff, v1.BaremetalOperationPowerOn, v1.BaremetalOperationEjectVirtualMedia:
	case v1.BaremetalOperationRemoteDirect:
		if s.OperationOptions.RemoteDirect.ISOURL == "" {
			errs = append(errs, fmt.Errorf("%s: spec.operationOptions.remoteDirect.isoURL is required for remote-direct", id))
		}
	default:
		errs = append(errs, fmt.Errorf("%s: spec.operation %q is not one of reboot, power-off, power-on, remote-direct, eject-virtual-media", id, s.Operation))
	}
	if s.Timeout < 0 {
		errs = append(errs, fmt.Errorf("%s: spec.timeout %d must not be negative", id, s.Timeout))
	}
	if s.HostSelector.Name == "" && s.HostSelector.LabelSelector == "" {
		errs = append(errs, fmt.Errorf("%s: spec.hostSelector needs a name or a labelSelector", id))
	}
	if s.HostSelector.LabelSelector != "" {
		if _, err := labels.Parse(s.HostSelector.LabelSelector); err != nil {
			errs = append(errs, fmt.Errorf("%s: spec.hostSelector.labelSelector: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// Render writes the executor document: the operation acts on hosts, not on documents.
func (e *Executor) Render(_ context.Context, w io.Writer, _ executor.RenderOptions) error {
	data, err := e.cfg.ExecutorDoc.YAML()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func (e *Executor) selector() hostops.Selector {
	s := e.api.Spec.HostSelector
	return hostops.Selector{LabelSelector: s.LabelSelector, Name: s.Name, Namespace: s.Namespace}
}

func (e *Executor) request() hostops.Request {
	// Forced, as upstream: a host's OS may not answer a graceful request.
	return hostops.Request{Operation: e.api.Spec.Operation, ISOURL: e.api.Spec.OperationOptions.RemoteDirect.ISOURL}
}

func (e *Executor) timeout(override time.Duration) time.Duration {
	if override > 0 {
		return override
	}
	if e.api.Spec.Timeout > 0 {
		return time.Duration(e.api.Spec.Timeout) * time.Second
	}
	return DefaultTimeout
}

// client reaches the phase's cluster through the site's resolver.
func (e *Executor) client(ctx context.Context) (client.Client, error) {
	if e.cfg.Kubeconfig == nil {
		return nil, fmt.Errorf("phase %q: no way to reach cluster %q", e.cfg.PhaseName, e.cfg.ClusterName)
	}
	kc, err := e.cfg.Kubeconfig(ctx, kubeconfig.Request{Cluster: e.cfg.ClusterName})
	if err != nil {
		return nil, fmt.Errorf("phase %q: %w", e.cfg.PhaseName, err)
	}
	rc, err := kubeconfig.RESTConfig(kc)
	if err != nil {
		return nil, fmt.Errorf("phase %q: %w", e.cfg.PhaseName, err)
	}
	return hostops.NewClient(rc)
}

func (e *Executor) runner(ctx context.Context, timeout time.Duration) (*hostops.Runner, error) {
	if e.factory == nil {
		return nil, fmt.Errorf("phase %q: BaremetalManager: no BMC provisioner in this build", e.cfg.PhaseName)
	}
	c, err := e.client(ctx)
	if err != nil {
		return nil, err
	}
	return &hostops.Runner{Client: c, Factory: e.factory, Timeout: e.timeout(timeout), PollInterval: e.pollInterval}, nil
}

func hostID(id string) string { return "BareMetalHost " + id }

// movedTo says where the selector's namespace was moved, or is being
// moved (a pivot); ok is false when it is still this cluster's. Either
// way the hosts, and so the operation, are (or are about to be) that
// cluster's business: some may be gone from here already.
func (e *Executor) movedTo(ctx context.Context, c client.Reader) (m apply.NamespaceMove, ok bool, err error) {
	ns := e.api.Spec.HostSelector.Namespace
	if ns == "" {
		return m, false, nil
	}
	moved, err := apply.MovedNamespaces(ctx, c, []string{ns})
	if err != nil {
		return m, false, err
	}
	m, ok = moved[ns]
	return m, ok, nil
}

// Run runs the operation on every selected host of the phase's cluster and
// waits until each reaches its target state. With DryRun, the hosts are
// selected and named, and no BMC is touched.
func (e *Executor) Run(ctx context.Context, opts executor.RunOptions) error {
	send := func(ev executor.Event) {
		if opts.Events != nil {
			opts.Events <- ev
		}
	}
	req := e.request()
	fail := func(err error) error {
		return fmt.Errorf("phase %q: BaremetalManager %s: %w", e.cfg.PhaseName, req.Operation, err)
	}
	if err := req.Validate(); err != nil {
		return fail(err)
	}
	r, err := e.runner(ctx, opts.Timeout)
	if err != nil {
		return err
	}
	if m, moved, err := e.movedTo(ctx, r.Client); err != nil {
		return fail(err)
	} else if moved {
		msg := fmt.Sprintf("nothing to do here: namespace %q was moved to cluster %q with its hosts (annotation %s)",
			e.api.Spec.HostSelector.Namespace, m.To, apply.MovedToAnnotation)
		if m.Moving {
			msg = fmt.Sprintf("nothing to do here: namespace %q is %s, with its hosts", e.api.Spec.HostSelector.Namespace, m)
		}
		send(executor.Event{Type: "Moved", Message: msg})
		return nil
	}
	if opts.DryRun {
		ctx, cancel := context.WithTimeout(ctx, r.Timeout)
		defer cancel()
		selected, err := hostops.Select(ctx, r.Client, e.selector())
		if err != nil {
			return fail(err)
		}
		for _, h := range selected {
			send(executor.Event{Type: "DryRun", Object: hostID(h.Namespace + "/" + h.Name), Message: fmt.Sprintf("would %s (BMC %s)", req.Operation, hostops.SafeAddress(h.Spec.BMC.Address))})
		}
		return nil
	}
	r.Progress = func(p hostops.Progress) {
		send(executor.Event{Type: "Host", Object: hostID(p.Host), Message: p.Message})
	}
	if _, err := r.Run(ctx, e.selector(), req); err != nil {
		return fail(err)
	}
	return nil
}

// Status reads each selected host's power state (and virtual CD): a host
// is applied when its BMC answered, ready when it is in the operation's
// target state.
func (e *Executor) Status(ctx context.Context) (*executor.Status, error) {
	req := e.request()
	r, err := e.runner(ctx, 0)
	if err != nil {
		return nil, err
	}
	if m, moved, err := e.movedTo(ctx, r.Client); err != nil {
		return nil, fmt.Errorf("phase %q: BaremetalManager status: %w", e.cfg.PhaseName, err)
	} else if moved {
		ns := e.api.Spec.HostSelector.Namespace
		msg := fmt.Sprintf("the hosts of namespace %q are managed by cluster %q", ns, m.To)
		if m.Moving {
			msg = fmt.Sprintf("the hosts of namespace %q are being moved to cluster %q", ns, m.To)
		}
		return &executor.Status{Phase: e.cfg.PhaseName, Message: msg,
			Objects: []executor.ObjectStatus{{ID: "Namespace " + ns, Applied: true, Ready: !m.Moving, Message: m.String()}}}, nil
	}
	results, err := r.Status(ctx, e.selector(), &req)
	if err != nil {
		return nil, fmt.Errorf("phase %q: BaremetalManager status: %w", e.cfg.PhaseName, err)
	}
	st := &executor.Status{Phase: e.cfg.PhaseName, Message: fmt.Sprintf("%s: ready is %s", req.Operation, req.Target())}
	for _, res := range results {
		o := executor.ObjectStatus{ID: hostID(res.ID()), Applied: res.Err == nil, Ready: req.Reached(res), Message: res.State()}
		if res.Err != nil {
			o.Message = res.Error
		}
		st.Objects = append(st.Objects, o)
	}
	return st, nil
}
