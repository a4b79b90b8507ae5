package operatorkit

import (
	"unicode/utf8"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The condition types kstatus (and so kubectl wait, Flux and Argo CD)
// reads: Ready is the summary; Reconciling is True while work is under
// way; Stalled is True when only a spec change can help. Reconciling and
// Stalled are abnormal-true: absent when false.
const (
	ReadyCondition       = "Ready"
	ReconcilingCondition = "Reconciling"
	StalledCondition     = "Stalled"
)

// MaxMessage bounds condition messages and event notes; the API server
// refuses condition messages over 32768 bytes.
const MaxMessage = 4096

// Truncate cuts s to at most MaxMessage bytes at a character boundary
// (the API server refuses a message that is not UTF-8), marking the cut.
func Truncate(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	cut := MaxMessage - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Conditions writes conditions of one object for one generation.
type Conditions struct {
	// List is the object's status.conditions.
	List *[]metav1.Condition
	// Generation is the metadata.generation the pass saw.
	Generation int64
}

// Set sets condition t, keeping its lastTransitionTime unless its status
// changes, with the message truncated.
func (c Conditions) Set(t string, status metav1.ConditionStatus, reason, message string) {
	apimeta.SetStatusCondition(c.List, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: Truncate(message), ObservedGeneration: c.Generation,
	})
}

// Remove drops condition t.
func (c Conditions) Remove(t string) { apimeta.RemoveStatusCondition(c.List, t) }

// SetOutcome writes Ready, Reconciling and Stalled for o, as kstatus reads
// them. readyReason and readyMessage describe success; message rewrites an
// error's text before it is stored (to scrub secrets), or is nil. For a
// failure, retryMessage (if not "") is the Reconciling message, saying
// when the next try is.
func (c Conditions) SetOutcome(o Outcome, readyReason, readyMessage string, scrub func(string) string, retryMessage string) {
	msg := o.Message
	if scrub != nil {
		msg = scrub(msg)
	}
	switch o.Kind {
	case Succeeded:
		c.Set(ReadyCondition, metav1.ConditionTrue, readyReason, readyMessage)
		c.Remove(ReconcilingCondition)
		c.Remove(StalledCondition)
	case Waiting:
		c.Set(ReadyCondition, metav1.ConditionFalse, o.Reason, msg)
		c.Set(ReconcilingCondition, metav1.ConditionTrue, o.Reason, msg)
		c.Remove(StalledCondition)
	case Stalled:
		c.Set(ReadyCondition, metav1.ConditionFalse, o.Reason, msg)
		c.Set(StalledCondition, metav1.ConditionTrue, o.Reason, msg)
		c.Remove(ReconcilingCondition)
	default:
		c.Set(ReadyCondition, metav1.ConditionFalse, o.Reason, msg)
		if retryMessage == "" {
			retryMessage = msg
		}
		c.Set(ReconcilingCondition, metav1.ConditionTrue, o.Reason, retryMessage)
		c.Remove(StalledCondition)
	}
}

// ConditionChanged reports whether condition t differs in status, reason
// or message between before and after (present in one and not the other
// counts). Times and observedGeneration do not count: this is what an
// event on transitions compares.
func ConditionChanged(before, after []metav1.Condition, t string) bool {
	x, y := apimeta.FindStatusCondition(before, t), apimeta.FindStatusCondition(after, t)
	if x == nil || y == nil {
		return x != y
	}
	return x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message
}
