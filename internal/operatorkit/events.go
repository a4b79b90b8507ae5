package operatorkit

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// Events records events for one reconciler. A nil Recorder records
// nothing (unit tests); notes are truncated to MaxMessage. Notes must
// carry no secret: reconcilers build them from their own words and
// scrubbed error text.
type Events struct {
	Recorder events.EventRecorder
}

// Record emits one event about obj. action is the verb the event is about
// (Reconcile, Install, Provision...); "" uses reason.
func (e Events) Record(obj runtime.Object, eventType, reason, action, note string) {
	e.RecordRelated(obj, nil, eventType, reason, action, note)
}

// RecordRelated is Record with a second object the event is also about
// (an owner acting on a member: the group enabling a chart).
func (e Events) RecordRelated(obj, related runtime.Object, eventType, reason, action, note string) {
	if e.Recorder == nil {
		return
	}
	if action == "" {
		action = reason
	}
	e.Recorder.Eventf(obj, related, eventType, reason, action, "%s", Truncate(note))
}

// OnTransition emits the event only when changed is true: reconcilers
// pass ConditionChanged (or their own comparison of the status before and
// after the pass), so a pass that repeats the last one stays quiet.
func (e Events) OnTransition(changed bool, obj runtime.Object, eventType, reason, action, note string) {
	if changed {
		e.Record(obj, eventType, reason, action, note)
	}
}
