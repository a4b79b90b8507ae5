package sipcluster

import (
	"context"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// maxMessage bounds a condition's message: the API server refuses a status
// with one over 32768 characters, and a message listing the faults of
// thousands of hosts could be longer.
const maxMessage = operatorkit.MaxMessage

// finish ends every pass: Ready (and Stalled) from the outcome, an event
// when Ready changed, the one status write, and when to look again.
func (r *SIPClusterReconciler) finish(ctx context.Context, c *sipv1.SIPCluster, snap *operatorkit.StatusSnapshot, done string, err error) (reconcile.Result, error) {
	o := operatorkit.OutcomeOf(err, "")
	if status, reason, msg, ok := readyOf(o, done); ok {
		msg = truncateMessage(msg)
		setReady(c, status, reason, msg)
		before := snap.Before().(*sipv1.SIPCluster).Status.Conditions
		changed := operatorkit.ConditionChanged(before, c.Status.Conditions, sipv1.ConditionTypeReady)
		operatorkit.Events{Recorder: r.Recorder}.OnTransition(changed, c, eventType(status, reason), reason, "", msg)
	}
	res, err := r.next(c, o)
	return operatorkit.Settle(res, err, snap.Patch(ctx, r.Client, c))
}

// readyOf is the Ready condition an outcome sets: True with done (the
// pass's summary) when it succeeded, False with the outcome's reason and
// message otherwise. A plain error (the hosts could not be listed) and a
// decommission that let the cluster go (done is "") say nothing about
// the cluster: Ready stays as it was.
func readyOf(o operatorkit.Outcome, done string) (status metav1.ConditionStatus, reason, msg string, ok bool) {
	switch {
	case o.Kind == operatorkit.Succeeded:
		return metav1.ConditionTrue, sipv1.ReasonTypeReconciliationSucceeded, done, done != ""
	case o.Reason == "":
		return "", "", "", false
	default:
		return metav1.ConditionFalse, o.Reason, o.Message, true
	}
}

// next is when to look at the cluster again: a failure's error goes to
// the work queue, which retries with backoff; a wait with a delay of its
// own (services becoming available) looks again then; anything else,
// stalled too, at the resync (Secrets are not watched). A deleted
// cluster needs no further look.
func (r *SIPClusterReconciler) next(c *sipv1.SIPCluster, o operatorkit.Outcome) (reconcile.Result, error) {
	switch {
	case o.Kind == operatorkit.Failed:
		return reconcile.Result{}, o.Err
	case !c.DeletionTimestamp.IsZero():
		return reconcile.Result{}, nil
	case o.Kind == operatorkit.Waiting && o.After > 0:
		return reconcile.Result{RequeueAfter: o.After}, nil
	default:
		return reconcile.Result{RequeueAfter: r.Resync}, nil
	}
}

// setReady sets the Ready condition, its message cut to maxMessage, and
// Stalled beside it while the spec is invalid (the API has Stalled for
// that reason only).
func setReady(c *sipv1.SIPCluster, status metav1.ConditionStatus, reason, msg string) {
	msg = truncateMessage(msg)
	conds := operatorkit.Conditions{List: &c.Status.Conditions, Generation: c.Generation}
	conds.Set(sipv1.ConditionTypeReady, status, reason, msg)
	if reason == sipv1.ReasonTypeInvalidSpec {
		conds.Set(sipv1.ConditionTypeStalled, metav1.ConditionTrue, reason, msg)
	} else {
		conds.Remove(sipv1.ConditionTypeStalled)
	}
}

// truncateMessage cuts msg to maxMessage bytes at a character boundary,
// marking the cut with " ...".
//
// operatorkit.Truncate also cuts at a character boundary, but marks the
// cut with "...": one byte more of the message is kept, and a message of
// two-byte characters cut by the kit is maxMessage bytes long where
// SIP's has always been maxMessage-1 (TestConditionMessageBounded holds
// it to that). SIP keeps its own marker so its condition messages stay
// as they were; conditions.Set's Truncate then leaves them alone.
func truncateMessage(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	cut := maxMessage - len(" ...")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + " ..."
}

// eventType is Normal for a ready cluster and one progressing as it
// should, Warning for everything else.
func eventType(status metav1.ConditionStatus, reason string) string {
	if status == metav1.ConditionTrue || reason == sipv1.ReasonTypeProgressing {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}
