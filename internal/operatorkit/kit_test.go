package operatorkit

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestOutcomeOf(t *testing.T) {
	plain := errors.New("boom")
	for _, tc := range []struct {
		name string
		err  error
		want Outcome
	}{
		{"nil", nil, Outcome{Kind: Succeeded}},
		{"plain error takes the default reason", plain, Outcome{Kind: Failed, Reason: "Failed", Message: "boom"}},
		{"failed with a reason", fmt.Errorf("step: %w", Fail("InstallFailed", plain)), Outcome{Kind: Failed, Reason: "InstallFailed", Message: "step: boom"}},
		{"waiting", Wait("Provisioning", time.Second, "host %s", "h0"), Outcome{Kind: Waiting, Reason: "Provisioning", Message: "host h0", After: time.Second}},
		{"waiting on a condition, wrapped", fmt.Errorf("x: %w", WaitOn("HostReady", "Waiting", 0, "no host")), Outcome{Kind: Waiting, Condition: "HostReady", Reason: "Waiting", Message: "no host"}},
		{"stalled, wrapped", fmt.Errorf("spec: %w", Stallf("InvalidSpec", "field %s", "a")), Outcome{Kind: Stalled, Reason: "InvalidSpec", Message: "spec: field a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := OutcomeOf(tc.err, "Failed")
			if got.Err != tc.err { //nolint:errorlint // the error passed in, not a wrapped one
				t.Errorf("Err = %v, want the error passed", got.Err)
			}
			got.Err = nil
			if got != tc.want {
				t.Errorf("OutcomeOf = %+v, want %+v", got, tc.want)
			}
			if IsWaiting(tc.err) != (tc.want.Kind == Waiting) || IsStalled(tc.err) != (tc.want.Kind == Stalled) {
				t.Errorf("IsWaiting/IsStalled disagree with kind %s", tc.want.Kind)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{Base: time.Second, Max: 10 * time.Second}
	for n, want := range map[int64]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 60: 10 * time.Second} {
		if got := b.Delay(n); got != want {
			t.Errorf("Delay(%d) = %s, want %s", n, got, want)
		}
	}
	if got := (Backoff{Base: time.Second}).Delay(4); got != 8*time.Second {
		t.Errorf("uncapped Delay(4) = %s", got)
	}
}

func TestSetOutcomeWritesKstatusConditions(t *testing.T) {
	type want struct{ ready, reconciling, stalled string } // "Status/Reason" or "" for absent
	for _, tc := range []struct {
		name string
		err  error
		want want
	}{
		{"succeeded", nil, want{"True/Deployed", "", ""}},
		{"waiting", Wait("Waiting", 0, "pods"), want{"False/Waiting", "True/Waiting", ""}},
		{"stalled", Stall("InvalidSpec", errors.New("bad")), want{"False/InvalidSpec", "", "True/InvalidSpec"}},
		{"failed", Fail("InstallFailed", errors.New("no")), want{"False/InstallFailed", "True/InstallFailed", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Start from the opposite state so every condition must move.
			list := []metav1.Condition{
				{Type: StalledCondition, Status: metav1.ConditionTrue, Reason: "Old"},
				{Type: ReconcilingCondition, Status: metav1.ConditionTrue, Reason: "Old"},
			}
			c := Conditions{List: &list, Generation: 7}
			c.SetOutcome(OutcomeOf(tc.err, "Failed"), "Deployed", "ok", strings.ToUpper, "")
			for typ, w := range map[string]string{ReadyCondition: tc.want.ready, ReconcilingCondition: tc.want.reconciling, StalledCondition: tc.want.stalled} {
				got := apimeta.FindStatusCondition(list, typ)
				switch {
				case w == "" && got != nil:
					t.Errorf("%s present (%s), want absent", typ, got.Reason)
				case w != "" && got == nil:
					t.Errorf("%s absent, want %s", typ, w)
				case w != "" && string(got.Status)+"/"+got.Reason != w:
					t.Errorf("%s = %s/%s, want %s", typ, got.Status, got.Reason, w)
				case got != nil && got.ObservedGeneration != 7:
					t.Errorf("%s observedGeneration = %d", typ, got.ObservedGeneration)
				}
			}
			if tc.err != nil {
				if r := apimeta.FindStatusCondition(list, ReadyCondition); r.Message != strings.ToUpper(tc.err.Error()) {
					t.Errorf("Ready message %q was not scrubbed", r.Message)
				}
			}
		})
	}
}

func TestConditionsTruncateAndKeepTransitionTime(t *testing.T) {
	var list []metav1.Condition
	c := Conditions{List: &list, Generation: 1}
	c.Set(ReadyCondition, metav1.ConditionFalse, "A", strings.Repeat("x", 10*MaxMessage))
	if n := len(list[0].Message); n != MaxMessage || !strings.HasSuffix(list[0].Message, "...") {
		t.Fatalf("message length %d, want %d ending in ...", n, MaxMessage)
	}
	old := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	list[0].LastTransitionTime = old
	c.Set(ReadyCondition, metav1.ConditionFalse, "B", "changed reason, same status")
	if !list[0].LastTransitionTime.Equal(&old) {
		t.Errorf("lastTransitionTime moved without a status change")
	}
	c.Set(ReadyCondition, metav1.ConditionTrue, "B", "")
	if list[0].LastTransitionTime.Equal(&old) {
		t.Errorf("lastTransitionTime kept across a status change")
	}
}

func TestConditionChanged(t *testing.T) {
	base := []metav1.Condition{{Type: "Ready", Status: "False", Reason: "A", Message: "m", LastTransitionTime: metav1.Now()}}
	for _, tc := range []struct {
		name  string
		after []metav1.Condition
		want  bool
	}{
		{"same but the time", []metav1.Condition{{Type: "Ready", Status: "False", Reason: "A", Message: "m"}}, false},
		{"reason", []metav1.Condition{{Type: "Ready", Status: "False", Reason: "B", Message: "m"}}, true},
		{"message", []metav1.Condition{{Type: "Ready", Status: "False", Reason: "A", Message: "n"}}, true},
		{"status", []metav1.Condition{{Type: "Ready", Status: "True", Reason: "A", Message: "m"}}, true},
		{"gone", nil, true},
	} {
		if got := ConditionChanged(base, tc.after, "Ready"); got != tc.want {
			t.Errorf("%s: ConditionChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
	if ConditionChanged(nil, nil, "Ready") {
		t.Error("absent in both counts as a change")
	}
}

func TestEventsTruncateAndSkipWithoutTransition(t *testing.T) {
	rec := events.NewFakeRecorder(10)
	e := Events{Recorder: rec}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	e.OnTransition(false, pod, corev1.EventTypeNormal, "Same", "", "quiet")
	e.OnTransition(true, pod, corev1.EventTypeWarning, "Failed", "Install", strings.Repeat("y", 2*MaxMessage))
	close(rec.Events)
	var got []string
	for ev := range rec.Events {
		got = append(got, ev)
	}
	if len(got) != 1 {
		t.Fatalf("events = %d, want 1: %q", len(got), got)
	}
	if !strings.HasPrefix(got[0], "Warning Failed ") || len(got[0]) > MaxMessage+len("Warning Failed ") {
		t.Errorf("event %.40q... (len %d): want a truncated Warning Failed", got[0], len(got[0]))
	}
	Events{}.Record(pod, corev1.EventTypeNormal, "X", "", "no recorder: no panic")
}

func TestSettle(t *testing.T) {
	pass := errors.New("pass failed")
	//nolint:errorlint // the pass's own error comes back, not a wrapped one
	if res, err := Settle(ctrl.Result{RequeueAfter: time.Minute}, pass, nil); res.RequeueAfter != time.Minute || err != pass {
		t.Errorf("no write error: got %v, %v", res, err)
	}
	if res, err := Settle(ctrl.Result{}, pass, fmt.Errorf("w: %w", ErrStatusConflict)); res.RequeueAfter != ConflictRetry || err != nil {
		t.Errorf("conflict: got %v, %v; want a quick requeue and no error", res, err)
	}
	write := errors.New("write failed")
	if _, err := Settle(ctrl.Result{}, pass, write); !errors.Is(err, pass) || !errors.Is(err, write) {
		t.Errorf("write error: got %v, want both errors", err)
	}
}

func TestObjectName(t *testing.T) {
	if got := ObjectName(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}); got != "Pod ns/p" {
		t.Errorf("ObjectName = %q", got)
	}
	if got := ObjectName(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}); got != "Node n" {
		t.Errorf("ObjectName = %q", got)
	}
}

func TestTruncateKeepsUTF8(t *testing.T) {
	s := strings.Repeat("é", MaxMessage) // two bytes each
	got := Truncate(s)
	if len(got) > MaxMessage || !utf8.ValidString(got) || !strings.HasSuffix(got, "...") {
		t.Fatalf("Truncate: len %d, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	if Truncate("short") != "short" {
		t.Error("a short message changed")
	}
}

func TestWaitErrUnwraps(t *testing.T) {
	cause := errors.New("secret s not found")
	err := fmt.Errorf("inputs: %w", WaitErr("Missing", time.Second, cause))
	if !errors.Is(err, cause) {
		t.Error("WaitErr lost its cause")
	}
	if o := OutcomeOf(err, "Failed"); o.Kind != Waiting || o.Message != cause.Error() || o.After != time.Second {
		t.Errorf("OutcomeOf(WaitErr) = %+v", o)
	}
}

// relatedRecorder keeps the objects of the events it is given.
type relatedRecorder struct{ regarding, related []runtime.Object }

func (r *relatedRecorder) Eventf(regarding, related runtime.Object, _, _, _, _ string, _ ...any) {
	r.regarding, r.related = append(r.regarding, regarding), append(r.related, related)
}

func TestRecordRelatedNamesBothObjects(t *testing.T) {
	rec := &relatedRecorder{}
	owner, member := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "member"}}
	Events{Recorder: rec}.RecordRelated(owner, member, corev1.EventTypeNormal, "Enabled", "Enable", "n")
	Events{Recorder: rec}.Record(owner, corev1.EventTypeNormal, "Ready", "", "n")
	if len(rec.regarding) != 2 || rec.regarding[0] != owner || rec.related[0] != member || rec.related[1] != nil {
		t.Fatalf("regarding %v related %v", rec.regarding, rec.related)
	}
}
