package operatorkit

import (
	"errors"
	"fmt"
	"time"
)

// The outcomes of a reconcile pass. A step returns nil when it is done, a
// WaitingError when something else must happen first, a StalledError when
// nothing will change until the spec (or an object it names) does, and any
// other error for a failure worth retrying with backoff (with a reason when
// it is a FailedError). Outcome sorts them once, so every reconciler turns
// them into conditions, events and requeues the same way.

// WaitingError means the object is progressing but waits for something
// outside this pass: a host to provision, a workload to become ready. It is
// not a failure: no backoff, no error log.
type WaitingError struct {
	// Condition names the condition that waits, for reconcilers that keep
	// one per step ("" means Ready).
	Condition string
	// Reason is the condition reason (CamelCase).
	Reason string
	// Message says what is awaited; it must carry no secret.
	Message string
	// After is when to look again; 0 leaves it to the reconciler's poll
	// interval or to a watch.
	After time.Duration
	// Err is the error the wait was made from (WaitErr), if any.
	Err error
}

func (e *WaitingError) Error() string { return e.Message }
func (e *WaitingError) Unwrap() error { return e.Err }

// WaitErr turns err into a wait: err's text is the message and errors.Is
// and As still reach it.
func WaitErr(reason string, after time.Duration, err error) error {
	return &WaitingError{Reason: reason, Message: err.Error(), After: after, Err: err}
}

// Wait returns a WaitingError with a formatted message.
func Wait(reason string, after time.Duration, format string, args ...any) error {
	return &WaitingError{Reason: reason, Message: fmt.Sprintf(format, args...), After: after}
}

// WaitOn is Wait for a named condition.
func WaitOn(condition, reason string, after time.Duration, format string, args ...any) error {
	return &WaitingError{Condition: condition, Reason: reason, Message: fmt.Sprintf(format, args...), After: after}
}

// StalledError means retrying cannot help: the spec, or an object it
// names, is wrong and must change. The controller does not requeue; a
// watch on the object (and what it names) brings it back.
type StalledError struct {
	Reason string
	Err    error
}

func (e *StalledError) Error() string { return e.Err.Error() }
func (e *StalledError) Unwrap() error { return e.Err }

// Stall returns a StalledError.
func Stall(reason string, err error) error { return &StalledError{Reason: reason, Err: err} }

// Stallf is Stall with a formatted error.
func Stallf(reason, format string, args ...any) error {
	return &StalledError{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// FailedError is a retryable failure with a condition reason of its own
// (a plain error gets the reconciler's default failure reason).
type FailedError struct {
	Reason string
	Err    error
}

func (e *FailedError) Error() string { return e.Err.Error() }
func (e *FailedError) Unwrap() error { return e.Err }

// Fail returns a FailedError.
func Fail(reason string, err error) error { return &FailedError{Reason: reason, Err: err} }

// OutcomeKind sorts the result of a pass.
type OutcomeKind int

const (
	// Succeeded: the pass did everything it had to.
	Succeeded OutcomeKind = iota
	// Waiting: progressing, waiting on something outside the pass.
	Waiting
	// Stalled: needs a spec change; not retried.
	Stalled
	// Failed: an error, retried with backoff.
	Failed
)

func (k OutcomeKind) String() string {
	switch k {
	case Succeeded:
		return "Succeeded"
	case Waiting:
		return "Waiting"
	case Stalled:
		return "Stalled"
	default:
		return "Failed"
	}
}

// Outcome is a pass's result, sorted.
type Outcome struct {
	Kind OutcomeKind
	// Condition is the condition a Waiting outcome names ("" for Ready).
	Condition string
	// Reason is the condition reason: the error's own, or failedReason for
	// a plain error; "" when Succeeded.
	Reason string
	// Message is the error text ("" when Succeeded).
	Message string
	// After is a Waiting outcome's requeue delay.
	After time.Duration
	// Err is the error the pass returned.
	Err error
}

// OutcomeOf sorts err; failedReason is the reason of a plain error ("" is
// allowed: a reconciler whose plain errors leave its conditions as they
// were checks for an empty Reason).
func OutcomeOf(err error, failedReason string) Outcome {
	if err == nil {
		return Outcome{Kind: Succeeded}
	}
	var w *WaitingError
	if errors.As(err, &w) {
		return Outcome{Kind: Waiting, Condition: w.Condition, Reason: w.Reason, Message: w.Message, After: w.After, Err: err}
	}
	var s *StalledError
	if errors.As(err, &s) {
		return Outcome{Kind: Stalled, Reason: s.Reason, Message: err.Error(), Err: err}
	}
	o := Outcome{Kind: Failed, Reason: failedReason, Message: err.Error(), Err: err}
	var f *FailedError
	if errors.As(err, &f) {
		o.Reason = f.Reason
	}
	return o
}

// IsWaiting reports whether err is (or wraps) a WaitingError.
func IsWaiting(err error) bool {
	var w *WaitingError
	return errors.As(err, &w)
}

// IsStalled reports whether err is (or wraps) a StalledError.
func IsStalled(err error) bool {
	var s *StalledError
	return errors.As(err, &s)
}
