package wait

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

const ns = "rel-ns"

func meta(name, release string, labels map[string]string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Generation: 1}
	if release != "" {
		m.Annotations = map[string]string{ReleaseNameAnnotation: release}
	}
	return m
}

func deployment(name, release string, labels map[string]string, replicas, updated, available int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: meta(name, release, labels),
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, UpdatedReplicas: updated, AvailableReplicas: available},
	}
}

func job(name, release string, cond batchv1.JobConditionType) *batchv1.Job {
	j := &batchv1.Job{ObjectMeta: meta(name, release, map[string]string{"app": "job"})}
	if cond != "" {
		j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, Reason: "Because"}}
	}
	return j
}

func TestCheck(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(i int) *intstr.IntOrString { v := intstr.FromInt32(int32(i)); return &v }
	app := map[string]string{"app": "web"}
	tests := []struct {
		name      string
		objs      []client.Object
		wait      *armadav1.ArmadaChartWait
		ready     bool
		mentioned string
	}{
		{
			name:  "unset wait: ready deployment of the release",
			objs:  []client.Object{deployment("web", "rel", app, 3, 3, 3)},
			ready: true,
		},
		{
			name:      "unset wait: deployment short of replicas",
			objs:      []client.Object{deployment("web", "rel", app, 3, 3, 2)},
			mentioned: "deployment/rel-ns/web: 2/3 available",
		},
		{
			name:  "unset wait ignores another release's objects",
			objs:  []client.Object{deployment("web", "rel", app, 1, 1, 1), deployment("other", "other-rel", app, 3, 0, 0)},
			ready: true,
		},
		{
			name:  "unset wait with nothing found is ready (required defaults false)",
			ready: true,
		},
		{
			name:  "min_ready percentage met",
			objs:  []client.Object{deployment("web", "", app, 10, 10, 8)},
			wait:  &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "deployment", MinReady: pct("80%")}}},
			ready: true,
		},
		{
			name:      "min_ready count not met",
			objs:      []client.Object{deployment("web", "", app, 10, 10, 3)},
			wait:      &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "deployment", MinReady: num(4)}}},
			mentioned: "3/4 available",
		},
		{
			name: "rollout not observed",
			objs: []client.Object{func() client.Object {
				d := deployment("web", "", app, 1, 1, 1)
				d.Generation = 2
				return d
			}()},
			wait:      &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "deployment"}}},
			mentioned: "not observed",
		},
		{
			// The new pod cannot start; the old one still serves and counts
			// as available.
			name: "rollout with an old replica left",
			objs: []client.Object{func() client.Object {
				d := deployment("web", "", app, 1, 1, 1)
				d.Status.Replicas = 2
				return d
			}()},
			wait:      &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "deployment"}}},
			mentioned: "1 old replicas pending termination",
		},
		{
			name:      "listed resource is required by default",
			wait:      &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "statefulset"}}},
			mentioned: "statefulset matching app=web: none found (required)",
		},
		{
			name:  "required false tolerates none",
			wait:  &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "statefulset", Required: ptr.To(false)}}},
			ready: true,
		},
		{
			name:  "empty resources list disables waiting",
			objs:  []client.Object{deployment("web", "rel", app, 3, 0, 0)},
			wait:  &armadav1.ArmadaChartWait{Resources: []armadav1.ArmadaChartWaitResource{}},
			ready: true,
		},
		{
			name:  "resource labels merge with wait labels",
			objs:  []client.Object{deployment("web", "", map[string]string{"app": "web", "tier": "db"}, 2, 0, 0), deployment("api", "", map[string]string{"app": "web", "tier": "api"}, 1, 1, 1)},
			wait:  &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "deployment", Labels: map[string]string{"tier": "api"}}}},
			ready: true,
		},
		{
			name:  "completed job",
			objs:  []client.Object{job("migrate", "rel", batchv1.JobComplete)},
			ready: true,
		},
		{
			name:      "failed job",
			objs:      []client.Object{job("migrate", "rel", batchv1.JobFailed)},
			mentioned: "job/rel-ns/migrate: failed: Because",
		},
		{
			name:      "running job",
			objs:      []client.Object{job("migrate", "rel", "")},
			mentioned: "0/1 succeeded",
		},
		{
			name: "daemonset OnDelete needs allow_async_updates",
			objs: []client.Object{&appsv1.DaemonSet{
				ObjectMeta: meta("agent", "", app),
				Spec:       appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}},
				Status:     appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, NumberAvailable: 3},
			}},
			wait:      &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "daemonset"}}},
			mentioned: "allow_async_updates",
		},
		{
			name: "daemonset ready",
			objs: []client.Object{&appsv1.DaemonSet{
				ObjectMeta: meta("agent", "", app),
				Status:     appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 3},
			}},
			wait:  &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "daemonset"}}},
			ready: true,
		},
		{
			name: "partitioned statefulset with allow_async_updates counts ready only",
			objs: []client.Object{&appsv1.StatefulSet{
				ObjectMeta: meta("db", "", app),
				Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
					Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](2)}}},
				Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, ReadyReplicas: 3, UpdatedReplicas: 1},
			}},
			wait:  &armadav1.ArmadaChartWait{Labels: app, Resources: []armadav1.ArmadaChartWaitResource{{Type: "statefulset", AllowAsyncUpdates: true}}},
			ready: true,
		},
		{
			name: "unowned pod not ready; owned pods ignored",
			objs: []client.Object{
				&corev1.Pod{ObjectMeta: meta("solo", "rel", app), Status: corev1.PodStatus{Phase: corev1.PodPending}},
				&corev1.Pod{ObjectMeta: func() metav1.ObjectMeta {
					m := meta("owned", "rel", app)
					m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u", Controller: ptr.To(true)}}
					return m
				}(), Status: corev1.PodStatus{Phase: corev1.PodPending}},
			},
			mentioned: "pod/rel-ns/solo",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(tt.objs...).Build()
			res, err := Check(context.Background(), c, ns, "rel", tt.wait)
			if err != nil {
				t.Fatal(err)
			}
			if res.Ready != tt.ready {
				t.Fatalf("Ready = %v, want %v (%s)", res.Ready, tt.ready, res.Message())
			}
			if tt.mentioned != "" && !strings.Contains(res.Message(), tt.mentioned) {
				t.Fatalf("message %q does not mention %q", res.Message(), tt.mentioned)
			}
			if strings.Contains(res.Message(), "owned") {
				t.Fatalf("message %q names a controller-owned pod", res.Message())
			}
		})
	}
}
