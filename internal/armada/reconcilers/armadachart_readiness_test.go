package reconcilers

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/wait"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// chartIn returns a chart of generation 2 whose status is set by status.
func chartIn(status func(*armadav1.ArmadaChart)) *armadav1.ArmadaChart {
	c := &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Generation: 2}}
	c.Status.ObservedGeneration = 2
	c.Status.TargetState = armadav1.TargetStateDeployed
	if status != nil {
		status(c)
	}
	return c
}

// setReady sets the Ready condition to False with reason, for generation gen.
func setReady(c *armadav1.ArmadaChart, reason string, gen int64) {
	c.Status.Conditions = []metav1.Condition{{Type: armadav1.ReadyCondition, Status: metav1.ConditionFalse, Reason: reason, ObservedGeneration: gen, LastTransitionTime: metav1.Now()}}
}

func TestWaitPhaseOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart *armadav1.ArmadaChart
		want  waitPhase
	}{
		{"last pass waits for workloads", chartIn(func(c *armadav1.ArmadaChart) { setReady(c, ReasonWaiting, 2) }), waitPending},
		{"wait completed", chartIn(func(c *armadav1.ArmadaChart) { c.Status.WaitCompleted = true }), waitDone},
		{"no status yet", &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Generation: 1}}, waitUnknown},
		{"new generation, old wait completed", chartIn(func(c *armadav1.ArmadaChart) { c.Generation = 3; c.Status.WaitCompleted = true }), waitUnknown},
		{"new generation, old wait pending", chartIn(func(c *armadav1.ArmadaChart) { c.Generation = 3; setReady(c, ReasonWaiting, 2) }), waitUnknown},
		{"condition of an older generation", chartIn(func(c *armadav1.ArmadaChart) { setReady(c, ReasonWaiting, 1) }), waitUnknown},
		{"waiting for its archive", chartIn(func(c *armadav1.ArmadaChart) { setReady(c, ReasonFetchingSource, 2) }), waitUnknown},
		{"failed", chartIn(func(c *armadav1.ArmadaChart) { setReady(c, ReasonFailed, 2) }), waitUnknown},
		{"group changed the target", chartIn(func(c *armadav1.ArmadaChart) {
			setReady(c, ReasonWaiting, 2)
			c.Annotations = map[string]string{TargetStateAnnotation: string(armadav1.TargetStateUninstalled)}
		}), waitUnknown},
		{"invalid target annotation", chartIn(func(c *armadav1.ArmadaChart) {
			c.Status.WaitCompleted = true
			c.Annotations = map[string]string{TargetStateAnnotation: "sideways"}
		}), waitUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitPhaseOf(tc.chart); got != tc.want {
				t.Fatalf("waitPhaseOf = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestLeftWaiting checks that what a pass left counts only for the
// generation and target state it was at.
func TestLeftWaiting(t *testing.T) {
	waiting := chartIn(func(c *armadav1.ArmadaChart) { setReady(c, ReasonWaiting, 2) })
	for _, tc := range []struct {
		name    string
		written *armadav1.ArmadaChart
		chart   *armadav1.ArmadaChart
		want    bool
	}{
		{"same generation and target", waiting, chartIn(nil), true},
		{"nothing written", nil, chartIn(nil), false},
		{"the pass ended otherwise", chartIn(func(c *armadav1.ArmadaChart) { setReady(c, ReasonFailed, 2) }), chartIn(nil), false},
		{"a newer generation", waiting, chartIn(func(c *armadav1.ArmadaChart) { c.Generation = 3 }), false},
		{"a new target from the group", waiting, chartIn(func(c *armadav1.ArmadaChart) {
			c.Annotations = map[string]string{TargetStateAnnotation: string(armadav1.TargetStateUninstalled)}
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &ArmadaChartReconciler{}
			r.setWritten(client.ObjectKeyFromObject(tc.chart), tc.written)
			if got := r.leftWaiting(tc.chart); got != tc.want {
				t.Errorf("leftWaiting = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestEffectOf(t *testing.T) {
	ready, notReady := wait.Result{Ready: true}, wait.Result{NotReady: []string{"deployment/ns/web: 0/1 available"}}
	broken := errors.New("cache not synced")
	for _, tc := range []struct {
		name  string
		phase waitPhase
		res   wait.Result
		err   error
		want  workloadEffect
	}{
		{"pending, all ready", waitPending, ready, nil, effectSatisfy},
		{"pending, not all ready", waitPending, notReady, nil, effectNone},
		{"pending, wait unreadable", waitPending, wait.Result{}, broken, effectReconcile},
		{"no pass, status says nothing, all ready", waitUnknown, ready, nil, effectSatisfy},
		{"pass under way, not all ready", waitInPass, notReady, nil, effectNone},
		{"pass under way, all ready", waitInPass, ready, nil, effectSatisfy},
		{"pass under way, wait unreadable", waitInPass, wait.Result{}, broken, effectReconcile},
		{"no pass, status says nothing, not all ready", waitUnknown, notReady, nil, effectReconcile},
		{"no pass, status says nothing, wait unreadable", waitUnknown, wait.Result{}, broken, effectReconcile},
		{"done: drift", waitDone, wait.Result{}, nil, effectReconcile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := effectOf(tc.phase, tc.res, tc.err); got != tc.want {
				t.Fatalf("effectOf = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestQueuePriority(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts priorityqueue.AddOpts
		want int
	}{
		{"plain add", priorityqueue.AddOpts{}, 0},
		{"satisfying event", priorityqueue.AddOpts{Priority: ptr.To(satisfyPriority)}, satisfyPriority},
		{"initial list", priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, 0},
		{"requeue after a satisfying pass", priorityqueue.AddOpts{Priority: ptr.To(satisfyPriority), After: time.Second}, 0},
		{"retry after a satisfying pass", priorityqueue.AddOpts{Priority: ptr.To(satisfyPriority), RateLimited: true}, 0},
		{"other priority", priorityqueue.AddOpts{Priority: ptr.To(7)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := queuePriority(tc.opts); got != tc.want {
				t.Fatalf("queuePriority = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestChartQueueServesSatisfyingEventsFirst: a chart whose wait is over is
// taken before charts queued earlier, and the others keep their order,
// whatever priority controller-runtime gave them.
func TestChartQueueServesSatisfyingEventsFirst(t *testing.T) {
	q := newChartQueue(logr.Discard())("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	pq := q.(priorityqueue.PriorityQueue[reconcile.Request])
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: name}}
	}
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, req("initial"))
	q.Add(req("created"))
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(satisfyPriority)}, req("ready"))
	for _, want := range []struct {
		name     string
		priority int
	}{{"ready", satisfyPriority}, {"initial", 0}, {"created", 0}} {
		got, p, _ := pq.GetWithPriority()
		if got.Name != want.name || p != want.priority {
			t.Fatalf("got %s at priority %d, want %s at %d", got.Name, p, want.name, want.priority)
		}
		q.Done(got)
	}
}

// TestWorkloadEventsEnqueueByEffect drives the workload event handler with
// Deployments of a real API server read through the cache: the event of a
// Deployment that ends its chart's wait puts the chart first in the queue,
// one of a Deployment still not ready leaves a waiting chart (or one a
// pass is under way on) alone, and any other event enqueues the chart in
// turn.
func TestWorkloadEventsEnqueueByEffect(t *testing.T) {
	mgr := testenv.NewManager(t, env)
	ctx := context.Background()
	if err := indexCharts(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, ctx, "manager", mgr.Start)
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	r := &ArmadaChartReconciler{Client: mgr.GetClient()}
	ns := newNamespace(t, "effect")

	waiting := func(c *armadav1.ArmadaChart) { setReady(c, ReasonWaiting, c.Generation) }
	done := func(c *armadav1.ArmadaChart) { c.Status.WaitCompleted = true }
	for i, tc := range []struct {
		name        string
		status      func(*armadav1.ArmadaChart) // nil: no status yet
		ready       bool
		initialList bool
		inPass      bool // a pass on the chart is under way
		// leftWaiting: the last pass wrote a waiting status the cache
		// does not hold yet.
		leftWaiting  bool
		wantQueued   bool
		wantPriority int
	}{
		{name: "waiting, ready", status: waiting, ready: true, wantQueued: true, wantPriority: satisfyPriority},
		{name: "waiting, not ready", status: waiting},
		{name: "no status, no pass, ready", ready: true, wantQueued: true, wantPriority: satisfyPriority},
		{name: "no status, no pass, not ready", wantQueued: true},
		{name: "pass under way, ready", inPass: true, ready: true, wantQueued: true, wantPriority: satisfyPriority},
		{name: "pass under way, not ready", inPass: true},
		{name: "done, drift", status: done, wantQueued: true},
		{name: "cache behind the last pass, which left it waiting, not ready", leftWaiting: true},
		{name: "cache behind the last pass, which left it waiting, ready", leftWaiting: true, ready: true, wantQueued: true, wantPriority: satisfyPriority},
		{name: "initial list", status: waiting, ready: true, initialList: true, wantQueued: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rel := fmt.Sprintf("r%d", i)
			c := newChart(ns, rel, rel, "/nowhere")
			c.Spec.Wait = &armadav1.ArmadaChartWait{Timeout: 60, Resources: []armadav1.ArmadaChartWaitResource{
				{Type: armadav1.WaitResourceDeployment, Labels: map[string]string{"app": rel}},
			}}
			if err := env.Client.Create(ctx, c); err != nil {
				t.Fatal(err)
			}
			if tc.status != nil {
				c.Status.ObservedGeneration = c.Generation
				c.Status.TargetState = armadav1.TargetStateDeployed
				tc.status(c)
				if err := env.Client.Status().Update(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			d := releaseDeployment(ns, rel, tc.ready)
			if err := env.Client.Create(ctx, d); err != nil {
				t.Fatal(err)
			}
			// The cache holds the chart's status and the Deployment in
			// the state the case is about (one never scheduled stays not
			// ready).
			cached := &appsv1.Deployment{}
			eventually(t, "the cache holds the chart and its Deployment", func() bool {
				var got armadav1.ArmadaChart
				if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(c), &got); err != nil || got.ResourceVersion != c.ResourceVersion {
					return false
				}
				if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(d), cached); err != nil {
					return false
				}
				return !tc.ready || cached.Status.AvailableReplicas == 1 && cached.Status.ObservedGeneration == cached.Generation
			})

			q := newChartQueue(logr.Discard())("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			h := r.workloadHandler()
			if tc.inPass {
				defer r.startPass(client.ObjectKeyFromObject(c))()
			}
			if tc.leftWaiting {
				w := c.DeepCopy()
				w.ResourceVersion += "0"
				w.Status.ObservedGeneration, w.Status.TargetState = w.Generation, armadav1.TargetStateDeployed
				setReady(w, ReasonWaiting, w.Generation)
				r.setWritten(client.ObjectKeyFromObject(c), w)
				defer r.setWritten(client.ObjectKeyFromObject(c), nil)
			}
			if tc.initialList {
				h.Create(ctx, event.CreateEvent{Object: cached, IsInInitialList: true}, q)
			} else {
				old := cached.DeepCopy()
				old.ResourceVersion = "1"
				h.Update(ctx, event.UpdateEvent{ObjectOld: old, ObjectNew: cached}, q)
			}
			if !tc.wantQueued {
				if n := q.Len(); n != 0 {
					t.Fatalf("%d charts queued, want none", n)
				}
				return
			}
			if n := q.Len(); n != 1 {
				t.Fatalf("%d charts queued, want 1", n)
			}
			got, p, _ := q.(priorityqueue.PriorityQueue[reconcile.Request]).GetWithPriority()
			if got.NamespacedName != client.ObjectKeyFromObject(c) || p != tc.wantPriority {
				t.Fatalf("queued %s at priority %d, want %s at %d", got, p, client.ObjectKeyFromObject(c), tc.wantPriority)
			}
		})
	}
}

// releaseDeployment is a one-replica Deployment of release rel, as Helm
// would create it; one that is not to be ready has pods no Node takes.
func releaseDeployment(ns, rel string, ready bool) *appsv1.Deployment {
	labels := map[string]string{"app": rel}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rel + "-web", Labels: labels, Annotations: map[string]string{
			helmReleaseNameAnnotation: rel, helmReleaseNamespaceAnnotation: ns,
		}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.invalid/web:1"}}},
			},
		},
	}
	if !ready {
		d.Spec.Template.Spec.NodeSelector = map[string]string{"no-such-label": "x"}
	}
	return d
}

// TestSatisfiedByWorkloadEvent: with a poll interval no test waits for, a
// chart is satisfied by its Deployment's watch events alone, after its
// install and after an upgrade that rolls its pods, although the events of
// the Deployment while it is not ready start no pass.
func TestSatisfiedByWorkloadEvent(t *testing.T) {
	startManager(t, func(r *ArmadaChartReconciler) { r.PollInterval = time.Hour })
	ctx := context.Background()
	ns := newNamespace(t, "watchready")
	act := newChart(ns, "web", "wr", chartDir(t, "small"))
	act.Spec.Values = values(t, `{"replicas": 1}`)
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(act)
	waitFor(t, key, 60*time.Second, "satisfied after install", satisfiedAt(1))

	got := update(t, key, func(c *armadav1.ArmadaChart) { c.Spec.Values = values(t, `{"replicas": 2, "greeting": "again"}`) })
	got = waitFor(t, key, 60*time.Second, "satisfied after upgrade", satisfiedAt(got.Generation))
	if got.Status.HelmRevision != 2 {
		t.Fatalf("revision %d, want 2", got.Status.HelmRevision)
	}
	var d appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "wr-web"}, &d); err != nil {
		t.Fatal(err)
	}
	if d.Status.AvailableReplicas != 2 || d.Status.UpdatedReplicas != 2 {
		t.Fatalf("chart satisfied with Deployment status %+v", d.Status)
	}
}

// eventually polls cond until it holds, failing the test after a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := kwait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}
