package redfish

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func errIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v: want one that wraps %q", err, target)
	}
}

func notErrIs(t *testing.T, err, target error) {
	t.Helper()
	if errors.Is(err, target) {
		t.Errorf("error %v wraps %q: it should not", err, target)
	}
}

func eq[T any](t *testing.T, want, got T, what ...string) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", strings.Join(what, " "), diff)
	}
}

func contains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%q does not contain %q", s, sub)
	}
}

func notContains(t *testing.T, s, sub string) {
	t.Helper()
	if strings.Contains(s, sub) {
		t.Errorf("%q contains %q", s, sub)
	}
}
