package operatorkit

import "time"

// Backoff is the wait before retrying a failing object: Base after the
// first failure, doubled for each one after, never more than Max. The
// reconcilers count failures in the object's status rather than relying
// on the work queue's own backoff, which every successful poll of a wait
// resets.
type Backoff struct {
	Base time.Duration
	Max  time.Duration
}

// Delay is the wait after the n-th consecutive failure (n >= 1; n < 1 is
// treated as 1).
func (b Backoff) Delay(n int64) time.Duration {
	d := b.Base
	for i := int64(1); i < n && (b.Max <= 0 || d < b.Max); i++ {
		d *= 2
	}
	if b.Max > 0 {
		return min(d, b.Max)
	}
	return d
}
