package operatortest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// Case is a change to an operator's default options and what Validate
// then says: nil when Want is "", otherwise an error containing Want (the
// flag it names).
type Case[O any] struct {
	Name   string
	Mutate func(*O)
	Want   string
}

// Validate checks an operator's options: defaults() pass Validate (the
// subtest "defaults"), and each case is a subtest of its own.
func Validate[O interface{ Validate() error }](t *testing.T, defaults func() O, cases []Case[O]) {
	t.Helper()
	cases = append([]Case[O]{{Name: "defaults", Mutate: func(*O) {}}}, cases...)
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			o := defaults()
			tc.Mutate(&o)
			err := o.Validate()
			if (err == nil) != (tc.Want == "") || err != nil && !strings.Contains(err.Error(), tc.Want) {
				t.Fatalf("Validate() = %v, want %q", err, tc.Want)
			}
		})
	}
}

// ExpectLeaderAndProbes fails t unless the Lease at lease has a holder,
// leader election recorded its Event (ExpectLeaderEvent) and the probes at
// probeAddr answer /healthz and /readyz with 200: the end of the RBAC
// tests, which run an operator with leader election on as its
// ServiceAccount, where a missing permission on Leases or Events shows.
func ExpectLeaderAndProbes(t *testing.T, c client.Client, lease client.ObjectKey, probeAddr string) {
	t.Helper()
	ctx := context.Background()
	var l coordinationv1.Lease
	if err := c.Get(ctx, lease, &l); err != nil || l.Spec.HolderIdentity == nil {
		t.Errorf("Lease %s: %v %+v", lease.Name, err, l.Spec)
	}
	ExpectLeaderEvent(t, c, lease)
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := testenv.HTTPGet(ctx, "http://"+probeAddr+path); code != http.StatusOK {
			t.Errorf("GET %s: %d %q", path, code, body)
		}
	}
}

// ExpectLeaderEvent waits for the core/v1 Event leader election records on
// the Lease at lease when a replica becomes leader (reason LeaderElection).
// client-go's resourcelock writes it through the core/v1 API, not
// events.k8s.io, and only logs a refusal: without create on core Events in
// the Lease's namespace the operator runs on and the Event never appears.
func ExpectLeaderEvent(t *testing.T, c client.Client, lease client.ObjectKey) {
	t.Helper()
	var seen []string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var evs corev1.EventList
		if err := c.List(ctx, &evs, client.InNamespace(lease.Namespace)); err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range evs.Items {
			o := e.InvolvedObject
			if o.Kind == "Lease" && o.Name == lease.Name && e.Reason == "LeaderElection" {
				return true, nil
			}
			seen = append(seen, o.Kind+"/"+o.Name+" "+e.Reason)
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no LeaderElection Event on Lease %s (core/v1 Events in %s: %v): %v", lease, lease.Namespace, seen, err)
	}
}
