package reconcilers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Remediation reasons and events.
const (
	// ReasonRolledBack: a revision failed and the release was rolled back to
	// the last one that succeeded; the install or upgrade is retried.
	ReasonRolledBack = "RolledBack"
	// ReasonRollbackFailed: the rollback itself failed; retried.
	ReasonRollbackFailed = "RollbackFailed"
)

// remediate handles a revision that did not succeed: its Helm action
// failed (a hook, Helm's own wait), or the operator's wait timed out on it.
// The revision is recorded as failed in Helm's history, so it is never a
// rollback target and survives an operator restart. Then:
//
//   - a protected chart is left as it is, and stalls (its group reads
//     continue_processing from the Stalled reason);
//   - a release with an earlier successful revision is rolled back to it at
//     once, so the previous objects run again while the change is retried;
//   - a release that never succeeded is purged and installed again by the
//     next attempt.
//
// count is true when the caller has not counted the failure in
// installFailures/upgradeFailures yet. The returned error carries cause.
func (r *ArmadaChartReconciler) remediate(ctx context.Context, obj *armadav1.ArmadaChart, rel *release.Release, cause error, count bool) error {
	ns, name := obj.Spec.Namespace, obj.Status.ReleaseName
	obj.Status.State = armadav1.StateFailed
	r.setApplied(client.ObjectKeyFromObject(obj), nil)
	if statusOf(rel) != releasecommon.StatusFailed {
		if err := r.Helm.MarkFailed(ns, rel, "marked failed by the Armada operator: "+reasonOf(cause)); err != nil {
			return errors.Join(cause, err)
		}
	}
	setRelease(obj, rel)

	good, err := r.Helm.LastSuccessful(ns, name, rel.Version)
	if err != nil {
		return errors.Join(cause, err)
	}
	if count {
		if good == 0 {
			obj.Status.InstallFailures++
		} else {
			obj.Status.UpgradeFailures++
		}
	}

	switch remedyFor(obj.Spec.Protected != nil, good) {
	case remedyLeave:
		return operatorkit.Stall(ReasonProtected, fmt.Errorf("%w; spec.protected is set, so release %s/%s revision %d is left failed, neither rolled back nor purged (spec.protected.continue_processing=%t)",
			cause, ns, name, rel.Version, obj.Spec.Protected.ContinueProcessing))
	case remedyReinstall:
		return operatorkit.Fail(reasonOf(cause), fmt.Errorf("%w; no revision of release %s/%s ever succeeded, so it is purged and installed again on the next attempt", cause, ns, name))
	default:
		return r.rollback(ctx, obj, rel, good, cause)
	}
}

// rollback rolls the release back from the failed revision rel to the
// revision good. The returned error carries cause and says what was done.
func (r *ArmadaChartReconciler) rollback(ctx context.Context, obj *armadav1.ArmadaChart, rel *release.Release, good int, cause error) error {
	ns, name := obj.Spec.Namespace, obj.Status.ReleaseName
	rb, err := r.Helm.Rollback(ns, name, good, waitTimeout(obj))
	if rb != nil {
		setRelease(obj, rb)
	}
	if err != nil {
		r.events().Record(obj, corev1.EventTypeWarning, ReasonRollbackFailed, "Rollback", fmt.Sprintf("rollback of release %s/%s to revision %d failed", ns, name, good))
		return operatorkit.Fail(ReasonRollbackFailed, fmt.Errorf("%w; rolling back to revision %d: %w", cause, good, err))
	}
	if d := rb.Labels[helm.DigestLabel]; d != "" {
		obj.Status.LastAppliedValuesChecksum = "sha256:" + d
	}
	obj.Status.WaitCompleted = false
	obj.Status.Tested = false
	r.recordApplied(ctx, obj, rb, nil)
	msg := fmt.Sprintf("release %s/%s revision %d failed (%s); rolled back to revision %d as revision %d", ns, name, rel.Version, reasonOf(cause), good, rb.Version)
	r.events().Record(obj, corev1.EventTypeWarning, ReasonRolledBack, "Rollback", msg)
	ctrl.LoggerFrom(ctx).Info("rolled back failed revision", "failedRevision", rel.Version, "to", good, "revision", rb.Version)
	return operatorkit.Fail(ReasonRolledBack, fmt.Errorf("%w; rolled back to revision %d (now revision %d), retrying", cause, good, rb.Version))
}

// reasonOf is the condition reason an error carries, Failed when none.
func reasonOf(err error) string { return operatorkit.OutcomeOf(err, ReasonFailed).Reason }
