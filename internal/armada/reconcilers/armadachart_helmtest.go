package reconcilers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// testEnabled reports whether the release's Helm tests run: spec.test.enabled,
// else the group's test_charts, else yes.
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
		r.events().Record(obj, corev1.EventTypeWarning, ReasonTestFailed, "Test", fmt.Sprintf("helm test of release %s/%s failed", obj.Spec.Namespace, obj.Status.ReleaseName))
		return operatorkit.Fail(ReasonTestFailed, fmt.Errorf("ArmadaChart %s/%s: spec.test: %w", obj.Namespace, obj.Name, err))
	}
	obj.Status.Tested = true
	r.events().Record(obj, corev1.EventTypeNormal, "TestSucceeded", "Test", fmt.Sprintf("helm test of release %s/%s passed", obj.Spec.Namespace, obj.Status.ReleaseName))
	_ = ctx
	return nil
}
