package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestFullModeWorkloadsProgress checks that the full control plane really
// runs workloads: a Deployment, a DaemonSet and a StatefulSet become ready on
// the kwok nodes and a Job completes.
func TestFullModeWorkloadsProgress(t *testing.T) {
	env := StartFull(t, Options{Nodes: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.Client

	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 3 {
		t.Fatalf("got %d nodes, want 3", len(nodes.Items))
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "full-mode"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	labels := func(app string) map[string]string { return map[string]string{"app": app} }
	podSpec := func(app string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels(app)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.invalid/" + app + ":1"}}},
		}
	}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns.Name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels("web")},
			Template: podSpec("web"),
		},
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns.Name},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels("agent")},
			Template: podSpec("agent"),
		},
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns.Name},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels("db")},
			Template: podSpec("db"),
		},
	}
	jobTmpl := podSpec("once")
	jobTmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns.Name},
		Spec:       batchv1.JobSpec{Template: jobTmpl, BackoffLimit: ptr.To[int32](0)},
	}
	for _, obj := range []client.Object{deploy, ds, sts, job} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T: %v", obj, err)
		}
	}

	tests := []struct {
		name  string
		check func(ctx context.Context) (bool, string, error)
	}{
		{"Deployment has 3 ready replicas", func(ctx context.Context) (bool, string, error) {
			var d appsv1.Deployment
			err := c.Get(ctx, client.ObjectKeyFromObject(deploy), &d)
			return d.Status.ReadyReplicas == 3 && d.Status.AvailableReplicas == 3, fmt.Sprintf("ready=%d", d.Status.ReadyReplicas), err
		}},
		{"DaemonSet ready on every node", func(ctx context.Context) (bool, string, error) {
			var d appsv1.DaemonSet
			err := c.Get(ctx, client.ObjectKeyFromObject(ds), &d)
			return d.Status.DesiredNumberScheduled == 3 && d.Status.NumberReady == 3,
				fmt.Sprintf("desired=%d ready=%d", d.Status.DesiredNumberScheduled, d.Status.NumberReady), err
		}},
		{"StatefulSet has 2 ready replicas", func(ctx context.Context) (bool, string, error) {
			var s appsv1.StatefulSet
			err := c.Get(ctx, client.ObjectKeyFromObject(sts), &s)
			return s.Status.ReadyReplicas == 2, fmt.Sprintf("ready=%d", s.Status.ReadyReplicas), err
		}},
		{"Job completes", func(ctx context.Context) (bool, string, error) {
			var j batchv1.Job
			err := c.Get(ctx, client.ObjectKeyFromObject(job), &j)
			for _, cond := range j.Status.Conditions {
				if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue {
					return false, "", fmt.Errorf("job failed: %s", cond.Message)
				}
				if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
					return j.Status.Succeeded == 1, "complete", nil
				}
			}
			return false, fmt.Sprintf("succeeded=%d active=%d", j.Status.Succeeded, j.Status.Active), err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var last string
			err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
				ok, msg, err := tt.check(ctx)
				last = msg
				if err != nil && ctx.Err() == nil {
					t.Logf("check: %v", err)
				}
				return ok, nil
			})
			if err != nil {
				t.Fatalf("not reached (last: %s): %v", last, err)
			}
		})
	}

	// Pods really run on the fake nodes with addresses kwok assigned.
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns.Name), client.MatchingLabels(labels("web"))); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s: node=%q ip=%q phase=%s, want scheduled, addressed and Running", p.Name, p.Spec.NodeName, p.Status.PodIP, p.Status.Phase)
		}
	}
}
