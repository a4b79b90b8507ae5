package reconcilers

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	release "helm.sh/helm/v4/pkg/release/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// upgrade upgrades the release (actionUpgrade), after deleting what
// spec.upgrade.pre.delete lists.
func (r *ArmadaChartReconciler) upgrade(ctx context.Context, obj *armadav1.ArmadaChart, opts helm.Options) (*release.Release, error) {
	startAction(obj)
	if err := r.preUpgradeDelete(ctx, obj); err != nil {
		return nil, err
	}
	if u := obj.Spec.Upgrade; u != nil {
		opts.NoHooks = u.NoHooks || (u.Options != nil && u.Options.NoHooks)
		opts.Force = u.Options != nil && u.Options.Force
	}
	rel, err := r.Helm.Upgrade(ctx, opts)
	if err != nil {
		obj.Status.UpgradeFailures++
	}
	return r.actionDone(ctx, obj, "upgrade", opts, rel, err)
}

// heal upgrades a steady release to put back objects deleted
// (actionHealMissing) or changed (actionHealChanged) by hand. Taking back
// changed fields forces conflicts with whoever changed them; the revision
// that makes is remembered, so a drift the upgrade cannot undo is not
// healed again and again.
func (r *ArmadaChartReconciler) heal(ctx context.Context, obj *armadav1.ArmadaChart, action releaseAction, o observed, opts helm.Options) (*release.Release, error) {
	log := ctrl.LoggerFrom(ctx)
	if action == actionHealMissing {
		r.events().Record(obj, corev1.EventTypeWarning, "Drift", "Heal", fmt.Sprintf("release %s/%s is missing %s; upgrading to restore", opts.Namespace, opts.Name, strings.Join(o.missing, ", ")))
		log.Info("healing release", "missing", o.missing)
		return r.upgrade(ctx, obj, opts)
	}
	r.events().Record(obj, corev1.EventTypeWarning, "Drift", "Heal", fmt.Sprintf("release %s/%s: %s changed by hand; upgrading to restore", opts.Namespace, opts.Name, strings.Join(o.changed, ", ")))
	log.Info("healing release", "changed", o.changed)
	opts.ForceConflicts = true
	r.markHeal(opts.Namespace, opts.Name, o.release.version+1)
	return r.upgrade(ctx, obj, opts)
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
			return operatorkit.Stall(ReasonInvalidChart, fmt.Errorf("ArmadaChart %s/%s: spec.upgrade.pre.delete[%d].type %q is not supported", obj.Namespace, obj.Name, i, d.Type))
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
			r.events().Record(obj, corev1.EventTypeNormal, "PreUpgradeDelete", "Delete", fmt.Sprintf("deleted %s %s/%s before upgrade", d.Type, o.GetNamespace(), o.GetName()))
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
