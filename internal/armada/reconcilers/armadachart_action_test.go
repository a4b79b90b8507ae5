package reconcilers

import (
	"testing"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	"github.com/airshipit/airship-go/internal/armada/helm"
)

// TestNextAction covers every choice of the next Helm action, one row per
// branch, without Helm: the release record and the drift are given as a
// pass would have observed them.
func TestNextAction(t *testing.T) {
	const digest = "d2"
	rec := func(version int, status releasecommon.Status, digest string) *releaseRecord {
		return &releaseRecord{version: version, status: status, digest: digest}
	}
	// steady is a release the operator saw ready at revision 3, with this
	// pass's chart and values.
	steady := func(o observed) observed {
		o.release, o.digest, o.waitCompleted, o.revision = rec(3, releasecommon.StatusDeployed, digest), digest, true, 3
		return o
	}
	for _, tc := range []struct {
		name       string
		in         observed
		wantState  releaseState
		wantAction releaseAction
	}{
		{name: "no release installs",
			in:        observed{digest: digest},
			wantState: releaseAbsent, wantAction: actionInstall},
		{name: "uninstalled release installs",
			in:        observed{digest: digest, release: rec(2, releasecommon.StatusUninstalled, "d1")},
			wantState: releaseAbsent, wantAction: actionInstall},
		{name: "failed protected release stalls",
			in:        observed{digest: digest, protected: true, everSucceeded: true, release: rec(2, releasecommon.StatusFailed, digest)},
			wantState: releaseFailedProtected, wantAction: actionStallProtected},
		{name: "failed release that never succeeded is reinstalled",
			in:        observed{digest: digest, release: rec(1, releasecommon.StatusFailed, digest)},
			wantState: releaseFailed, wantAction: actionReinstall},
		{name: "failed release that once succeeded is upgraded",
			in:        observed{digest: digest, everSucceeded: true, release: rec(4, releasecommon.StatusFailed, digest)},
			wantState: releaseFailed, wantAction: actionUpgrade},
		{name: "new chart or values upgrade",
			in:        observed{digest: digest, waitCompleted: true, revision: 3, release: rec(3, releasecommon.StatusDeployed, "d1")},
			wantState: releaseOutdated, wantAction: actionUpgrade},
		{name: "protection does not hold back an upgrade of a deployed release",
			in:        observed{digest: digest, protected: true, release: rec(3, releasecommon.StatusDeployed, "d1")},
			wantState: releaseOutdated, wantAction: actionUpgrade},
		{name: "steady release without drift is left alone",
			in:        steady(observed{}),
			wantState: releaseSteady, wantAction: actionNone},
		{name: "deleted objects are healed",
			in:        steady(observed{missing: []string{"Deployment ns/web"}}),
			wantState: releaseSteady, wantAction: actionHealMissing},
		{name: "deleted objects are healed even after a heal",
			in:        steady(observed{missing: []string{"Deployment ns/web"}, changed: []string{"ConfigMap ns/web"}, healedAt: 3}),
			wantState: releaseSteady, wantAction: actionHealMissing},
		{name: "changed objects are healed",
			in:        steady(observed{changed: []string{"Deployment ns/web"}, healedAt: 2}),
			wantState: releaseSteady, wantAction: actionHealChanged},
		{name: "changed objects the last heal made are not healed again",
			in:        steady(observed{changed: []string{"Deployment ns/web"}, healedAt: 3}),
			wantState: releaseSteady, wantAction: actionHealSkipped},
		{name: "revision not seen ready yet is waited for",
			in:        observed{digest: digest, revision: 3, release: rec(3, releasecommon.StatusDeployed, digest)},
			wantState: releaseUnverified, wantAction: actionNone},
		{name: "revision other than the one seen ready is waited for",
			in:        observed{digest: digest, waitCompleted: true, revision: 2, release: rec(3, releasecommon.StatusDeployed, digest)},
			wantState: releaseUnverified, wantAction: actionNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := releaseStateOf(tc.in); got != tc.wantState {
				t.Errorf("releaseStateOf = %d, want %d", got, tc.wantState)
			}
			if got := nextAction(tc.in); got != tc.wantAction {
				t.Errorf("nextAction = %s, want %s", got, tc.wantAction)
			}
		})
	}
}

func TestRecordOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		rel  *release.Release
		want *releaseRecord
	}{
		{name: "no release", rel: nil, want: nil},
		{name: "no info is unknown", rel: &release.Release{Version: 2},
			want: &releaseRecord{version: 2, status: releasecommon.StatusUnknown}},
		{name: "status and digest label", rel: &release.Release{Version: 5, Info: &release.Info{Status: releasecommon.StatusDeployed},
			Labels: map[string]string{helm.DigestLabel: "abc"}},
			want: &releaseRecord{version: 5, status: releasecommon.StatusDeployed, digest: "abc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := recordOf(tc.rel)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("recordOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRemedyFor(t *testing.T) {
	for _, tc := range []struct {
		name      string
		protected bool
		lastGood  int
		want      remedy
	}{
		{name: "protected with a good revision is left", protected: true, lastGood: 2, want: remedyLeave},
		{name: "protected without one is left", protected: true, want: remedyLeave},
		{name: "never succeeded is reinstalled", want: remedyReinstall},
		{name: "succeeded before is rolled back", lastGood: 2, want: remedyRollback},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := remedyFor(tc.protected, tc.lastGood); got != tc.want {
				t.Fatalf("remedyFor(%t, %d) = %d, want %d", tc.protected, tc.lastGood, got, tc.want)
			}
		})
	}
}
