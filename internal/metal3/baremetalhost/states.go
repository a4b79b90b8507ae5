package baremetalhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/refs"
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
// A handler returns nil when it is done; a StalledError when no retry can
// help; any other error (always fail's) for a failed step, which it has
// already recorded in the status as upstream does (errorType,
// errorMessage, errorCount): the step is retried after a backoff counted
// by errorCount. Entering another state, or settling (poll), is said in
// the fields below.
type hostScope struct {
	r    *BareMetalHostReconciler
	host *metal3v1alpha1.BareMetalHost
	ctx  context.Context
	prov provisioner.BMC

	events                []hostEvent
	stateChanged          bool
	removeFinalizer       bool
	clearRebootAnnotation string
	// poll is set when the host settled as spec.online asks: its power
	// is read again after PowerPollInterval, to notice changes made
	// behind the controller's back.
	poll bool
}

// requeue is when the host is looked at again after a pass with outcome
// o: soon after a state change (the next state's handler runs), after the
// backoff when a step failed, after the power poll interval when the host
// settled, and otherwise only when something changes (a watch).
func (s *hostScope) requeue(o operatorkit.Outcome) reconcile.Result {
	switch {
	case s.stateChanged:
		// The short wait lets the cache see the status just written.
		return reconcile.Result{RequeueAfter: nextStateDelay}
	case o.Kind == operatorkit.Failed:
		return reconcile.Result{RequeueAfter: s.r.backoff().Delay(int64(s.host.Status.ErrorCount))}
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
		// Detached: no BMC action at all, deletion included.
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
	if st.OperationalStatus == metal3v1alpha1.OperationalStatusDetached {
		// The annotation is gone: manage the host again from where it was.
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
	// Every managed state needs working credentials; new or changed ones
	// are registered in place, whatever the state (see connect).
	if err := s.connect(); err != nil {
		return err
	}
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

// runDeleting takes a deleted host through deprovisioning (when it was
// provisioned), powering off before delete and deleting.
func (s *hostScope) runDeleting() error {
	st := &s.host.Status
	switch st.Provisioning.State {
	case metal3v1alpha1.StateNone, metal3v1alpha1.StateUnmanaged, metal3v1alpha1.StateDeleting:
		s.removeFinalizer = true
		return nil
	}
	if st.GoodCredentials.Reference == nil {
		// Never registered: nothing on the BMC to undo.
		s.setState(metal3v1alpha1.StateDeleting)
		s.removeFinalizer = true
		return nil
	}
	if err := s.connect(); err != nil {
		return err
	}
	switch st.Provisioning.State {
	case metal3v1alpha1.StateProvisioning, metal3v1alpha1.StateProvisioned:
		s.start(metal3v1alpha1.StateDeprovisioning)
		return nil
	case metal3v1alpha1.StateDeprovisioning:
		return s.handleDeprovisioning(true)
	case metal3v1alpha1.StatePoweringOffBeforeDelete:
		if err := s.prov.PowerOff(s.ctx, true); err != nil {
			return s.fail(metal3v1alpha1.PowerManagementError, "powering off before delete", err)
		}
		st.PoweredOn = false
		s.clearError()
		s.setState(metal3v1alpha1.StateDeleting)
		s.removeFinalizer = true
		return nil
	default:
		s.setState(metal3v1alpha1.StatePoweringOffBeforeDelete)
		return nil
	}
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

// connect resolves the credentials and opens the provisioner. New or
// changed credentials (a Secret of another name or resourceVersion than
// status.goodCredentials) are registered in place before anything else
// happens: the host stays in its state, and a failure is a registration
// error of that state.
func (s *hostScope) connect() error {
	h := s.host
	sec, creds, err := s.r.credentials(s.ctx, h)
	if sec != nil {
		h.UpdateTriedCredentials(*sec)
	}
	if err != nil {
		return s.fail(s.registrationErrorType(), "reading the BMC credentials", err)
	}
	prov, err := s.r.open(s.ctx, h, creds)
	if err != nil {
		return s.fail(s.registrationErrorType(), "opening the BMC", err)
	}
	s.prov = prov
	good := h.Status.GoodCredentials
	if good.Reference == nil || good.Reference.Name != sec.Name || good.Version != sec.ResourceVersion {
		if err := prov.Register(s.ctx); err != nil {
			return s.fail(s.registrationErrorType(), "registering with the BMC", err)
		}
		h.UpdateGoodCredentials(*sec)
		if isRegistrationError(h.Status.ErrorType) {
			s.clearError()
		}
		s.event("BMCAccessValidated", "the BMC accepted the credentials", false)
	}
	return nil
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

// handleRegistering: connect registered the credentials; move on to
// inspection, or straight to externally provisioned or preparing.
func (s *hostScope) handleRegistering() error {
	h := s.host
	s.finish(metal3v1alpha1.StateRegistering)
	s.clearError()
	s.event("Registered", "registered with the BMC", false)
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

// handleInspecting reads the inventory into status.hardware.
func (s *hostScope) handleInspecting() error {
	h := s.host
	hw, err := s.prov.Inspect(s.ctx)
	if err != nil {
		return s.fail(metal3v1alpha1.InspectionError, "inspecting", err)
	}
	h.Status.HardwareDetails = hw
	h.SetHardwareProfile("unknown")
	s.finish(metal3v1alpha1.StateInspecting)
	s.clearError()
	s.event("InspectionComplete", "hardware inventory read from the BMC", false)
	s.setState(metal3v1alpha1.StatePreparing)
	return nil
}

// handlePreparing has nothing to apply (no RAID or firmware settings
// through Redfish here) and records the boot mode the host will use.
func (s *hostScope) handlePreparing() error {
	h := s.host
	h.Status.Provisioning.BootMode = h.BootMode()
	h.Status.Provisioning.RootDeviceHints = h.Spec.RootDeviceHints.DeepCopy()
	s.clearError()
	s.setState(metal3v1alpha1.StateAvailable)
	return nil
}

// handleAvailable starts provisioning when an image is set and the host is
// to be online; otherwise it keeps the power as spec.online asks.
func (s *hostScope) handleAvailable() error {
	h := s.host
	if h.Spec.ExternallyProvisioned {
		s.setState(metal3v1alpha1.StateExternallyProvisioned)
		return nil
	}
	if h.NeedsProvisioning() {
		s.start(metal3v1alpha1.StateProvisioning)
		return nil
	}
	return s.managePower()
}

// handleProvisioning boots the image from virtual media with the host's
// user-data, network-data and meta-data: unless the virtual CD already
// holds the image's URL, it inserts the image and restarts the host into
// it; then it powers the host on if it is off. A custom deploy without an
// image is provisionCustomDeploy's.
func (s *hostScope) handleProvisioning() error {
	h := s.host
	if !hasImage(h) {
		if hasCustomDeploy(h) {
			return s.provisionCustomDeploy()
		}
		// The image was taken away before it was written: undo.
		s.start(metal3v1alpha1.StateDeprovisioning)
		return nil
	}
	media, err := s.bootMedia()
	if err != nil {
		return s.fail(metal3v1alpha1.ProvisioningError, "reading the host's data Secrets", err)
	}
	state, err := s.prov.Media(s.ctx)
	if err != nil {
		return s.fail(metal3v1alpha1.ProvisioningError, "reading the virtual media", err)
	}
	if !state.Inserted || state.Image != media.Image.URL {
		if err := s.prov.Boot(s.ctx, media); err != nil {
			return s.fail(metal3v1alpha1.ProvisioningError, "booting the image from virtual media", err)
		}
	}
	power, err := s.prov.PowerState(s.ctx)
	if err != nil {
		return s.fail(metal3v1alpha1.ProvisioningError, "reading the power state", err)
	}
	if power != provisioner.PowerOn {
		if err := s.prov.PowerOn(s.ctx); err != nil {
			return s.fail(metal3v1alpha1.ProvisioningError, "powering on", err)
		}
	}
	h.Status.PoweredOn = true
	h.Status.Provisioning.Image = *h.Spec.Image.DeepCopy()
	h.Status.Provisioning.ID = string(h.UID)
	h.Status.Provisioning.CustomDeploy = h.Spec.CustomDeploy.DeepCopy()
	s.finish(metal3v1alpha1.StateProvisioning)
	s.clearError()
	s.event("ProvisioningComplete", "image "+h.Spec.Image.URL+" booted", false)
	s.setState(metal3v1alpha1.StateProvisioned)
	return nil
}

// provisionCustomDeploy provisions a host that has spec.customDeploy and no
// image. Upstream hands the method to the deploy ramdisk; there is none
// here, so nothing is booted from media (the virtual CD is left as it is)
// and the host is powered on as spec.online asks: whatever deploys it is
// outside this controller. status.provisioning.customDeploy records the
// method, so the host is provisioned until spec.customDeploy goes.
func (s *hostScope) provisionCustomDeploy() error {
	h := s.host
	power, err := s.prov.PowerState(s.ctx)
	if err != nil {
		return s.fail(metal3v1alpha1.ProvisioningError, "reading the power state", err)
	}
	h.Status.PoweredOn = power == provisioner.PowerOn
	if h.Spec.Online && power != provisioner.PowerOn {
		if err := s.prov.PowerOn(s.ctx); err != nil {
			return s.fail(metal3v1alpha1.ProvisioningError, "powering on", err)
		}
		h.Status.PoweredOn = true
	}
	h.Status.Provisioning.Image = metal3v1alpha1.Image{}
	h.Status.Provisioning.ID = string(h.UID)
	h.Status.Provisioning.CustomDeploy = h.Spec.CustomDeploy.DeepCopy()
	s.finish(metal3v1alpha1.StateProvisioning)
	s.clearError()
	s.event("ProvisioningComplete", "custom deploy "+h.Spec.CustomDeploy.Method+": no deploy ramdisk here, nothing booted from media", false)
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

// handleProvisioned keeps the power as asked and deprovisions when both
// the image and the custom deploy are taken away.
func (s *hostScope) handleProvisioned() error {
	h := s.host
	if h.Status.Provisioning.State == metal3v1alpha1.StateProvisioned && !hasImage(h) && !hasCustomDeploy(h) {
		s.start(metal3v1alpha1.StateDeprovisioning)
		return nil
	}
	if h.Status.Provisioning.State == metal3v1alpha1.StateExternallyProvisioned && !h.Spec.ExternallyProvisioned {
		s.setState(metal3v1alpha1.StatePreparing)
		return nil
	}
	return s.managePower()
}

// handleDeprovisioning ejects the media and powers off. Automated cleaning
// ("metadata") has no disk to wipe over Redfish alone: the host's image is
// only ever on virtual media here, so ejecting it is the cleaning.
//
// Every way into deprovisioning starts its metric (start); a retry here
// keeps it, and finish stamps a start for a host that came in another way
// (a restored status).
func (s *hostScope) handleDeprovisioning(deleting bool) error {
	h := s.host
	if err := s.prov.EjectMedia(s.ctx); err != nil {
		return s.fail(metal3v1alpha1.ProvisioningError, "ejecting the virtual media", err)
	}
	if err := s.prov.PowerOff(s.ctx, true); err != nil {
		return s.fail(metal3v1alpha1.PowerManagementError, "powering off", err)
	}
	h.Status.PoweredOn = false
	h.Status.Provisioning.Image = metal3v1alpha1.Image{}
	h.Status.Provisioning.CustomDeploy = nil
	h.Status.Provisioning.ID = ""
	s.finish(metal3v1alpha1.StateDeprovisioning)
	s.clearError()
	s.event("DeprovisioningComplete", "virtual media ejected and host powered off", false)
	if deleting {
		s.setState(metal3v1alpha1.StatePoweringOffBeforeDelete)
	} else {
		s.setState(metal3v1alpha1.StateAvailable)
	}
	return nil
}

// managePower makes the power state what spec.online and the reboot
// annotations ask: an unsuffixed reboot annotation reboots a host that is
// to be online once and is removed; on a host whose spec.online is false it
// is removed without a reboot, as upstream leaves an offline host off. A
// suffixed one keeps the host off until it is removed.
func (s *hostScope) managePower() error {
	h := s.host
	power, err := s.prov.PowerState(s.ctx)
	if err != nil {
		return s.fail(metal3v1alpha1.PowerManagementError, "reading the power state", err)
	}
	h.Status.PoweredOn = power == provisioner.PowerOn
	rebootNow, force, keepOff := s.rebootRequest()
	want := h.Spec.Online && !keepOff
	if rebootNow != "" && !keepOff && !h.Spec.Online {
		s.clearRebootAnnotation = rebootNow
		rebootNow = ""
		log.FromContext(s.ctx).Info("spec.online is false: removing the reboot annotation without rebooting", "annotation", metal3v1alpha1.RebootAnnotationPrefix)
		s.event("RebootSkipped", "spec.online is false: the "+metal3v1alpha1.RebootAnnotationPrefix+" annotation was removed without a reboot", false)
	}
	switch {
	case rebootNow != "" && !keepOff:
		if err := s.prov.Reboot(s.ctx, force); err != nil {
			return s.fail(metal3v1alpha1.PowerManagementError, "rebooting", err)
		}
		h.Status.PoweredOn = true
		s.clearRebootAnnotation = rebootNow
		s.event("Rebooted", "rebooted as the "+metal3v1alpha1.RebootAnnotationPrefix+" annotation asked", false)
	case want && power != provisioner.PowerOn:
		if err := s.prov.PowerOn(s.ctx); err != nil {
			return s.fail(metal3v1alpha1.PowerManagementError, "powering on", err)
		}
		h.Status.PoweredOn = true
		s.event("PowerOn", "host powered on", false)
	case !want && power == provisioner.PowerOn:
		if err := s.prov.PowerOff(s.ctx, force); err != nil {
			return s.fail(metal3v1alpha1.PowerManagementError, "powering off", err)
		}
		h.Status.PoweredOn = false
		s.event("PowerOff", "host powered off", false)
	}
	if h.Status.ErrorType == metal3v1alpha1.PowerManagementError || isRegistrationError(h.Status.ErrorType) {
		s.clearError()
	}
	s.poll = true
	return nil
}

// rebootRequest reads the host's reboot annotations: rebootNow names the
// unsuffixed one, keepOff says a suffixed one is there, force that any
// asks for a hard reboot. An annotation whose value is not JSON still
// counts, without arguments.
func (s *hostScope) rebootRequest() (rebootNow string, force, keepOff bool) {
	for k, v := range s.host.Annotations {
		if k != metal3v1alpha1.RebootAnnotationPrefix && !strings.HasPrefix(k, metal3v1alpha1.RebootAnnotationPrefix+"/") {
			continue
		}
		var args metal3v1alpha1.RebootAnnotationArguments
		if v != "" {
			if err := json.Unmarshal([]byte(v), &args); err != nil {
				log.FromContext(s.ctx).Info("ignoring a reboot annotation that is not JSON", "annotation", k)
			}
		}
		force = force || args.Mode == metal3v1alpha1.RebootModeHard || args.Force
		if k == metal3v1alpha1.RebootAnnotationPrefix {
			rebootNow = k
		} else {
			keepOff = true
		}
	}
	return rebootNow, force, keepOff
}

// bootMedia gathers the image and the contents of the data Secrets. The
// meta-data is what upstream baremetal-operator puts in a config drive:
// the defaults uuid (the host's UID), metal3-namespace, metal3-name,
// local-hostname, local_hostname and name, with the spec.metaData Secret's
// keys (JSON or YAML) over them, as JSON.
func (s *hostScope) bootMedia() (provisioner.BootMedia, error) {
	h := s.host
	m := provisioner.BootMedia{Image: *h.Spec.Image.DeepCopy()}
	var err error
	if m.UserData, err = s.secretData(h.Spec.UserData, "spec.userData", "userData", "value"); err != nil {
		return m, err
	}
	if m.NetworkData, err = s.secretData(h.Spec.NetworkData, "spec.networkData", "networkData", "nmstate"); err != nil {
		return m, err
	}
	raw, err := s.secretData(h.Spec.MetaData, "spec.metaData", "metaData")
	if err != nil {
		return m, err
	}
	meta := map[string]any{
		"uuid":             string(h.UID),
		"metal3-namespace": h.Namespace,
		"metal3-name":      h.Name,
		"local-hostname":   h.Name,
		"local_hostname":   h.Name,
		"name":             h.Name,
	}
	if len(raw) > 0 {
		var given map[string]any
		if err := yaml.Unmarshal(raw, &given); err != nil {
			// The decoder's message may quote the data: name the Secret only.
			return m, fmt.Errorf("spec.metaData: Secret %s/%s key metaData is not a JSON or YAML mapping", h.Namespace, h.Spec.MetaData.Name)
		}
		maps.Copy(meta, given)
	}
	if m.MetaData, err = json.Marshal(meta); err != nil {
		return m, fmt.Errorf("spec.metaData: encoding the meta-data: %w", err)
	}
	return m, nil
}

// secretData reads the first of keys from the referenced Secret, always in
// the host's namespace.
func (s *hostScope) secretData(ref *corev1.SecretReference, field string, keys ...string) ([]byte, error) {
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	// Reconcile refuses such a host; this guards every other path.
	if err := refs.Check("BareMetalHost", s.host.Namespace, refs.Ref{Field: field, Namespace: ref.Namespace}); err != nil {
		return nil, err
	}
	ns := s.host.Namespace
	sec := &corev1.Secret{}
	if err := s.r.Client.Get(s.ctx, clientKey(ns, ref.Name), sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s: Secret %s/%s not found", field, ns, ref.Name)
		}
		return nil, fmt.Errorf("%s: reading Secret %s/%s: %w", field, ns, ref.Name, err)
	}
	for _, k := range keys {
		if v, ok := sec.Data[k]; ok {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%s: Secret %s/%s has none of the keys %s", field, ns, ref.Name, strings.Join(keys, ", "))
}

// setState moves the host to a new state.
func (s *hostScope) setState(state metal3v1alpha1.ProvisioningState) {
	if s.host.Status.Provisioning.State == state {
		return
	}
	log.FromContext(s.ctx).Info("state changed", "from", s.host.Status.Provisioning.State, "to", state)
	s.host.Status.Provisioning.State = state
	s.stateChanged = true
}

// start enters a timed state, stamping its operation history start.
func (s *hostScope) start(state metal3v1alpha1.ProvisioningState) {
	s.startMetric(state)
	s.setState(state)
}

func (s *hostScope) startMetric(state metal3v1alpha1.ProvisioningState) {
	if m := s.host.OperationMetricForState(state); m != nil {
		m.Start = metav1.NewTime(s.r.Clock.Now())
		m.End = metav1.Time{}
	}
}

// finish stamps the end of a timed state.
func (s *hostScope) finish(state metal3v1alpha1.ProvisioningState) {
	if m := s.host.OperationMetricForState(state); m != nil {
		if m.Start.IsZero() {
			m.Start = metav1.NewTime(s.r.Clock.Now())
		}
		m.End = metav1.NewTime(s.r.Clock.Now())
	}
}

// fail records an error of the given type in the status and returns the
// failed outcome, retried after a backoff that grows with the host's
// error count (requeue). The message is built from the provisioner's
// error, which never holds a password.
func (s *hostScope) fail(t metal3v1alpha1.ErrorType, doing string, err error) error {
	h := s.host
	msg := doing + ": " + err.Error()
	if h.Status.ErrorType != t || h.Status.ErrorMessage != msg {
		s.event(eventReason(t), msg, true)
	}
	h.Status.ErrorType = t
	h.Status.ErrorMessage = msg
	h.Status.ErrorCount++
	h.Status.OperationalStatus = metal3v1alpha1.OperationalStatusError
	log.FromContext(s.ctx).Info("step failed; will retry", "errorType", t, "error", msg, "errorCount", h.Status.ErrorCount)
	return operatorkit.Fail(eventReason(t), fmt.Errorf("%s: %w", doing, err))
}

func (s *hostScope) setError(t metal3v1alpha1.ErrorType, msg string) {
	s.host.Status.ErrorType = t
	s.host.Status.ErrorMessage = msg
	s.host.Status.OperationalStatus = metal3v1alpha1.OperationalStatusError
}

// clearError resets the error fields after a step succeeded.
func (s *hostScope) clearError() {
	h := s.host
	h.Status.ErrorType = ""
	h.Status.ErrorMessage = ""
	h.Status.ErrorCount = 0
	if h.Status.OperationalStatus == metal3v1alpha1.OperationalStatusError || h.Status.OperationalStatus == "" {
		h.Status.OperationalStatus = metal3v1alpha1.OperationalStatusOK
	}
}

func (s *hostScope) event(reason, message string, warning bool) {
	s.events = append(s.events, hostEvent{reason: reason, message: message, warning: warning})
}

// eventReason turns an error type into an event reason.
func eventReason(t metal3v1alpha1.ErrorType) string {
	words := strings.Fields(string(t))
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, "")
}
