package operatortest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
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

// ExpectLeaderAndProbes fails t unless the Lease at lease has a holder
// and the probes at probeAddr answer /healthz and /readyz with 200: the
// end of the RBAC tests, which run an operator with leader election on
// as its ServiceAccount, where a missing permission on Leases shows.
func ExpectLeaderAndProbes(t *testing.T, c client.Client, lease client.ObjectKey, probeAddr string) {
	t.Helper()
	ctx := context.Background()
	var l coordinationv1.Lease
	if err := c.Get(ctx, lease, &l); err != nil || l.Spec.HolderIdentity == nil {
		t.Errorf("Lease %s: %v %+v", lease.Name, err, l.Spec)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := testenv.HTTPGet(ctx, "http://"+probeAddr+path); code != http.StatusOK {
			t.Errorf("GET %s: %d %q", path, code, body)
		}
	}
}
