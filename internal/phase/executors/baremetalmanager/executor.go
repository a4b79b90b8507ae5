package baremetalmanager

import (
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// GVK of the executor document.
var GVK = v1.GroupVersion.WithKind("BaremetalManager")

func init() { executor.Register(GVK, New) }

// Executor is a BaremetalManager executor for one phase.
type Executor struct {
	cfg executor.Config
	api *v1.BaremetalManager
}

// New decodes the executor document strictly.
func New(cfg executor.Config) (executor.Executor, error) {
	api := &v1.BaremetalManager{}
	if err := cfg.ExecutorDoc.DecodeStrict(api); err != nil {
		return nil, fmt.Errorf("phase %q: executor document: %w", cfg.PhaseName, err)
	}
	return &Executor{cfg: cfg, api: api}, nil
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

// Run is not implemented yet.
func (e *Executor) Run(context.Context, executor.RunOptions) error {
	return fmt.Errorf("phase %q: BaremetalManager %s: %w yet (it comes with the Redfish client)", e.cfg.PhaseName, e.api.Spec.Operation, executor.ErrNotImplemented)
}

// Status is not implemented yet.
func (e *Executor) Status(context.Context) (*executor.Status, error) {
	return nil, fmt.Errorf("phase %q: BaremetalManager status: %w yet", e.cfg.PhaseName, executor.ErrNotImplemented)
}
