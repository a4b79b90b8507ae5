package reconcilers

import (
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	"github.com/airshipit/airship-go/internal/armada/helm"
)

// The next Helm action on a chart's release is chosen here, from what a
// pass observed, by functions that call nothing: every choice is
// table-tested without Helm or a cluster. Each action is run by a small
// function of its own (armadachart_install.go, armadachart_upgrade.go); a
// revision that fails is then remediated (armadachart_remediate.go).

// releaseAction is the Helm action a pass takes on a chart's release
// before it waits for the release's workloads and tests it.
type releaseAction int

const (
	// actionNone: the release holds the chart and values already.
	actionNone releaseAction = iota
	// actionInstall: there is no release, or it was uninstalled.
	actionInstall
	// actionReinstall: the last revision failed and none ever succeeded,
	// so the release can be neither upgraded nor rolled back: purge it and
	// install again.
	actionReinstall
	// actionUpgrade: the chart or values changed, or the last revision
	// failed after an earlier one succeeded.
	actionUpgrade
	// actionHealMissing: objects of the release were deleted by hand:
	// upgrade to create them again.
	actionHealMissing
	// actionHealChanged: objects of the release were changed by hand:
	// upgrade, taking their fields back from whoever changed them.
	actionHealChanged
	// actionHealSkipped: the last revision was itself a heal and the same
	// drift is back (or was never undone): report it, and do not upgrade in
	// a loop.
	actionHealSkipped
	// actionStallProtected: the last revision failed and spec.protected
	// says to leave the release as it is.
	actionStallProtected
)

func (a releaseAction) String() string {
	switch a {
	case actionNone:
		return "none"
	case actionInstall:
		return "install"
	case actionReinstall:
		return "reinstall"
	case actionUpgrade:
		return "upgrade"
	case actionHealMissing:
		return "heal missing"
	case actionHealChanged:
		return "heal changed"
	case actionHealSkipped:
		return "heal skipped"
	case actionStallProtected:
		return "stall protected"
	}
	return "unknown"
}

// releaseRecord is the last revision of a release as Helm records it.
type releaseRecord struct {
	version int
	status  releasecommon.Status
	// digest is the chart-and-values digest the revision was made from.
	digest string
}

// recordOf is rel's record; nil when there is no release.
func recordOf(rel *release.Release) *releaseRecord {
	if rel == nil {
		return nil
	}
	return &releaseRecord{version: rel.Version, status: statusOf(rel), digest: rel.Labels[helm.DigestLabel]}
}

// observed is what the next action is chosen from: the chart's spec and
// status, and the release as Helm reports it. everSucceeded, missing,
// changed and healedAt cost reads (Helm's history, the release's live
// objects): a pass fills them in only when releaseStateOf says the choice
// depends on them.
type observed struct {
	// protected is spec.protected != nil.
	protected bool
	// waitCompleted and revision are status.waitCompleted and
	// status.helmRevision: the revision the operator last saw ready.
	waitCompleted bool
	revision      int32
	// digest is the digest of the chart and values this pass deploys.
	digest string
	// release is the last revision; nil when there is none.
	release *releaseRecord

	// everSucceeded: some revision of the release succeeded, so it can be
	// upgraded or rolled back (read when releaseFailed).
	everSucceeded bool
	// missing and changed are the release's objects deleted or changed by
	// hand, and healedAt the revision the last heal made (read when
	// releaseSteady).
	missing, changed []string
	healedAt         int
}

// releaseState sorts a release by what its record and the chart's status
// say, before anything else is read.
type releaseState int

const (
	// releaseAbsent: no record, or an uninstalled one.
	releaseAbsent releaseState = iota
	// releaseFailedProtected: the last revision failed; spec.protected.
	releaseFailedProtected
	// releaseFailed: the last revision failed.
	releaseFailed
	// releaseOutdated: the last revision was made from another chart or
	// other values.
	releaseOutdated
	// releaseSteady: the last revision holds this chart and values, and
	// the operator saw it ready: only drift can call for an action.
	releaseSteady
	// releaseUnverified: the last revision holds this chart and values but
	// has not been seen ready yet.
	releaseUnverified
)

// releaseStateOf sorts o.release; it reads none of the fields that cost a
// read.
func releaseStateOf(o observed) releaseState {
	switch {
	case o.release == nil || o.release.status == releasecommon.StatusUninstalled:
		return releaseAbsent
	case o.release.status == releasecommon.StatusFailed && o.protected:
		return releaseFailedProtected
	case o.release.status == releasecommon.StatusFailed:
		return releaseFailed
	case o.release.digest != o.digest:
		return releaseOutdated
	case o.waitCompleted && o.revision == int32(o.release.version):
		return releaseSteady
	default:
		return releaseUnverified
	}
}

// nextAction chooses the Helm action for o.
func nextAction(o observed) releaseAction {
	switch releaseStateOf(o) {
	case releaseAbsent:
		return actionInstall
	case releaseFailedProtected:
		return actionStallProtected
	case releaseFailed:
		if !o.everSucceeded {
			return actionReinstall
		}
		return actionUpgrade
	case releaseOutdated:
		return actionUpgrade
	case releaseSteady:
		switch {
		case len(o.missing) > 0:
			return actionHealMissing
		case len(o.changed) > 0 && o.healedAt == o.release.version:
			return actionHealSkipped
		case len(o.changed) > 0:
			return actionHealChanged
		}
	}
	return actionNone
}

// remedy is what follows a revision that failed.
type remedy int

const (
	// remedyLeave: spec.protected; the failed revision stays, and the
	// chart stalls.
	remedyLeave remedy = iota
	// remedyReinstall: no revision ever succeeded; the next attempt purges
	// the release and installs it again.
	remedyReinstall
	// remedyRollback: roll back to the last revision that succeeded at
	// once, so its objects run while the change is retried.
	remedyRollback
)

// remedyFor chooses the remedy of a failed revision; lastGood is the last
// revision before it that succeeded, 0 when none did.
func remedyFor(protected bool, lastGood int) remedy {
	switch {
	case protected:
		return remedyLeave
	case lastGood == 0:
		return remedyReinstall
	default:
		return remedyRollback
	}
}
