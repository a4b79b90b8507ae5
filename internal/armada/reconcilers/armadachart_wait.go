package reconcilers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	release "helm.sh/helm/v4/pkg/release/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// waitReady applies Armada's wait to the current revision rel. It returns
// a Waiting outcome while the wait is within spec.wait.timeout, and
// remediates rel once it is not.
func (r *ArmadaChartReconciler) waitReady(ctx context.Context, obj *armadav1.ArmadaChart, rel *release.Release) error {
	if obj.Status.WaitCompleted {
		return nil
	}
	res, err := r.checkWait(ctx, obj, true)
	if err != nil {
		return fmt.Errorf("ArmadaChart %s/%s: spec.wait: %w", obj.Namespace, obj.Name, err)
	}
	if !res.Ready {
		timeout := waitTimeout(obj)
		if rel.Info != nil && r.Now().Sub(rel.Info.LastDeployed) > timeout {
			obj.Status.State = armadav1.StateFailed
			r.events().Record(obj, corev1.EventTypeWarning, ReasonWaitTimeout, "Wait", fmt.Sprintf("wait for release %s/%s timed out after %s: %s", obj.Spec.Namespace, obj.Status.ReleaseName, timeout, res.Message()))
			return r.remediate(ctx, obj, rel, operatorkit.Fail(ReasonWaitTimeout, fmt.Errorf("ArmadaChart %s/%s: spec.wait.timeout: %s passed since revision %d was deployed: %s",
				obj.Namespace, obj.Name, timeout, rel.Version, res.Message())), true)
		}
		obj.Status.State = armadav1.StateRunning
		return operatorkit.Wait(ReasonWaiting, 0, "%s", res.Message())
	}
	obj.Status.WaitCompleted = true
	// From now on passes look for drift, from Helm's records.
	r.setApplied(client.ObjectKeyFromObject(obj), nil)
	return nil
}
