package reconcilers

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	releasecommon "helm.sh/helm/v4/pkg/release/common"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
)

// TestKilledManagerLeavesNoLockedRelease kills the operator process (SIGKILL,
// no cleanup) while Helm is in the middle of an install, so the release is
// left pending-install, as after a node crash. A new operator must recover
// it instead of failing forever with "another operation is in progress".
func TestKilledManagerLeavesNoLockedRelease(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "crash")
	hc := helm.New(env.Config, nil)

	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), managerKubeconfigEnv+"="+env.Kubeconfig)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})

	// Helm's own wait blocks the install: the pods cannot be scheduled.
	act := newChart(ns, "web", "crashy", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"replicas": 1, "nodeSelector": {"no-such-label": "x"}}`)
	act.Spec.Wait = &armadav1.ArmadaChartWait{Timeout: 300, Native: &armadav1.ArmadaChartWaitNative{Enabled: true}}
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		last, err := hc.Last(ns, "crashy")
		return err == nil && last != nil && last.Info.Status == releasecommon.StatusPendingInstall, nil
	}); err != nil {
		t.Fatalf("release never reached pending-install: %v", err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
	last, err := hc.Last(ns, "crashy")
	if err != nil || last.Info.Status != releasecommon.StatusPendingInstall {
		t.Fatalf("after the kill the release should still be locked: %v %v", last.Info.Status, err)
	}

	// A new operator, and a schedulable spec: the release ends deployed.
	startManager(t)
	got := update(t, client.ObjectKeyFromObject(act), func(c *armadav1.ArmadaChart) {
		c.Spec.Values = values(t, `{"replicas": 1}`)
		c.Spec.Wait.Timeout = 60
	})
	waitFor(t, client.ObjectKeyFromObject(act), 120*time.Second, "recovery", satisfiedAt(got.Generation))
	last, err = hc.Last(ns, "crashy")
	if err != nil || last.Info.Status != releasecommon.StatusDeployed {
		t.Fatalf("release after recovery: %v (err %v)", last.Info.Status, err)
	}
	assertEvents(t, ns, "web", "Recovered")
}

// TestProtectedContinueProcessing checks protected releases that fail: the
// operator leaves them alone (Stalled, no purge), and the sequenced group
// moves on only when continue_processing is set.
func TestProtectedContinueProcessing(t *testing.T) {
	startManager(t)
	ctx := context.Background()
	hc := helm.New(env.Config, nil)
	for _, cont := range []bool{true, false} {
		t.Run(map[bool]string{true: "continue", false: "halt"}[cont], func(t *testing.T) {
			ns := newNamespace(t, "protected")
			bad := newChart(ns, "bad", "bad", chartDir(t, "small"))
			bad.Spec.Values = values(t, `{"replicas": 1, "nodeSelector": {"no-such-label": "x"}}`)
			bad.Spec.Wait = &armadav1.ArmadaChartWait{Timeout: 2, Native: &armadav1.ArmadaChartWaitNative{Enabled: true}}
			bad.Spec.Protected = &armadav1.ArmadaChartProtected{ContinueProcessing: cont}
			bad.Spec.TargetState = armadav1.TargetStateUninitialized
			next := newChart(ns, "next", "next", chartDir(t, "small"))
			next.Spec.Values = values(t, `{"replicas": 1}`)
			next.Spec.TargetState = armadav1.TargetStateUninitialized
			g := &armadav1.ArmadaChartGroup{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g"},
				Spec:       armadav1.ArmadaChartGroupSpec{ChartGroup: []string{"bad", "next"}, Sequenced: true},
			}
			for _, o := range []client.Object{bad, next, g} {
				if err := env.Client.Create(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			got := waitFor(t, client.ObjectKeyFromObject(bad), 60*time.Second, "protected stall", stalledWith(ReasonProtected))
			if got.Status.State != armadav1.StateFailed {
				t.Fatalf("state %q, want failed", got.Status.State)
			}
			var gg armadav1.ArmadaChartGroup
			if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(g), &gg); err != nil {
					return false, err
				}
				if cont {
					return apimeta.IsStatusConditionTrue(gg.Status.Conditions, armadav1.ReadyCondition), nil
				}
				return apimeta.IsStatusConditionTrue(gg.Status.Conditions, armadav1.StalledCondition), nil
			}); err != nil {
				t.Fatalf("group: %v; status %+v", err, gg.Status)
			}
			if gg.Status.Satisfied || gg.Status.Summary == "2/2" {
				t.Fatalf("group with a failed chart reported satisfied: %+v", gg.Status)
			}
			nextRel, err := hc.Last(ns, "next")
			if err != nil {
				t.Fatal(err)
			}
			if cont && (nextRel == nil) {
				t.Fatal("continue_processing: the next chart was not installed")
			}
			if !cont && nextRel != nil {
				t.Fatal("without continue_processing the next chart was installed")
			}
			// The failed protected release is kept as it is: one revision, failed.
			h, err := hc.History(ns, "bad")
			if err != nil || len(h) != 1 || h[0].Info.Status != releasecommon.StatusFailed {
				t.Fatalf("protected release history: %d revisions (err %v)", len(h), err)
			}
		})
	}
}
