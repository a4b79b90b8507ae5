package reconcilers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete

// reconcileDeployed loads the chart, observes its release, takes the Helm
// action nextAction chooses for it, then waits for the release's
// workloads and runs its tests.
func (r *ArmadaChartReconciler) reconcileDeployed(ctx context.Context, obj *armadav1.ArmadaChart, values map[string]any) error {
	id := idOf(obj)
	ch, err := r.loadChart(ctx, obj)
	if err != nil {
		return err
	}
	digest, err := chartsource.Digest(ch, values)
	if err != nil {
		return operatorkit.Stall(ReasonInvalidValues, fmt.Errorf("%s: spec.values: %w", id, err))
	}
	opts := helm.Options{
		Namespace:  obj.Spec.Namespace,
		Name:       obj.Status.ReleaseName,
		Chart:      ch,
		Values:     values,
		Digest:     digest,
		Timeout:    waitTimeout(obj),
		NativeWait: obj.Spec.Wait != nil && obj.Spec.Wait.Native != nil && obj.Spec.Wait.Native.Enabled,
		// What the action applies, as the API server answered it, need
		// not be read back (recordApplied).
		Applied: &helm.Applied{},
	}
	// A chart whose status knows of no revision is installed without
	// reading Helm's history first: Helm's install reads it itself, and
	// refuses, changing nothing, a release that exists after all. Then the
	// history is read and the action chosen again.
	last := r.lastActed(obj)
	unread := last == nil && obj.Status.HelmRevision == 0 && obj.Status.HelmStatus == ""
	rel, err := r.act(ctx, obj, last, !unread, opts)
	if unread && errors.Is(err, helm.ErrNameInUse) {
		rel, err = r.act(ctx, obj, nil, true, opts)
	}
	if err != nil {
		return err
	}
	if err := r.waitReady(ctx, obj, rel); err != nil {
		return err
	}
	if err := r.runTests(ctx, obj); err != nil {
		return err
	}
	obj.Status.State = armadav1.StateDeployed
	// An install or upgrade counts as done once its wait passed.
	obj.Status.InstallFailures = 0
	obj.Status.UpgradeFailures = 0
	return nil
}

// act takes the Helm action nextAction chooses for the release whose last
// revision is last, read from Helm's history first when read is set and
// last is nil, and returns the revision to wait for.
func (r *ArmadaChartReconciler) act(ctx context.Context, obj *armadav1.ArmadaChart, last *release.Release, read bool, opts helm.Options) (*release.Release, error) {
	if read && last == nil {
		var err error
		if last, err = r.Helm.Last(obj.Spec.Namespace, obj.Status.ReleaseName); err != nil {
			return nil, fmt.Errorf("%s: %w", idOf(obj), err)
		}
	}
	if err := r.recoverPending(ctx, obj, last); err != nil {
		return nil, err
	}
	o, err := r.observe(obj, last, opts.Digest)
	if err != nil {
		return nil, err
	}
	return r.runAction(ctx, obj, nextAction(o), o, last, opts)
}

// loadChart loads spec.source, with spec.dependencies vendored in. An
// archive still being fetched is a FetchingSource wait; the chart is
// enqueued again when the fetch ends.
func (r *ArmadaChartReconciler) loadChart(ctx context.Context, obj *armadav1.ArmadaChart) (*chartv2.Chart, error) {
	id := idOf(obj)
	ch, err := r.Loader.LoadFor(ctx, obj.Spec.Source, client.ObjectKeyFromObject(obj))
	switch {
	case errors.Is(err, chartsource.ErrFetching):
		return nil, r.fetching(fmt.Errorf("%s: spec.source: %w", id, err))
	case errors.Is(err, chartsource.ErrNotFound):
		return nil, operatorkit.Stall(ReasonChartNotFound, fmt.Errorf("%s: spec.source: %w", id, err))
	case errors.Is(err, chartsource.ErrInvalid):
		return nil, operatorkit.Stall(ReasonInvalidChart, fmt.Errorf("%s: spec.source: %w", id, err))
	case err != nil:
		return nil, operatorkit.Fail(ReasonSourceFetchFailed, fmt.Errorf("%s: spec.source: %w", id, err))
	}
	if err := r.injectDependencies(ctx, obj, ch); err != nil {
		return nil, err
	}
	return ch, nil
}

// recoverPending marks failed a last revision left pending. Only this
// operator acts on the release, one reconcile at a time, so a pending
// revision was left by a process that died mid-action; Helm refuses every
// action on the release until it is marked. last is updated in place.
func (r *ArmadaChartReconciler) recoverPending(ctx context.Context, obj *armadav1.ArmadaChart, last *release.Release) error {
	if last == nil || last.Info == nil || !last.Info.Status.IsPending() {
		return nil
	}
	ns, name, prev := obj.Spec.Namespace, obj.Status.ReleaseName, last.Info.Status
	if _, err := r.Helm.Unlock(ns, last); err != nil {
		return fmt.Errorf("%s: %w", idOf(obj), err)
	}
	r.events().Record(obj, corev1.EventTypeWarning, "Recovered", "Recover", fmt.Sprintf("release %s/%s revision %d was left %s; marked failed to retry", ns, name, last.Version, prev))
	ctrl.LoggerFrom(ctx).Info("recovered release left pending", "revision", last.Version, "status", prev)
	return nil
}

// observe gathers what nextAction chooses from. Helm's history is read
// only for a failed release and the live objects only for a steady one:
// those are the only states whose action depends on them.
func (r *ArmadaChartReconciler) observe(obj *armadav1.ArmadaChart, last *release.Release, digest string) (observed, error) {
	o := observed{
		protected:     obj.Spec.Protected != nil,
		waitCompleted: obj.Status.WaitCompleted,
		revision:      obj.Status.HelmRevision,
		digest:        digest,
		release:       recordOf(last),
	}
	ns, name := obj.Spec.Namespace, obj.Status.ReleaseName
	switch releaseStateOf(o) {
	case releaseFailed:
		o.everSucceeded = r.hasSucceeded(ns, name)
	case releaseSteady:
		var err error
		if o.missing, o.changed, err = r.Helm.Drift(last); err != nil {
			return o, fmt.Errorf("%s: %w", idOf(obj), err)
		}
		o.healedAt = r.healedAt(ns, name)
	}
	return o, nil
}

// runAction takes action on the release whose last revision is last, and
// returns the revision to wait for.
func (r *ArmadaChartReconciler) runAction(ctx context.Context, obj *armadav1.ArmadaChart, action releaseAction, o observed, last *release.Release, opts helm.Options) (*release.Release, error) {
	if action != actionNone && action != actionHealSkipped {
		// What the last action applied is about to change.
		r.setApplied(client.ObjectKeyFromObject(obj), nil)
	}
	switch action {
	case actionStallProtected:
		return nil, r.leaveProtected(obj, last)
	case actionInstall:
		return r.install(ctx, obj, opts)
	case actionReinstall:
		return r.reinstall(ctx, obj, opts)
	case actionUpgrade:
		return r.upgrade(ctx, obj, opts)
	case actionHealMissing, actionHealChanged:
		return r.heal(ctx, obj, action, o, opts)
	case actionHealSkipped:
		r.events().Record(obj, corev1.EventTypeWarning, "Drift", "HealSkipped", fmt.Sprintf("release %s/%s: %s still differ after healing; not healing again",
			opts.Namespace, opts.Name, strings.Join(o.changed, ", ")))
	}
	return r.keep(obj, last, opts.Digest), nil
}

// keep takes last as the release's current revision without a Helm action.
func (r *ArmadaChartReconciler) keep(obj *armadav1.ArmadaChart, last *release.Release, digest string) *release.Release {
	if obj.Status.HelmRevision != int32(last.Version) {
		obj.Status.WaitCompleted = false
		obj.Status.Tested = false
	}
	setRelease(obj, last)
	obj.Status.LastAppliedValuesChecksum = "sha256:" + digest
	return last
}

// leaveProtected stalls a chart whose last revision failed and which
// spec.protected keeps from being rolled back or purged.
func (r *ArmadaChartReconciler) leaveProtected(obj *armadav1.ArmadaChart, last *release.Release) error {
	obj.Status.State = armadav1.StateFailed
	setRelease(obj, last)
	return operatorkit.Stall(ReasonProtected, fmt.Errorf("%s: release %s/%s revision %d failed and spec.protected is set, so it is neither rolled back nor purged (spec.protected.continue_processing=%t)",
		idOf(obj), obj.Spec.Namespace, obj.Status.ReleaseName, last.Version, obj.Spec.Protected.ContinueProcessing))
}

// startAction resets what an install or upgrade makes stale.
func startAction(obj *armadav1.ArmadaChart) {
	obj.Status.State = armadav1.StateRunning
	obj.Status.WaitCompleted = false
	obj.Status.Tested = false
}

// actionDone records the result of a Helm install or upgrade (verb). A
// revision Helm recorded as failed is remediated; an error that recorded
// nothing (the chart did not render, the API server was unreachable) is
// returned to be retried as it is.
func (r *ArmadaChartReconciler) actionDone(ctx context.Context, obj *armadav1.ArmadaChart, verb string, opts helm.Options, rel *release.Release, err error) (*release.Release, error) {
	if rel != nil {
		setRelease(obj, rel)
	}
	if err != nil {
		obj.Status.State = armadav1.StateFailed
		r.events().Record(obj, corev1.EventTypeWarning, "Failed", verbTitle(verb), fmt.Sprintf("helm %s of release %s/%s failed", verb, opts.Namespace, opts.Name))
		cause := classifyHelmError(idOf(obj), err)
		if operatorkit.IsStalled(cause) || rel == nil || statusOf(rel) != releasecommon.StatusFailed {
			return nil, cause
		}
		return nil, r.remediate(ctx, obj, rel, cause, false)
	}
	obj.Status.LastAppliedValuesChecksum = "sha256:" + opts.Digest
	r.recordApplied(ctx, obj, rel, opts.Applied)
	r.events().Record(obj, corev1.EventTypeNormal, verbTitle(verb)+"Succeeded", verbTitle(verb), fmt.Sprintf("helm %s of release %s/%s: revision %d", verb, opts.Namespace, opts.Name, rel.Version))
	ctrl.LoggerFrom(ctx).Info("helm "+verb+" succeeded", "revision", rel.Version)
	return rel, nil
}

func verbTitle(v string) string { return strings.ToUpper(v[:1]) + v[1:] }

func statusOf(r *release.Release) releasecommon.Status {
	if r == nil || r.Info == nil {
		return releasecommon.StatusUnknown
	}
	return r.Info.Status
}

// hasSucceeded reports whether any revision of the release ever succeeded,
// that is whether it can be upgraded or rolled back rather than purged.
func (r *ArmadaChartReconciler) hasSucceeded(ns, name string) bool {
	v, err := r.Helm.LastSuccessful(ns, name, 0)
	if err != nil {
		return true // upgrading is the safer guess
	}
	return v > 0
}

func setRelease(obj *armadav1.ArmadaChart, rel *release.Release) {
	obj.Status.HelmRevision = int32(rel.Version)
	obj.Status.HelmStatus = string(statusOf(rel))
}

// classifyHelmError turns Helm errors that only a spec change can fix into
// stalled errors naming the field.
func classifyHelmError(id string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "values don't meet the specifications of the schema"):
		return operatorkit.Stall(ReasonInvalidValues, fmt.Errorf("%s: spec.values rejected by the chart's values schema: %w", id, err))
	case strings.Contains(msg, "parse error"), strings.Contains(msg, "execution error at"),
		strings.Contains(msg, "error converting YAML to JSON"), strings.Contains(msg, "wrong type for value"):
		return operatorkit.Stall(ReasonInvalidValues, fmt.Errorf("%s: rendering the chart with spec.values failed: %w", id, err))
	}
	return fmt.Errorf("%s: %w", id, err)
}
