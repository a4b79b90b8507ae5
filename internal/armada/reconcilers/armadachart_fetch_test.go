package reconcilers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/httplimit/httplimittest"
)

// TestSlowSourceCostsItsOwnChart: charts whose archive server never answers
// do not hold the reconcile workers. With two workers and four such charts,
// a chart read from disk created after them is deployed while the server
// still hangs, and the hanging charts say they are fetching their
// source.location (without its credentials); with a short fetch timeout
// they fail, retrying, saying the fetch timed out.
func TestSlowSourceCostsItsOwnChart(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		reason  string
		want    string // in the Ready message of a hanging chart
	}{
		{name: "fetch in flight", timeout: time.Hour, reason: ReasonFetchingSource, want: "fetching chart source"},
		{name: "fetch timed out", timeout: 2 * time.Second, reason: ReasonSourceFetchFailed, want: "fetching archive timed out after 2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			startManager(t, func(r *ArmadaChartReconciler) {
				r.MaxConcurrentReconciles = 2
				r.FetchTimeout = tt.timeout
			})
			ctx := context.Background()
			ns := newNamespace(t, "slow")
			addr := httplimittest.Hang(t)
			var hanging []*armadav1.ArmadaChart
			for i := range 4 {
				c := newChart(ns, fmt.Sprintf("hang-%d", i), fmt.Sprintf("hang-%d", i), "")
				c.Spec.Source = armadav1.ArmadaChartSource{Type: armadav1.SourceTypeTar, Location: fmt.Sprintf("http://user:pa55word@%s/c%d.tgz?token=t0k3n", addr, i)}
				if err := env.Client.Create(ctx, c); err != nil {
					t.Fatal(err)
				}
				hanging = append(hanging, c)
			}
			// Let the hanging charts reach the workers first.
			for _, c := range hanging {
				waitFor(t, client.ObjectKeyFromObject(c), 60*time.Second, "a status", func(c *armadav1.ArmadaChart) bool { return c.Status.ObservedGeneration > 0 })
			}
			good := newChart(ns, "good", "good", chartDir(t, "small"))
			good.Spec.Values = values(t, `{"replicas": 1}`)
			if err := env.Client.Create(ctx, good); err != nil {
				t.Fatal(err)
			}
			waitFor(t, client.ObjectKeyFromObject(good), 60*time.Second, "the chart on disk deployed while the server hangs", satisfiedAt(1))

			for i, c := range hanging {
				got := waitFor(t, client.ObjectKeyFromObject(c), 60*time.Second, "reason "+tt.reason, func(c *armadav1.ArmadaChart) bool {
					r := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.ReadyCondition)
					return r != nil && r.Status == metav1.ConditionFalse && r.Reason == tt.reason
				})
				ready := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.ReadyCondition)
				// The location as internal/redact shows it: the user name
				// stays, the password and the query do not.
				loc := fmt.Sprintf(`source.location "http://user:REDACTED@%s/c%d.tgz?REDACTED"`, addr, i)
				if !strings.Contains(ready.Message, loc) || !strings.Contains(ready.Message, tt.want) {
					t.Errorf("%s: Ready message %q, want one naming %s and saying %q", c.Name, ready.Message, loc, tt.want)
				}
				if rec := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.ReconcilingCondition); rec == nil || rec.Status != metav1.ConditionTrue {
					t.Errorf("%s: Reconciling condition %+v, want True", c.Name, rec)
				}
				if got.Status.Satisfied {
					t.Errorf("%s: satisfied without a chart", c.Name)
				}
				for _, secret := range []string{"pa55word", "t0k3n"} {
					assertNoSecret(t, ns, c.Name, got, secret)
				}
			}
		})
	}
}
