package baremetalhost

import (
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
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/refs"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// provisionData gathers what Provision needs: the image or custom
// deploy, the root device hints, the boot mode and the contents of the
// data Secrets. The meta-data is what upstream baremetal-operator puts in
// a config drive: the defaults uuid (the host's UID), metal3-namespace,
// metal3-name, local-hostname, local_hostname and name, with the
// spec.metaData Secret's keys (JSON or YAML) over them, as JSON.
func (s *hostScope) provisionData() (provisioner.ProvisionData, error) {
	h := s.host
	m := provisioner.ProvisionData{
		CustomDeploy:    h.Spec.CustomDeploy.DeepCopy(),
		RootDeviceHints: h.Spec.RootDeviceHints.DeepCopy(),
		BootMode:        h.BootMode(),
	}
	if hasImage(h) {
		m.Image = h.Spec.Image.DeepCopy()
	}
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
// error or its Result.ErrorMessage, which never hold a password; an
// engine that does not answer (provisioner.ErrEngineUnavailable) says so
// in the message.
func (s *hostScope) fail(t metal3v1alpha1.ErrorType, doing string, err error) error {
	h := s.host
	msg := doing + ": " + err.Error()
	if errors.Is(err, provisioner.ErrEngineUnavailable) && !strings.Contains(msg, provisioner.ErrEngineUnavailable.Error()) {
		msg += " (" + provisioner.ErrEngineUnavailable.Error() + ")"
	}
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
