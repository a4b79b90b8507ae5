package reconcilers

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// TestHelmTestsAndPreUpgradeDelete installs a chart with a Job and a Helm
// test hook: the wait holds until the Job completes, the test runs once per
// revision, and an upgrade that changes the Job's immutable pod template
// succeeds because upgrade.pre.delete removes the old Job first.
func TestHelmTestsAndPreUpgradeDelete(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "hooks")
	act := newChart(ns, "db", "db", chartDir(t, "jobs"))
	act.Spec.Wait = &armadav1.ArmadaChartWait{Timeout: 60, Labels: map[string]string{"app": "db"}, Resources: []armadav1.ArmadaChartWaitResource{{Type: armadav1.WaitResourceJob}}}
	act.Spec.Test = &armadav1.ArmadaChartTest{Timeout: 60}
	act.Spec.Upgrade = &armadav1.ArmadaChartUpgrade{Pre: &armadav1.ArmadaChartUpgradePre{Delete: []armadav1.ArmadaChartHookAction{
		{Type: armadav1.HookActionJob, Labels: map[string]string{"component": "migrate"}},
	}}}
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(act)
	got := waitFor(t, key, 90*time.Second, "install, wait and test", satisfiedAt(1))
	if !got.Status.Tested || !got.Status.WaitCompleted {
		t.Fatalf("status %+v, want tested and waited", got.Status)
	}
	var j batchv1.Job
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-migrate"}, &j); err != nil {
		t.Fatal(err)
	}
	if j.Status.Succeeded != 1 {
		t.Fatalf("job succeeded = %d; the wait should have held until it completed", j.Status.Succeeded)
	}
	var testJob batchv1.Job
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-test"}, &testJob); err != nil {
		t.Fatalf("test hook job: %v", err)
	}
	assertEvents(t, ns, "db", "InstallSucceeded", "TestSucceeded")
	oldUID := j.UID

	got = update(t, key, func(c *armadav1.ArmadaChart) { c.Spec.Values = values(t, `{"version": "2"}`) })
	got = waitFor(t, key, 90*time.Second, "upgrade with pre.delete", satisfiedAt(got.Generation))
	if got.Status.HelmRevision != 2 || !got.Status.Tested {
		t.Fatalf("after upgrade: %+v", got.Status)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-migrate"}, &j); err != nil {
		t.Fatal(err)
	}
	if j.UID == oldUID || j.Spec.Template.Annotations["version"] != "2" {
		t.Fatalf("job not replaced: uid %s (old %s), version %q", j.UID, oldUID, j.Spec.Template.Annotations["version"])
	}
	assertEvents(t, ns, "db", "PreUpgradeDelete", "UpgradeSucceeded")
}

// TestFailingHelmTest checks that a test hook that does not pass within
// test.timeout fails the chart with reason TestFailed.
func TestFailingHelmTest(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "testfail")
	act := newChart(ns, "db", "dbf", chartDir(t, "jobs"))
	act.Spec.Values = values(t, `{"failingTest": true}`)
	act.Spec.Test = &armadav1.ArmadaChartTest{Enabled: ptr.To(true), Timeout: 3}
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, client.ObjectKeyFromObject(act), 60*time.Second, "TestFailed", func(c *armadav1.ArmadaChart) bool {
		r := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.ReadyCondition)
		return r != nil && r.Reason == ReasonTestFailed
	})
	r := apimeta.FindStatusCondition(got.Status.Conditions, armadav1.ReadyCondition)
	if !strings.Contains(r.Message, "spec.test") || got.Status.Tested || got.Status.State != armadav1.StateFailed {
		t.Fatalf("Ready %+v, status %+v", r, got.Status)
	}

	// Turning tests off satisfies the chart without a new revision.
	got = update(t, client.ObjectKeyFromObject(act), func(c *armadav1.ArmadaChart) { c.Spec.Test.Enabled = ptr.To(false) })
	got = waitFor(t, client.ObjectKeyFromObject(act), 60*time.Second, "satisfied with tests off", satisfiedAt(got.Generation))
	if got.Status.HelmRevision != 1 {
		t.Fatalf("revision %d, want 1", got.Status.HelmRevision)
	}
}

// TestNativeWaitTimeout checks that wait.native runs Helm's own wait: pods
// that cannot be scheduled make the install itself fail after the timeout.
func TestNativeWaitTimeout(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	ns := newNamespace(t, "native")
	act := newChart(ns, "web", "nat", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"replicas": 1, "nodeSelector": {"no-such-label": "x"}}`)
	act.Spec.Wait = &armadav1.ArmadaChartWait{Timeout: 3, Native: &armadav1.ArmadaChartWaitNative{Enabled: true}}
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, client.ObjectKeyFromObject(act), 60*time.Second, "failed install", func(c *armadav1.ArmadaChart) bool {
		return c.Status.InstallFailures >= 1 && c.Status.State == armadav1.StateFailed
	})
	if got.Status.Satisfied || got.Status.Failures < 1 {
		t.Fatalf("status %+v", got.Status)
	}
	assertEvents(t, ns, "web", "Failed")

	// With schedulable pods the failed release is purged and installed again.
	got = update(t, client.ObjectKeyFromObject(act), func(c *armadav1.ArmadaChart) { c.Spec.Values = values(t, `{"replicas": 1}`) })
	got = waitFor(t, client.ObjectKeyFromObject(act), 90*time.Second, "reinstalled", satisfiedAt(got.Generation))
	if got.Status.InstallFailures != 0 || got.Status.HelmStatus != "deployed" {
		t.Fatalf("status %+v", got.Status)
	}
	assertEvents(t, ns, "web", "Purged")
}
