package reconcilers

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
)

// slowRetries keeps the state a failure leaves long enough to inspect it:
// the retry that follows would otherwise upgrade again within seconds.
func slowRetries(r *ArmadaChartReconciler) { r.RetryInterval = time.Minute }

func historyOf(t *testing.T, hc *helm.Client, ns, name string) []*release.Release {
	t.Helper()
	h, err := hc.History(ns, name)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(h, func(i, j int) bool { return h[i].Version < h[j].Version })
	return h
}

func readyReason(c *armadav1.ArmadaChart) string {
	if r := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.ReadyCondition); r != nil {
		return r.Reason
	}
	return ""
}

// TestFailedUpgradeRollsBack upgrades a deployed chart to values whose pods
// can never be scheduled. Whether the operator's wait times out on the new
// revision or Helm's own wait fails the upgrade, the revision is recorded
// failed, the release is rolled back to the revision before it (a new
// revision with the old values), the objects return to the old spec, and
// status, condition and events say so. A fixed spec then upgrades normally.
func TestFailedUpgradeRollsBack(t *testing.T) {
	startManager(t, slowRetries)
	ctx := context.Background()
	hc := helm.New(env.Config, nil)
	for _, native := range []bool{false, true} {
		t.Run(map[bool]string{false: "operator wait", true: "helm wait"}[native], func(t *testing.T) {
			ns := newNamespace(t, "rollback")
			act := newChart(ns, "web", "rb", chartDir(t, "small"))
			act.Spec.Values = values(t, `{"replicas": 1, "greeting": "first"}`)
			if err := env.Client.Create(ctx, act); err != nil {
				t.Fatal(err)
			}
			key := client.ObjectKeyFromObject(act)
			waitFor(t, key, 90*time.Second, "first install", satisfiedAt(1))

			got := update(t, key, func(c *armadav1.ArmadaChart) {
				c.Spec.Values = values(t, `{"replicas": 1, "greeting": "second", "nodeSelector": {"no-such-label": "x"}}`)
				c.Spec.Wait = &armadav1.ArmadaChartWait{Timeout: 3, Native: &armadav1.ArmadaChartWaitNative{Enabled: native}}
			})
			got = waitFor(t, key, 90*time.Second, "rollback", func(c *armadav1.ArmadaChart) bool {
				return c.Status.ObservedGeneration == got.Generation && readyReason(c) == ReasonRolledBack
			})

			// Helm's history: 1 good, 2 failed, 3 = 1 again.
			h := historyOf(t, hc, ns, "rb")
			if len(h) != 3 {
				t.Fatalf("history has %d revisions, want 3", len(h))
			}
			if h[0].Info.Status != releasecommon.StatusSuperseded || h[1].Info.Status != releasecommon.StatusFailed || h[2].Info.Status != releasecommon.StatusDeployed {
				t.Fatalf("revision statuses %s, %s, %s; want superseded, failed, deployed", h[0].Info.Status, h[1].Info.Status, h[2].Info.Status)
			}
			if h[2].Info.RollbackRevision != 1 || !reflect.DeepEqual(h[2].Config, h[0].Config) || h[2].Manifest != h[0].Manifest {
				t.Fatalf("revision 3 is not revision 1 again: rollback of %d, values %v", h[2].Info.RollbackRevision, h[2].Config)
			}
			if h[2].Labels[helm.DigestLabel] != h[0].Labels[helm.DigestLabel] {
				t.Fatal("revision 3 does not carry revision 1's digest, so the upgrade would not be retried")
			}

			// Status, condition and events.
			st := got.Status
			if st.State != armadav1.StateFailed || st.Satisfied || st.HelmRevision != 3 || st.HelmStatus != "deployed" || st.Failures < 1 || st.UpgradeFailures < 1 || st.InstallFailures != 0 {
				t.Fatalf("status %+v", st)
			}
			msg := apimeta.FindStatusCondition(st.Conditions, armadav1.ReadyCondition).Message
			if !strings.Contains(msg, "rolled back to revision 1") {
				t.Fatalf("Ready message %q does not say it rolled back", msg)
			}
			assertEvents(t, ns, "web", ReasonRolledBack)

			// The objects are revision 1's again.
			var cm corev1.ConfigMap
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rb-config"}, &cm); err != nil || cm.Data["greeting"] != "first" {
				t.Fatalf("ConfigMap after rollback: %v (err %v)", cm.Data, err)
			}
			var d appsv1.Deployment
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rb-web"}, &d); err != nil || len(d.Spec.Template.Spec.NodeSelector) != 0 {
				t.Fatalf("Deployment after rollback: nodeSelector %v (err %v)", d.Spec.Template.Spec.NodeSelector, err)
			}

			// A schedulable spec upgrades from the rolled-back revision.
			got = update(t, key, func(c *armadav1.ArmadaChart) {
				c.Spec.Values = values(t, `{"replicas": 1, "greeting": "third"}`)
				c.Spec.Wait.Timeout = 60
			})
			got = waitFor(t, key, 90*time.Second, "upgrade after the fix", satisfiedAt(got.Generation))
			if got.Status.HelmRevision != 4 || got.Status.Failures != 0 || got.Status.UpgradeFailures != 0 {
				t.Fatalf("status after the fix %+v", got.Status)
			}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rb-config"}, &cm); err != nil || cm.Data["greeting"] != "third" {
				t.Fatalf("ConfigMap after the fix: %v (err %v)", cm.Data, err)
			}
		})
	}
}

// TestFailedUpgradeRetried checks that with the default short backoff the
// failing upgrade is tried again after each rollback, counting failures.
func TestFailedUpgradeRetried(t *testing.T) {
	startManager(t, func(r *ArmadaChartReconciler) { r.RetryInterval = 200 * time.Millisecond })
	ctx := context.Background()
	hc := helm.New(env.Config, nil)
	ns := newNamespace(t, "retry")
	act := newChart(ns, "web", "rt", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"replicas": 1}`)
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(act)
	waitFor(t, key, 90*time.Second, "first install", satisfiedAt(1))
	update(t, key, func(c *armadav1.ArmadaChart) {
		c.Spec.Values = values(t, `{"replicas": 1, "nodeSelector": {"no-such-label": "x"}}`)
		c.Spec.Wait = &armadav1.ArmadaChartWait{Timeout: 2}
	})
	got := waitFor(t, key, 90*time.Second, "a second failure", func(c *armadav1.ArmadaChart) bool {
		return c.Status.UpgradeFailures >= 2 && readyReason(c) == ReasonRolledBack
	})
	// 1 good; then per attempt a failed upgrade and a rollback to the
	// newest good revision: 2 failed, 3 = 1, 4 failed, 5 = 3.
	h := historyOf(t, hc, ns, "rt")
	if len(h) < 5 || h[3].Info.Status != releasecommon.StatusFailed || h[4].Info.RollbackRevision != 3 || h[4].Manifest != h[0].Manifest {
		t.Fatalf("history after two failed attempts: %d revisions", len(h))
	}
	if got.Status.Failures < 2 {
		t.Fatalf("failures %d, want at least 2", got.Status.Failures)
	}
}

// TestFailedInstallPurged checks a first install whose wait times out: the
// revision is marked failed (nothing to roll back to), and once the spec is
// fixed the next attempt purges it and installs afresh, so the history is a
// single deployed revision.
func TestFailedInstallPurged(t *testing.T) {
	startManager(t, slowRetries)
	ctx := context.Background()
	hc := helm.New(env.Config, nil)
	ns := newNamespace(t, "purge")
	act := newChart(ns, "web", "pg", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"replicas": 1, "nodeSelector": {"no-such-label": "x"}}`)
	act.Spec.Wait = &armadav1.ArmadaChartWait{Timeout: 3}
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(act)
	got := waitFor(t, key, 60*time.Second, "WaitTimeout", func(c *armadav1.ArmadaChart) bool {
		return readyReason(c) == ReasonWaitTimeout && c.Status.InstallFailures == 1
	})
	if got.Status.HelmStatus != "failed" || got.Status.State != armadav1.StateFailed || got.Status.UpgradeFailures != 0 {
		t.Fatalf("status %+v", got.Status)
	}
	if msg := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.ReadyCondition).Message; !strings.Contains(msg, "purged and installed again") {
		t.Fatalf("Ready message %q does not say what happens next", msg)
	}
	if h := historyOf(t, hc, ns, "pg"); len(h) != 1 || h[0].Info.Status != releasecommon.StatusFailed {
		t.Fatalf("history: %d revisions, want 1 failed", len(h))
	}

	got = update(t, key, func(c *armadav1.ArmadaChart) {
		c.Spec.Values = values(t, `{"replicas": 1}`)
		c.Spec.Wait.Timeout = 60
	})
	got = waitFor(t, key, 90*time.Second, "reinstalled", satisfiedAt(got.Generation))
	h := historyOf(t, hc, ns, "pg")
	if len(h) != 1 || h[0].Version != 1 || h[0].Info.Status != releasecommon.StatusDeployed {
		t.Fatalf("history after the reinstall: %d revisions, first %d %s", len(h), h[0].Version, h[0].Info.Status)
	}
	if got.Status.InstallFailures != 0 || got.Status.HelmRevision != 1 {
		t.Fatalf("status %+v", got.Status)
	}
	assertEvents(t, ns, "web", ReasonWaitTimeout, "Purged")
}
