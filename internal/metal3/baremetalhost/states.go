package baremetalhost

import (
	"context"
	"errors"
	"fmt"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// hostEvent is an event to record once the status is written.
type hostEvent struct {
	reason, message string
	warning         bool
}

// hostScope is the state of one reconcile of one host (scope is the word
// every reconciler here uses for it): the handlers change host.Status,
// return the pass's outcome and say what Reconcile must do besides writing
// the status.
//
// A handler returns nil when it is done or waits for the provisioner (a
// Dirty result: wait says when to look again); a StalledError when no
// retry can help; any other error (always fail's) for a failed step,
// which it has already recorded in the status as upstream does
// (errorType, errorMessage, errorCount): the step is retried after a
// backoff counted by errorCount. Entering another state, or settling
// (poll), is said in the fields below.
type hostScope struct {
	r    *BareMetalHostReconciler
	host *metal3v1alpha1.BareMetalHost
	ctx  context.Context
	prov provisioner.Provisioner

	events           []hostEvent
	stateChanged     bool
	removeFinalizer  bool
	clearAnnotations []string
	// wait is set when the provisioner's work is under way (a Dirty
	// result): the same step runs again after it.
	wait time.Duration
	// poll is set when the host settled as spec.online asks: its power
	// is read again after PowerPollInterval, to notice changes made
	// behind the controller's back.
	poll bool
}

// requeue is when the host is looked at again after a pass with outcome
// o: soon after a state change (the next state's handler runs), after the
// backoff when a step failed, after the provisioner's wait while its work
// is under way, after the power poll interval when the host settled, and
// otherwise only when something changes (a watch).
func (s *hostScope) requeue(o operatorkit.Outcome) reconcile.Result {
	switch {
	case s.stateChanged:
		// The short wait lets the cache see the status just written.
		return reconcile.Result{RequeueAfter: nextStateDelay}
	case o.Kind == operatorkit.Failed:
		return reconcile.Result{RequeueAfter: s.r.backoff().Delay(int64(s.host.Status.ErrorCount))}
	case o.Kind == operatorkit.Succeeded && s.wait > 0:
		return reconcile.Result{RequeueAfter: s.wait}
	case o.Kind == operatorkit.Succeeded && s.poll:
		return reconcile.Result{RequeueAfter: s.r.PowerPollInterval}
	}
	return reconcile.Result{}
}

// run dispatches on the host's state. Deleting hosts go through
// deprovisioning and powering off before they are let go.
func (s *hostScope) run(deleting bool) error {
	h := s.host
	st := &h.Status

	if _, detached := h.Annotations[metal3v1alpha1.DetachedAnnotation]; detached {
		return s.runDetached(deleting)
	}
	if st.OperationalStatus == metal3v1alpha1.OperationalStatusDetached {
		// The annotation is gone: manage the host again from where it
		// was (connect registers it again).
		st.OperationalStatus = metal3v1alpha1.OperationalStatusOK
		if st.ErrorType != "" {
			st.OperationalStatus = metal3v1alpha1.OperationalStatusError
		}
	}

	if deleting {
		return s.runDeleting()
	}

	switch st.Provisioning.State {
	case metal3v1alpha1.StateNone, metal3v1alpha1.StateUnmanaged:
		return s.handleUnmanaged()
	}
	// Every managed state registers the host first, on every pass (see
	// connect).
	if ok, err := s.connect(); err != nil || !ok {
		return err
	}
	return s.handleManaged()
}

// handleManaged runs the handler of a managed, registered host's state.
func (s *hostScope) handleManaged() error {
	st := &s.host.Status
	switch st.Provisioning.State {
	case metal3v1alpha1.StateRegistering:
		return s.handleRegistering()
	case metal3v1alpha1.StateInspecting:
		return s.handleInspecting()
	case metal3v1alpha1.StatePreparing, metal3v1alpha1.StateMatchProfile, metal3v1alpha1.StateReady:
		return s.handlePreparing()
	case metal3v1alpha1.StateAvailable:
		return s.handleAvailable()
	case metal3v1alpha1.StateProvisioning:
		return s.handleProvisioning()
	case metal3v1alpha1.StateProvisioned, metal3v1alpha1.StateExternallyProvisioned:
		return s.handleProvisioned()
	case metal3v1alpha1.StateDeprovisioning:
		return s.handleDeprovisioning(false)
	default:
		// Only a change of the status (a restored one, or an edit) can
		// help: there is nothing to retry.
		msg := fmt.Sprintf("unknown provisioning state %q", st.Provisioning.State)
		s.setError(metal3v1alpha1.RegistrationError, msg)
		return operatorkit.Stall("UnknownState", errors.New(msg))
	}
}

// registered reports whether the provisioner may know the host: it
// accepted its credentials once, or gave it an id.
func (s *hostScope) registered() bool {
	st := &s.host.Status
	return st.GoodCredentials.Reference != nil || st.Provisioning.ID != ""
}

// runDetached handles a host with the detached annotation: the
// provisioner is told once to forget it without touching it (Detach;
// Dirty waits, a failure is a detach error retried), then nothing is done
// on the BMC or the engine, deletion included. Removing the annotation
// manages the host again from where it was.
func (s *hostScope) runDetached(deleting bool) error {
	st := &s.host.Status
	if st.OperationalStatus != metal3v1alpha1.OperationalStatusDetached && s.registered() {
		if _, err := s.open(metal3v1alpha1.DetachError); err != nil {
			return err
		}
		res, err := s.prov.Detach(s.ctx)
		if done, err := s.step(metal3v1alpha1.DetachError, "detaching", res, err); !done {
			return err
		}
		if st.ErrorType == metal3v1alpha1.DetachError {
			s.clearError()
		}
	}
	if deleting {
		s.removeFinalizer = true
		return nil
	}
	if st.OperationalStatus != metal3v1alpha1.OperationalStatusDetached {
		st.OperationalStatus = metal3v1alpha1.OperationalStatusDetached
		s.event("Detached", "the detached annotation is set: the host is not managed", false)
	}
	return nil
}

// runDeleting takes a deleted host through deprovisioning (when it was
// provisioned), powering off before delete and deleting, where the
// provisioner forgets it. A host never registered, or still registering,
// goes straight to deleting.
func (s *hostScope) runDeleting() error {
	st := &s.host.Status
	switch st.Provisioning.State {
	case metal3v1alpha1.StateNone, metal3v1alpha1.StateUnmanaged:
		s.removeFinalizer = true
		return nil
	case metal3v1alpha1.StateDeleting:
		return s.handleDeleting()
	case metal3v1alpha1.StateRegistering:
		s.setState(metal3v1alpha1.StateDeleting)
		return s.handleDeleting()
	}
	if !s.registered() {
		// Never registered: nothing on the BMC to undo.
		s.setState(metal3v1alpha1.StateDeleting)
		s.removeFinalizer = true
		return nil
	}
	if s.giveUpBeforeDelete() {
		s.setState(metal3v1alpha1.StateDeleting)
		return s.handleDeleting()
	}
	if ok, err := s.connect(); err != nil || !ok {
		return err
	}
	switch st.Provisioning.State {
	case metal3v1alpha1.StateProvisioning, metal3v1alpha1.StateProvisioned:
		s.start(metal3v1alpha1.StateDeprovisioning)
		return nil
	case metal3v1alpha1.StateDeprovisioning:
		return s.handleDeprovisioning(true)
	case metal3v1alpha1.StatePoweringOffBeforeDelete:
		return s.handlePoweringOffBeforeDelete()
	default:
		s.setState(metal3v1alpha1.StatePoweringOffBeforeDelete)
		return nil
	}
}

// maxFailuresBeforeDelete is how many times a deleted host's registration,
// or its power-off before delete, may fail before the controller gives up
// on undoing and goes on to delete it, as upstream does: credentials gone
// with the host, or a BMC gone for good, must not keep it forever.
const maxFailuresBeforeDelete = 3

// giveUpBeforeDelete reports whether a deleted host has failed to register,
// or to power off before delete, more than maxFailuresBeforeDelete times.
func (s *hostScope) giveUpBeforeDelete() bool {
	st := &s.host.Status
	if st.ErrorCount <= maxFailuresBeforeDelete {
		return false
	}
	failing := isRegistrationError(st.ErrorType) ||
		st.Provisioning.State == metal3v1alpha1.StatePoweringOffBeforeDelete && st.ErrorType == metal3v1alpha1.PowerManagementError
	if failing {
		log.FromContext(s.ctx).Info("giving up undoing the deleted host", "errorType", st.ErrorType, "errorCount", st.ErrorCount)
	}
	return failing
}

// handlePoweringOffBeforeDelete forces the host off, then deletes it.
func (s *hostScope) handlePoweringOffBeforeDelete() error {
	res, err := s.prov.PowerOff(s.ctx, true)
	if done, err := s.step(metal3v1alpha1.PowerManagementError, "powering off before delete", res, err); !done {
		return err
	}
	s.host.Status.PoweredOn = false
	s.clearError()
	s.setState(metal3v1alpha1.StateDeleting)
	return s.handleDeleting()
}

// handleDeleting makes the provisioner forget the host, then lets the host
// go. A host never registered has nothing to forget.
func (s *hostScope) handleDeleting() error {
	if !s.registered() {
		s.removeFinalizer = true
		return nil
	}
	if s.prov == nil {
		// Forgetting the host needs no working credentials: a Secret
		// gone or broken meanwhile must not keep the host forever.
		_, creds, err := s.r.credentials(s.ctx, s.host)
		if err != nil {
			log.FromContext(s.ctx).Info("deleting with no usable BMC credentials", "error", err.Error())
		}
		if s.prov, err = s.r.open(s.ctx, s.host, creds); err != nil {
			return s.fail(metal3v1alpha1.RegistrationError, "opening the BMC", err)
		}
	}
	res, err := s.prov.Delete(s.ctx)
	if done, err := s.step(metal3v1alpha1.RegistrationError, "deleting the host from the provisioner", res, err); !done {
		return err
	}
	s.removeFinalizer = true
	return nil
}

// handleUnmanaged waits for BMC details, then starts registering.
func (s *hostScope) handleUnmanaged() error {
	h := s.host
	if !h.HasBMCDetails() {
		if h.Status.Provisioning.State != metal3v1alpha1.StateUnmanaged || h.Status.OperationalStatus != metal3v1alpha1.OperationalStatusDiscovered {
			h.Status.OperationalStatus = metal3v1alpha1.OperationalStatusDiscovered
			s.setState(metal3v1alpha1.StateUnmanaged)
		}
		return nil
	}
	if h.Status.OperationalStatus == "" || h.Status.OperationalStatus == metal3v1alpha1.OperationalStatusDiscovered {
		h.Status.OperationalStatus = metal3v1alpha1.OperationalStatusOK
	}
	s.start(metal3v1alpha1.StateRegistering)
	return nil
}

// open resolves the credentials and opens the host's provisioner; a
// failure is an error of type t. It returns the credentials Secret.
func (s *hostScope) open(t metal3v1alpha1.ErrorType) (*corev1.Secret, error) {
	h := s.host
	sec, creds, err := s.r.credentials(s.ctx, h)
	if sec != nil {
		h.UpdateTriedCredentials(*sec)
	}
	if err != nil {
		return nil, s.fail(t, "reading the BMC credentials", err)
	}
	prov, err := s.r.open(s.ctx, h, creds)
	if err != nil {
		return nil, s.fail(t, "opening the BMC", err)
	}
	s.prov = prov
	return sec, nil
}

// connect opens the provisioner and registers the host, on every pass of
// a managed host: the engine is cheap to ask, and this is how a host it
// lost (deleted behind the controller's back) is enrolled again. New or
// changed credentials (a Secret of another name or resourceVersion than
// status.goodCredentials) are checked in place: the host stays in its
// state, and a failure is a registration error of that state. ok is false
// when the pass is to stop: a failure, or registration under way (Dirty).
func (s *hostScope) connect() (ok bool, err error) {
	h := s.host
	sec, err := s.open(s.registrationErrorType())
	if err != nil {
		return false, err
	}
	good := h.Status.GoodCredentials
	changed := good.Reference == nil || good.Reference.Name != sec.Name || good.Version != sec.ResourceVersion
	var current *metal3v1alpha1.Image
	if h.Status.Provisioning.Image.URL != "" {
		current = h.Status.Provisioning.Image.DeepCopy()
	}
	res, id, err := s.prov.Register(s.ctx, provisioner.RegisterData{
		CredentialsChanged:    changed,
		State:                 h.Status.Provisioning.State,
		AutomatedCleaningMode: h.Spec.AutomatedCleaningMode,
		CurrentImage:          current,
		HasCustomDeploy:       h.Status.Provisioning.CustomDeploy != nil,
	})
	if id != "" && err == nil {
		h.Status.Provisioning.ID = id
	}
	if done, err := s.step(s.registrationErrorType(), "registering the host", res, err); !done {
		return false, err
	}
	if isRegistrationError(h.Status.ErrorType) {
		s.clearError()
	}
	if changed {
		h.UpdateGoodCredentials(*sec)
		s.event("BMCAccessValidated", "the BMC accepted the credentials", false)
	}
	return true, nil
}

func (s *hostScope) registrationErrorType() metal3v1alpha1.ErrorType {
	if s.host.WasProvisioned() {
		return metal3v1alpha1.ProvisionedRegistrationError
	}
	return metal3v1alpha1.RegistrationError
}

func isRegistrationError(t metal3v1alpha1.ErrorType) bool {
	return t == metal3v1alpha1.RegistrationError || t == metal3v1alpha1.ProvisionedRegistrationError
}

// handleRegistering: connect registered the host; move on to inspection,
// or straight to externally provisioned or preparing (inspection disabled
// by the inspect.metal3.io annotation or spec.inspectionMode, or an
// inventory already known).
func (s *hostScope) handleRegistering() error {
	h := s.host
	s.finish(metal3v1alpha1.StateRegistering)
	s.clearError()
	s.event("Registered", "registered", false)
	switch {
	case h.Spec.ExternallyProvisioned:
		s.setState(metal3v1alpha1.StateExternallyProvisioned)
	case h.NeedsHardwareInspection():
		s.start(metal3v1alpha1.StateInspecting)
	default:
		s.setState(metal3v1alpha1.StatePreparing)
	}
	return nil
}

// inspectionRequested reports whether the inspect.metal3.io annotation
// asks for an inspection: any value but "disabled".
func inspectionRequested(h *metal3v1alpha1.BareMetalHost) bool {
	v, ok := h.Annotations[metal3v1alpha1.InspectAnnotationPrefix]
	return ok && v != metal3v1alpha1.InspectAnnotationValueDisabled //nolint:staticcheck // the legacy annotation is still honoured, as upstream's InspectionDisabled does
}

// handleInspecting reads the inventory into status.hardware. An
// inspection the inspect.metal3.io annotation asked for refreshes a known
// inventory, and the annotation is removed once it is done.
func (s *hostScope) handleInspecting() error {
	h := s.host
	refresh := inspectionRequested(h)
	res, hw, err := s.prov.Inspect(s.ctx, provisioner.InspectData{Refresh: refresh})
	if done, err := s.step(metal3v1alpha1.InspectionError, "inspecting", res, err); !done {
		return err
	}
	if hw != nil {
		h.Status.HardwareDetails = hw
	}
	h.SetHardwareProfile("unknown")
	if refresh {
		s.clearAnnotations = append(s.clearAnnotations, metal3v1alpha1.InspectAnnotationPrefix)
	}
	s.finish(metal3v1alpha1.StateInspecting)
	s.clearError()
	s.event("InspectionComplete", "hardware inventory read", false)
	s.setState(metal3v1alpha1.StatePreparing)
	return nil
}

// handlePreparing applies the root device hints, RAID and firmware
// settings (the direct provisioner has none to apply) and records the boot
// mode and hints the host will use. The inspect.metal3.io annotation sends
// the host back to inspecting first.
func (s *hostScope) handlePreparing() error {
	h := s.host
	if inspectionRequested(h) {
		s.start(metal3v1alpha1.StateInspecting)
		return nil
	}
	res, err := s.prov.Prepare(s.ctx, provisioner.PrepareData{
		RootDeviceHints:       h.Spec.RootDeviceHints.DeepCopy(),
		RAID:                  h.Spec.RAID.DeepCopy(),
		Firmware:              h.Spec.Firmware.DeepCopy(), //nolint:staticcheck // deprecated upstream, still served: PrepareData carries it to an engine that applies it
		AutomatedCleaningMode: h.Spec.AutomatedCleaningMode,
	})
	if done, err := s.step(metal3v1alpha1.PreparationError, "preparing", res, err); !done {
		return err
	}
	h.Status.Provisioning.BootMode = h.BootMode()
	h.Status.Provisioning.RootDeviceHints = h.Spec.RootDeviceHints.DeepCopy()
	s.clearError()
	s.setState(metal3v1alpha1.StateAvailable)
	return nil
}

// handleAvailable starts provisioning when an image is set and the host is
// to be online, or a new inspection when the inspect.metal3.io annotation
// asks; otherwise it keeps the power as spec.online asks.
func (s *hostScope) handleAvailable() error {
	h := s.host
	if h.Spec.ExternallyProvisioned {
		s.setState(metal3v1alpha1.StateExternallyProvisioned)
		return nil
	}
	if inspectionRequested(h) {
		s.start(metal3v1alpha1.StateInspecting)
		return nil
	}
	if h.NeedsProvisioning() {
		s.start(metal3v1alpha1.StateProvisioning)
		return nil
	}
	return s.managePower()
}

// handleProvisioning provisions the image (or the custom deploy) with the
// host's user-data, network-data and meta-data, and boots the host into
// it. An image and custom deploy taken away before they were written are
// undone.
func (s *hostScope) handleProvisioning() error {
	h := s.host
	if !hasImage(h) && !hasCustomDeploy(h) {
		s.start(metal3v1alpha1.StateDeprovisioning)
		return nil
	}
	data, err := s.provisionData()
	if err != nil {
		return s.fail(metal3v1alpha1.ProvisioningError, "reading the host's data Secrets", err)
	}
	res, err := s.prov.Provision(s.ctx, data)
	if done, err := s.step(metal3v1alpha1.ProvisioningError, "provisioning", res, err); !done {
		return err
	}
	h.Status.PoweredOn = true
	h.Status.Provisioning.Image = metal3v1alpha1.Image{}
	var msg string
	if hasImage(h) {
		h.Status.Provisioning.Image = *h.Spec.Image.DeepCopy()
		msg = "image " + h.Spec.Image.URL + " provisioned"
	} else {
		msg = "custom deploy " + h.Spec.CustomDeploy.Method + " done"
	}
	h.Status.Provisioning.CustomDeploy = h.Spec.CustomDeploy.DeepCopy()
	s.finish(metal3v1alpha1.StateProvisioning)
	s.clearError()
	s.event("ProvisioningComplete", msg, false)
	s.setState(metal3v1alpha1.StateProvisioned)
	return nil
}

// hasImage reports whether the host names an image to provision.
func hasImage(h *metal3v1alpha1.BareMetalHost) bool {
	return h.Spec.Image != nil && h.Spec.Image.URL != ""
}

// hasCustomDeploy reports whether the host names a custom deploy method.
func hasCustomDeploy(h *metal3v1alpha1.BareMetalHost) bool {
	return h.Spec.CustomDeploy != nil && h.Spec.CustomDeploy.Method != ""
}

// handleProvisioned deprovisions when both the image and the custom
// deploy are taken away; otherwise it has the provisioner adopt the host
// (an engine that lost it takes it as deployed) and keeps the power as
// asked.
func (s *hostScope) handleProvisioned() error {
	h := s.host
	state := h.Status.Provisioning.State
	if state == metal3v1alpha1.StateProvisioned && !hasImage(h) && !hasCustomDeploy(h) {
		s.start(metal3v1alpha1.StateDeprovisioning)
		return nil
	}
	if state == metal3v1alpha1.StateExternallyProvisioned && !h.Spec.ExternallyProvisioned {
		s.setState(metal3v1alpha1.StatePreparing)
		return nil
	}
	res, err := s.prov.Adopt(s.ctx, provisioner.AdoptData{State: state, Image: *h.Status.Provisioning.Image.DeepCopy()})
	if done, err := s.step(metal3v1alpha1.ProvisionedRegistrationError, "adopting the host", res, err); !done {
		return err
	}
	return s.managePower()
}

// handleDeprovisioning undoes provisioning, cleaning as
// spec.automatedCleaningMode asks, and leaves the host off.
//
// Every way into deprovisioning starts its metric (start); a retry here
// keeps it, and finish stamps a start for a host that came in another way
// (a restored status).
func (s *hostScope) handleDeprovisioning(deleting bool) error {
	h := s.host
	res, err := s.prov.Deprovision(s.ctx, provisioner.DeprovisionData{AutomatedCleaningMode: h.Spec.AutomatedCleaningMode})
	if done, err := s.step(metal3v1alpha1.ProvisioningError, "deprovisioning", res, err); !done {
		return err
	}
	h.Status.PoweredOn = false
	h.Status.Provisioning.Image = metal3v1alpha1.Image{}
	h.Status.Provisioning.CustomDeploy = nil
	s.finish(metal3v1alpha1.StateDeprovisioning)
	s.clearError()
	s.event("DeprovisioningComplete", "deprovisioned and powered off", false)
	if deleting {
		s.setState(metal3v1alpha1.StatePoweringOffBeforeDelete)
	} else {
		s.setState(metal3v1alpha1.StateAvailable)
	}
	return nil
}

// step reads a provisioner's answer for a step: an error or an
// ErrorMessage is a failure of type t (fail: recorded, retried after the
// backoff); a Dirty result keeps the host where it is, to look again after
// the result's RequeueAfter (ProvisionPollInterval when 0), and is no
// error. done is true when the step finished.
func (s *hostScope) step(t metal3v1alpha1.ErrorType, doing string, res provisioner.Result, err error) (done bool, _ error) {
	switch {
	case err != nil:
		return false, s.fail(t, doing, err)
	case res.ErrorMessage != "":
		return false, s.fail(t, doing, errors.New(res.ErrorMessage))
	case res.Dirty:
		s.wait = res.RequeueAfter
		if s.wait <= 0 {
			s.wait = s.r.ProvisionPollInterval
		}
		if s.wait <= 0 {
			s.wait = DefaultProvisionPollInterval
		}
		// Progress says how long the engine has been at it; once that is
		// too long the provisioner answers an ErrorMessage instead, which
		// the status shows.
		log.FromContext(s.ctx).V(1).Info("under way", "step", doing, "after", s.wait, "progress", res.Progress)
		return false, nil
	}
	return true, nil
}
