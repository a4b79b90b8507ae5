package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/armada/wait"
)

// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete

// reconcileDeployed loads the chart, installs or upgrades the release when
// needed, then waits for its workloads and runs its tests.
func (r *ArmadaChartReconciler) reconcileDeployed(ctx context.Context, obj *armadav1.ArmadaChart, values map[string]any) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	id := fmt.Sprintf("ArmadaChart %s/%s", obj.Namespace, obj.Name)
	waiter := client.ObjectKeyFromObject(obj)
	ch, err := r.Loader.LoadFor(ctx, obj.Spec.Source, waiter)
	switch {
	case errors.Is(err, chartsource.ErrFetching):
		return ctrl.Result{}, &fetchingError{fmt.Errorf("%s: spec.source: %w", id, err)}
	case errors.Is(err, chartsource.ErrNotFound):
		return ctrl.Result{}, stall(ReasonChartNotFound, fmt.Errorf("%s: spec.source: %w", id, err))
	case errors.Is(err, chartsource.ErrInvalid):
		return ctrl.Result{}, stall(ReasonInvalidChart, fmt.Errorf("%s: spec.source: %w", id, err))
	case err != nil:
		return ctrl.Result{}, failWith(ReasonSourceFetchFailed, fmt.Errorf("%s: spec.source: %w", id, err))
	}
	if err := r.injectDependencies(ctx, obj, ch); err != nil {
		return ctrl.Result{}, err
	}
	digest, err := chartsource.Digest(ch, values)
	if err != nil {
		return ctrl.Result{}, stall(ReasonInvalidValues, fmt.Errorf("%s: spec.values: %w", id, err))
	}

	ns, name := obj.Spec.Namespace, obj.Status.ReleaseName
	last, err := r.Helm.Last(ns, name)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("%s: %w", id, err)
	}

	// Only this operator acts on the release, one reconcile at a time, so a
	// pending revision here was left by a process that died mid-action.
	if last != nil && last.Info != nil && last.Info.Status.IsPending() {
		prev := last.Info.Status
		if _, err := r.Helm.Unlock(ns, last); err != nil {
			return ctrl.Result{}, fmt.Errorf("%s: %w", id, err)
		}
		r.event(obj, corev1.EventTypeWarning, "Recovered", "Recover", fmt.Sprintf("release %s/%s revision %d was left %s; marked failed to retry", ns, name, last.Version, prev))
		log.Info("recovered release left pending", "revision", last.Version, "status", prev)
	}

	if last != nil && statusOf(last) == releasecommon.StatusFailed && obj.Spec.Protected != nil {
		obj.Status.State = armadav1.StateFailed
		setRelease(obj, last)
		return ctrl.Result{}, stall(ReasonProtected, fmt.Errorf("%s: release %s/%s revision %d failed and spec.protected is set, so it is neither rolled back nor purged (spec.protected.continue_processing=%t)",
			id, ns, name, last.Version, obj.Spec.Protected.ContinueProcessing))
	}

	opts := helm.Options{
		Namespace:  ns,
		Name:       name,
		Chart:      ch,
		Values:     values,
		Digest:     digest,
		Timeout:    waitTimeout(obj),
		NativeWait: obj.Spec.Wait != nil && obj.Spec.Wait.Native != nil && obj.Spec.Wait.Native.Enabled,
	}
	var verb string
	var rel *release.Release
	switch {
	case last == nil || statusOf(last) == releasecommon.StatusUninstalled:
		verb = "install"
	case statusOf(last) == releasecommon.StatusFailed && !r.hasSucceeded(ns, name):
		// A release that never deployed cannot be rolled back or upgraded:
		// purge it and install again.
		if err := r.Helm.Uninstall(ns, name, deleteTimeout(obj)); err != nil {
			return ctrl.Result{}, fmt.Errorf("%s: purging failed release: %w", id, err)
		}
		r.event(obj, corev1.EventTypeNormal, "Purged", "Uninstall", fmt.Sprintf("release %s/%s never deployed and failed; purged to reinstall", ns, name))
		verb = "install"
	case statusOf(last) == releasecommon.StatusFailed || last.Labels[helm.DigestLabel] != digest:
		verb = "upgrade"
	case obj.Status.WaitCompleted && obj.Status.HelmRevision == int32(last.Version):
		// Steady state: put back objects of the release deleted or changed
		// by hand.
		missing, changed, err := r.Helm.Drift(last)
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("%s: %w", id, err)
		}
		switch {
		case len(missing) > 0:
			r.event(obj, corev1.EventTypeWarning, "Drift", "Heal", fmt.Sprintf("release %s/%s is missing %s; upgrading to restore", ns, name, strings.Join(missing, ", ")))
			log.Info("healing release", "missing", missing)
			verb = "upgrade"
		case len(changed) > 0 && r.healedAt(ns, name) == last.Version:
			// The last revision was itself a heal and the same drift is
			// back (or was never undone): do not upgrade in a loop.
			r.event(obj, corev1.EventTypeWarning, "Drift", "HealSkipped", fmt.Sprintf("release %s/%s: %s still differ after healing; not healing again", ns, name, strings.Join(changed, ", ")))
		case len(changed) > 0:
			r.event(obj, corev1.EventTypeWarning, "Drift", "Heal", fmt.Sprintf("release %s/%s: %s changed by hand; upgrading to restore", ns, name, strings.Join(changed, ", ")))
			log.Info("healing release", "changed", changed)
			verb = "upgrade"
			opts.ForceConflicts = true
			r.markHeal(ns, name, last.Version+1)
		}
	}

	if verb != "" {
		obj.Status.State = armadav1.StateRunning
		obj.Status.WaitCompleted = false
		obj.Status.Tested = false
		switch verb {
		case "install":
			opts.NoHooks = obj.Spec.Install != nil && obj.Spec.Install.NoHooks
			rel, err = r.Helm.Install(ctx, opts)
			if err != nil {
				obj.Status.InstallFailures++
			}
		case "upgrade":
			if err := r.preUpgradeDelete(ctx, obj); err != nil {
				return ctrl.Result{}, err
			}
			if u := obj.Spec.Upgrade; u != nil {
				opts.NoHooks = u.NoHooks || (u.Options != nil && u.Options.NoHooks)
				opts.Force = u.Options != nil && u.Options.Force
			}
			rel, err = r.Helm.Upgrade(ctx, opts)
			if err != nil {
				obj.Status.UpgradeFailures++
			}
		}
		if rel != nil {
			setRelease(obj, rel)
		}
		if err != nil {
			obj.Status.State = armadav1.StateFailed
			r.event(obj, corev1.EventTypeWarning, "Failed", verbTitle(verb), fmt.Sprintf("helm %s of release %s/%s failed", verb, ns, name))
			cause := classifyHelmError(id, err)
			if _, stalled := asStalled(cause); stalled || rel == nil || statusOf(rel) != releasecommon.StatusFailed {
				// Nothing was recorded (the chart did not render, the API
				// server was unreachable): retry as it is.
				return ctrl.Result{}, cause
			}
			return ctrl.Result{}, r.remediate(ctx, obj, rel, cause, false)
		}
		obj.Status.LastAppliedValuesChecksum = "sha256:" + digest
		r.event(obj, corev1.EventTypeNormal, verbTitle(verb)+"Succeeded", verbTitle(verb), fmt.Sprintf("helm %s of release %s/%s: revision %d", verb, ns, name, rel.Version))
		log.Info("helm "+verb+" succeeded", "revision", rel.Version)
	} else {
		rel = last
		if obj.Status.HelmRevision != int32(rel.Version) {
			obj.Status.WaitCompleted = false
			obj.Status.Tested = false
		}
		setRelease(obj, rel)
		obj.Status.LastAppliedValuesChecksum = "sha256:" + digest
	}

	if err := r.waitReady(ctx, obj, rel); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.runTests(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	obj.Status.State = armadav1.StateDeployed
	// An install or upgrade counts as done once its wait passed.
	obj.Status.InstallFailures = 0
	obj.Status.UpgradeFailures = 0
	return ctrl.Result{}, nil
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
		return stall(ReasonInvalidValues, fmt.Errorf("%s: spec.values rejected by the chart's values schema: %w", id, err))
	case strings.Contains(msg, "parse error"), strings.Contains(msg, "execution error at"),
		strings.Contains(msg, "error converting YAML to JSON"), strings.Contains(msg, "wrong type for value"):
		return stall(ReasonInvalidValues, fmt.Errorf("%s: rendering the chart with spec.values failed: %w", id, err))
	}
	return fmt.Errorf("%s: %w", id, err)
}

// waitReady applies Armada's wait to the current revision. It returns a
// waitingError while the wait is within its timeout.
func (r *ArmadaChartReconciler) waitReady(ctx context.Context, obj *armadav1.ArmadaChart, rel *release.Release) error {
	if obj.Status.WaitCompleted {
		return nil
	}
	res, err := wait.Check(ctx, r.Client, obj.Spec.Namespace, obj.Status.ReleaseName, obj.Spec.Wait)
	if err != nil {
		return fmt.Errorf("ArmadaChart %s/%s: spec.wait: %w", obj.Namespace, obj.Name, err)
	}
	if !res.Ready {
		timeout := waitTimeout(obj)
		if rel.Info != nil && r.Now().Sub(rel.Info.LastDeployed) > timeout {
			obj.Status.State = armadav1.StateFailed
			r.event(obj, corev1.EventTypeWarning, ReasonWaitTimeout, "Wait", fmt.Sprintf("wait for release %s/%s timed out after %s: %s", obj.Spec.Namespace, obj.Status.ReleaseName, timeout, res.Message()))
			return r.remediate(ctx, obj, rel, failWith(ReasonWaitTimeout, fmt.Errorf("ArmadaChart %s/%s: spec.wait.timeout: %s passed since revision %d was deployed: %s",
				obj.Namespace, obj.Name, timeout, rel.Version, res.Message())), true)
		}
		obj.Status.State = armadav1.StateRunning
		return &waitingError{msg: res.Message()}
	}
	obj.Status.WaitCompleted = true
	return nil
}

func testEnabled(obj *armadav1.ArmadaChart) bool {
	if obj.Spec.Test != nil && obj.Spec.Test.Enabled != nil {
		return *obj.Spec.Test.Enabled
	}
	return obj.Annotations[TestChartsAnnotation] != "false"
}

// runTests runs the release's Helm tests once per revision when enabled.
func (r *ArmadaChartReconciler) runTests(ctx context.Context, obj *armadav1.ArmadaChart) error {
	if !testEnabled(obj) || obj.Status.Tested {
		return nil
	}
	cleanup := obj.Spec.Test != nil && obj.Spec.Test.Options != nil && obj.Spec.Test.Options.Cleanup
	if err := r.Helm.Test(obj.Spec.Namespace, obj.Status.ReleaseName, testTimeout(obj), cleanup); err != nil {
		obj.Status.State = armadav1.StateFailed
		r.event(obj, corev1.EventTypeWarning, ReasonTestFailed, "Test", fmt.Sprintf("helm test of release %s/%s failed", obj.Spec.Namespace, obj.Status.ReleaseName))
		return failWith(ReasonTestFailed, fmt.Errorf("ArmadaChart %s/%s: spec.test: %w", obj.Namespace, obj.Name, err))
	}
	obj.Status.Tested = true
	r.event(obj, corev1.EventTypeNormal, "TestSucceeded", "Test", fmt.Sprintf("helm test of release %s/%s passed", obj.Spec.Namespace, obj.Status.ReleaseName))
	_ = ctx
	return nil
}

// preUpgradeDelete deletes what upgrade.pre.delete lists. An entry without
// labels only touches objects of this release.
func (r *ArmadaChartReconciler) preUpgradeDelete(ctx context.Context, obj *armadav1.ArmadaChart) error {
	if obj.Spec.Upgrade == nil || obj.Spec.Upgrade.Pre == nil {
		return nil
	}
	for i, d := range obj.Spec.Upgrade.Pre.Delete {
		var list client.ObjectList
		switch d.Type {
		case armadav1.HookActionPod:
			list = &corev1.PodList{}
		case armadav1.HookActionJob:
			list = &batchv1.JobList{}
		case armadav1.HookActionCronJob:
			list = &batchv1.CronJobList{}
		default:
			return stall(ReasonInvalidChart, fmt.Errorf("ArmadaChart %s/%s: spec.upgrade.pre.delete[%d].type %q is not supported", obj.Namespace, obj.Name, i, d.Type))
		}
		if err := r.Client.List(ctx, list, client.InNamespace(obj.Spec.Namespace), client.MatchingLabels(d.Labels)); err != nil {
			return fmt.Errorf("ArmadaChart %s/%s: spec.upgrade.pre.delete[%d]: listing %ss: %w", obj.Namespace, obj.Name, i, d.Type, err)
		}
		items, err := itemsOf(list)
		if err != nil {
			return err
		}
		for _, o := range items {
			if len(d.Labels) == 0 && o.GetAnnotations()[helmReleaseNameAnnotation] != obj.Status.ReleaseName {
				continue
			}
			if err := r.Client.Delete(ctx, o, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("ArmadaChart %s/%s: spec.upgrade.pre.delete[%d]: deleting %s %s/%s: %w", obj.Namespace, obj.Name, i, d.Type, o.GetNamespace(), o.GetName(), err)
			}
			r.event(obj, corev1.EventTypeNormal, "PreUpgradeDelete", "Delete", fmt.Sprintf("deleted %s %s/%s before upgrade", d.Type, o.GetNamespace(), o.GetName()))
		}
	}
	return nil
}

func itemsOf(list client.ObjectList) ([]client.Object, error) {
	var out []client.Object
	switch l := list.(type) {
	case *corev1.PodList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *batchv1.JobList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *batchv1.CronJobList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	default:
		return nil, fmt.Errorf("unexpected list type %T", list)
	}
	return out, nil
}
