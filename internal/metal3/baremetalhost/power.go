package baremetalhost

import (
	"encoding/json"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// managePower makes the power state what spec.online and the reboot
// annotations ask: an unsuffixed reboot annotation reboots a host that is
// to be online once and is removed; on a host whose spec.online is false it
// is removed without a reboot, as upstream leaves an offline host off. A
// suffixed one keeps the host off until it is removed.
//
// One request per transition: a power request the provisioner reports
// under way (Dirty) is waited for, the host kept as it is; the next pass
// asks for the same state again, which the provisioner answers without
// sending another request while the first is in flight.
//
// A PowerOn or PowerOff event is recorded once per transition, when the
// host is seen in the state asked for: at once when the provisioner
// answers done, else (a request answered Dirty, as Ironic's always is) on
// the first later pass that sees the power reach its target, whether that
// pass reads it from the power state or gets done from the provisioner.
// Not when the request is accepted: the event says the host is on or
// off, and a request can still fail (that failure is the power management
// error instead); nor on each Dirty pass. The request answered Dirty is
// remembered in memory only (powerRequests): an operator restarted while
// one is under way records no event for it, rather than a second one.
// Reboot needs none of this: its annotation stays until the provisioner
// answers done, which is when Rebooted is recorded.
func (s *hostScope) managePower() error {
	h := s.host
	power, err := s.prov.PowerState(s.ctx)
	if err != nil {
		return s.fail(metal3v1alpha1.PowerManagementError, "reading the power state", err)
	}
	h.Status.PoweredOn = power == provisioner.PowerOn
	s.powerReached(power)
	rebootNow, force, keepOff := s.rebootRequest()
	want := h.Spec.Online && !keepOff
	if rebootNow != "" && !keepOff && !h.Spec.Online {
		s.clearAnnotations = append(s.clearAnnotations, rebootNow)
		rebootNow = ""
		log.FromContext(s.ctx).Info("spec.online is false: removing the reboot annotation without rebooting", "annotation", metal3v1alpha1.RebootAnnotationPrefix)
		s.event("RebootSkipped", "spec.online is false: the "+metal3v1alpha1.RebootAnnotationPrefix+" annotation was removed without a reboot", false)
	}
	var (
		res            provisioner.Result
		doing, reason  string
		message        string
		poweredOnAfter bool
		target         provisioner.PowerState
	)
	switch {
	case rebootNow != "" && !keepOff:
		res, err = s.prov.Reboot(s.ctx, force)
		doing, reason, poweredOnAfter = "rebooting", "Rebooted", true
		message = "rebooted as the " + metal3v1alpha1.RebootAnnotationPrefix + " annotation asked"
	case want && power != provisioner.PowerOn:
		res, err = s.prov.PowerOn(s.ctx)
		doing, reason, message, poweredOnAfter, target = "powering on", "PowerOn", "host powered on", true, provisioner.PowerOn
	case !want && power == provisioner.PowerOn:
		res, err = s.prov.PowerOff(s.ctx, force)
		doing, reason, message, target = "powering off", "PowerOff", "host powered off", provisioner.PowerOff
	}
	if doing != "" {
		done, err := s.step(metal3v1alpha1.PowerManagementError, doing, res, err)
		// A new request (or a reboot) replaces the one remembered; a
		// failed one is forgotten (its retry is a new request).
		s.r.powerRequests.Delete(h.UID)
		if !done {
			if err == nil && res.Dirty && target != "" {
				s.r.powerRequests.Store(h.UID, powerRequest{target: target, reason: reason, message: message})
			}
			return err
		}
		h.Status.PoweredOn = poweredOnAfter
		if reason == "Rebooted" {
			s.clearAnnotations = append(s.clearAnnotations, rebootNow)
		}
		s.event(reason, message, false)
	}
	if h.Status.ErrorType == metal3v1alpha1.PowerManagementError || isRegistrationError(h.Status.ErrorType) {
		s.clearError()
	}
	s.poll = true
	return nil
}

// powerRequest is a power-on or power-off under way: the state it goes
// to and the event recorded when the host gets there.
type powerRequest struct {
	target          provisioner.PowerState
	reason, message string
}

// powerReached records the event of the request under way once power is
// its target.
func (s *hostScope) powerReached(power provisioner.PowerState) {
	v, ok := s.r.powerRequests.Load(s.host.UID)
	if !ok {
		return
	}
	if req := v.(powerRequest); req.target == power {
		s.r.powerRequests.Delete(s.host.UID)
		s.event(req.reason, req.message, false)
	}
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
