package controller

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// stalledError is an error that retrying cannot fix: it needs a change to
// the spec. reason becomes the Stalled condition's reason.
type stalledError struct {
	reason string
	err    error
}

func (e *stalledError) Error() string { return e.err.Error() }
func (e *stalledError) Unwrap() error { return e.err }

func stall(reason string, err error) error { return &stalledError{reason: reason, err: err} }

func asStalled(err error) (*stalledError, bool) {
	var s *stalledError
	ok := errors.As(err, &s)
	return s, ok
}

// waitingError means the release is not ready yet; it is not a failure.
type waitingError struct{ msg string }

func (e *waitingError) Error() string { return e.msg }

// fetchingError means the chart's source (or a dependency's) is being
// fetched in the background; the chart is enqueued again when it is done.
type fetchingError struct{ err error }

func (e *fetchingError) Error() string { return e.err.Error() }
func (e *fetchingError) Unwrap() error { return e.err }

// minSecretLen is the shortest value string scrubbed from messages; shorter
// ones (true, 1, ...) would mangle every message and are poor secrets.
const minSecretLen = 4

// scrubber replaces every string found in values with "***".
type scrubber []string

func newScrubber(values map[string]any) scrubber {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, x := range t {
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		case string:
			if len(t) >= minSecretLen {
				seen[t] = true
			}
		default:
			if t != nil {
				if s := fmt.Sprint(t); len(s) >= minSecretLen+2 {
					seen[s] = true
				}
			}
		}
	}
	walk(values)
	out := make(scrubber, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func (s scrubber) clean(msg string) string {
	for _, v := range s {
		msg = strings.ReplaceAll(msg, v, "***")
	}
	return msg
}

// reasonError is a retryable error with the reason the Ready condition
// reports for it.
type reasonError struct {
	reason string
	err    error
}

func (e *reasonError) Error() string { return e.err.Error() }
func (e *reasonError) Unwrap() error { return e.err }

func failWith(reason string, err error) error { return &reasonError{reason: reason, err: err} }

func asAlreadyOwned(err error, target **controllerutil.AlreadyOwnedError) bool {
	return errors.As(err, target)
}
