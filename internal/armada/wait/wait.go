package wait

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// ReleaseNameAnnotation is the annotation Helm puts on every object of a
// release. When a wait entry has no labels at all, only objects carrying it
// with the release's name are considered, so a release never waits on a
// neighbour's workloads.
const ReleaseNameAnnotation = "meta.helm.sh/release-name"

// maxReported bounds how many not-ready objects a Result names.
const maxReported = 5

// Result is the outcome of one look.
type Result struct {
	// Ready is true when every entry is satisfied.
	Ready bool
	// NotReady describes the first few objects or entries holding the wait
	// up ("deployment/ns/web: 1/3 ready"), for status and events.
	NotReady []string
	// Checked counts the objects examined.
	Checked int
}

// Message joins NotReady for a condition message.
func (r Result) Message() string {
	if len(r.NotReady) == 0 {
		return "all waited-for resources are ready"
	}
	return "waiting for " + strings.Join(r.NotReady, "; ")
}

// Resources returns the entries a wait spec stands for: when resources is
// unset every supported type with required false, and when it is an empty
// list nothing.
func Resources(w *armadav1.ArmadaChartWait) []armadav1.ArmadaChartWaitResource {
	if w != nil && w.Resources != nil {
		return w.Resources
	}
	f := false
	var out []armadav1.ArmadaChartWaitResource
	for _, t := range []armadav1.WaitResourceType{
		armadav1.WaitResourceJob, armadav1.WaitResourcePod, armadav1.WaitResourceDeployment,
		armadav1.WaitResourceDaemonSet, armadav1.WaitResourceStatefulSet,
	} {
		out = append(out, armadav1.ArmadaChartWaitResource{Type: t, Required: &f})
	}
	return out
}

// KindOf is the kind of the objects a wait type lists; false for a type
// Check does not support.
func KindOf(t armadav1.WaitResourceType) (schema.GroupVersionKind, bool) {
	switch t {
	case armadav1.WaitResourceDeployment:
		return appsv1.SchemeGroupVersion.WithKind("Deployment"), true
	case armadav1.WaitResourceDaemonSet:
		return appsv1.SchemeGroupVersion.WithKind("DaemonSet"), true
	case armadav1.WaitResourceStatefulSet:
		return appsv1.SchemeGroupVersion.WithKind("StatefulSet"), true
	case armadav1.WaitResourceJob:
		return batchv1.SchemeGroupVersion.WithKind("Job"), true
	case armadav1.WaitResourcePod:
		return corev1.SchemeGroupVersion.WithKind("Pod"), true
	}
	return schema.GroupVersionKind{}, false
}

// Check looks once at the objects w selects in namespace.
func Check(ctx context.Context, c client.Reader, namespace, releaseName string, w *armadav1.ArmadaChartWait) (Result, error) {
	res := Result{Ready: true}
	var base map[string]string
	if w != nil {
		base = w.Labels
	}
	for i, r := range Resources(w) {
		sel := map[string]string{}
		for k, v := range base {
			sel[k] = v
		}
		for k, v := range r.Labels {
			sel[k] = v
		}
		byAnnotation := len(sel) == 0
		matched, notReady, err := checkType(ctx, c, namespace, releaseName, byAnnotation, sel, r)
		if err != nil {
			return Result{}, fmt.Errorf("wait.resources[%d] (%s): %w", i, r.Type, err)
		}
		res.Checked += matched
		required := r.Required == nil || *r.Required
		if matched == 0 && required {
			notReady = append(notReady, fmt.Sprintf("%s matching %s: none found (required)", r.Type, describe(sel, releaseName)))
		}
		if len(notReady) > 0 {
			res.Ready = false
			for _, n := range notReady {
				if len(res.NotReady) < maxReported {
					res.NotReady = append(res.NotReady, n)
				}
			}
		}
	}
	return res, nil
}

func describe(sel map[string]string, releaseName string) string {
	if len(sel) == 0 {
		return "release " + releaseName
	}
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+sel[k])
	}
	return strings.Join(parts, ",")
}

// ofRelease reports whether obj belongs to the release when selection is by
// annotation.
func ofRelease(obj metav1.Object, byAnnotation bool, releaseName string) bool {
	return !byAnnotation || obj.GetAnnotations()[ReleaseNameAnnotation] == releaseName
}

// checkType lists the resources of one wait type that the selector and
// the release select, and says how many matched and which are not ready.
func checkType(ctx context.Context, c client.Reader, ns, releaseName string, byAnnotation bool, sel map[string]string, r armadav1.ArmadaChartWaitResource) (int, []string, error) {
	opts := []client.ListOption{client.InNamespace(ns), client.MatchingLabels(sel)}
	tc := &typeCheck{byAnnotation: byAnnotation, releaseName: releaseName}
	switch r.Type {
	case armadav1.WaitResourceDeployment:
		var l appsv1.DeploymentList
		if err := c.List(ctx, &l, opts...); err != nil {
			return 0, nil, err
		}
		for i := range l.Items {
			if d := &l.Items[i]; tc.selects(d) {
				tc.add("deployment", d, deploymentNotReady(d, r.MinReady))
			}
		}
	case armadav1.WaitResourceDaemonSet:
		var l appsv1.DaemonSetList
		if err := c.List(ctx, &l, opts...); err != nil {
			return 0, nil, err
		}
		for i := range l.Items {
			if d := &l.Items[i]; tc.selects(d) {
				tc.add("daemonset", d, daemonSetNotReady(d, r))
			}
		}
	case armadav1.WaitResourceStatefulSet:
		var l appsv1.StatefulSetList
		if err := c.List(ctx, &l, opts...); err != nil {
			return 0, nil, err
		}
		for i := range l.Items {
			if s := &l.Items[i]; tc.selects(s) {
				tc.add("statefulset", s, statefulSetNotReady(s, r))
			}
		}
	case armadav1.WaitResourceJob:
		var l batchv1.JobList
		if err := c.List(ctx, &l, opts...); err != nil {
			return 0, nil, err
		}
		for i := range l.Items {
			if j := &l.Items[i]; tc.selects(j) {
				tc.add("job", j, jobNotReady(j))
			}
		}
	case armadav1.WaitResourcePod:
		var l corev1.PodList
		if err := c.List(ctx, &l, opts...); err != nil {
			return 0, nil, err
		}
		for i := range l.Items {
			// Controller-owned pods are covered by their controller.
			if p := &l.Items[i]; metav1.GetControllerOf(p) == nil && tc.selects(p) {
				tc.add("pod", p, podNotReady(p))
			}
		}
	default:
		return 0, nil, fmt.Errorf("type %q is not supported", r.Type)
	}
	return tc.matched, tc.notReady, nil
}

// typeCheck counts the listed objects of the release and collects why
// those not ready are not.
type typeCheck struct {
	byAnnotation bool
	releaseName  string
	matched      int
	notReady     []string
}

// selects reports whether obj is the release's, counting it when it is.
func (tc *typeCheck) selects(obj metav1.Object) bool {
	if !ofRelease(obj, tc.byAnnotation, tc.releaseName) {
		return false
	}
	tc.matched++
	return true
}

// add records msg, why obj is not ready; empty when it is.
func (tc *typeCheck) add(kind string, obj metav1.Object, msg string) {
	if msg != "" {
		tc.notReady = append(tc.notReady, fmt.Sprintf("%s/%s/%s: %s", kind, obj.GetNamespace(), obj.GetName(), msg))
	}
}

// minReady resolves min_ready against the desired count; unset is 100%.
func minReady(v *intstr.IntOrString, desired int32) int32 {
	if v == nil {
		return desired
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, int(desired), true)
	if err != nil {
		return desired
	}
	return int32(n)
}

func deploymentNotReady(d *appsv1.Deployment, mr *intstr.IntOrString) string {
	if d.Status.ObservedGeneration < d.Generation {
		return "rollout not observed yet"
	}
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	want := minReady(mr, desired)
	if d.Status.UpdatedReplicas < want {
		return fmt.Sprintf("%d/%d updated", d.Status.UpdatedReplicas, want)
	}
	// Pods of the previous ReplicaSet count as available while a rollout
	// goes on, so availability means nothing until they are gone (as in
	// kubectl rollout status): a new pod that never starts would otherwise
	// pass the wait, its predecessor still serving.
	if old := d.Status.Replicas - d.Status.UpdatedReplicas; old > 0 {
		return fmt.Sprintf("%d old replicas pending termination", old)
	}
	if d.Status.AvailableReplicas < want {
		return fmt.Sprintf("%d/%d available", d.Status.AvailableReplicas, want)
	}
	return ""
}

func daemonSetNotReady(d *appsv1.DaemonSet, r armadav1.ArmadaChartWaitResource) string {
	if d.Status.ObservedGeneration < d.Generation {
		return "rollout not observed yet"
	}
	want := minReady(r.MinReady, d.Status.DesiredNumberScheduled)
	onDelete := d.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType
	if onDelete && !r.AllowAsyncUpdates {
		return "update strategy OnDelete never finishes on its own (set allow_async_updates)"
	}
	if !onDelete && d.Status.UpdatedNumberScheduled < want {
		return fmt.Sprintf("%d/%d updated", d.Status.UpdatedNumberScheduled, want)
	}
	if d.Status.NumberAvailable < want {
		return fmt.Sprintf("%d/%d available", d.Status.NumberAvailable, want)
	}
	return ""
}

func statefulSetNotReady(s *appsv1.StatefulSet, r armadav1.ArmadaChartWaitResource) string {
	if s.Status.ObservedGeneration < s.Generation {
		return "rollout not observed yet"
	}
	desired := int32(1)
	if s.Spec.Replicas != nil {
		desired = *s.Spec.Replicas
	}
	want := minReady(r.MinReady, desired)
	async := s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType ||
		(s.Spec.UpdateStrategy.RollingUpdate != nil && s.Spec.UpdateStrategy.RollingUpdate.Partition != nil && *s.Spec.UpdateStrategy.RollingUpdate.Partition > 0)
	if async && !r.AllowAsyncUpdates {
		return "update strategy does not finish on its own (set allow_async_updates)"
	}
	if !async && s.Status.UpdatedReplicas < want {
		return fmt.Sprintf("%d/%d updated", s.Status.UpdatedReplicas, want)
	}
	if s.Status.ReadyReplicas < want {
		return fmt.Sprintf("%d/%d ready", s.Status.ReadyReplicas, want)
	}
	return ""
}

func jobNotReady(j *batchv1.Job) string {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return ""
		case batchv1.JobFailed:
			return "failed: " + c.Reason
		}
	}
	want := int32(1)
	if j.Spec.Completions != nil {
		want = *j.Spec.Completions
	}
	return fmt.Sprintf("%d/%d succeeded", j.Status.Succeeded, want)
}

func podNotReady(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodSucceeded {
		return ""
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return ""
		}
	}
	return "phase " + string(p.Status.Phase) + ", not ready"
}
