package reconcilers

import (
	"context"

	"github.com/go-logr/logr"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/wait"
)

// A chart waiting for its release's workloads is satisfied by the watch
// event of the last of them to become ready: the event handler reads the
// chart's wait from the cache, and a wait that is over puts the chart at
// the head of the work queue (satisfyPriority), ahead of charts waiting
// to be installed, whose Helm actions would otherwise hold every worker
// for as long as they are queued. While a chart waits and its workloads
// are not all ready, their events start no pass: the poll (PollInterval)
// refreshes the chart's message and enforces wait.timeout. That the chart
// waits is read from its cached status, or, while the cache does not hold
// the status the last pass wrote yet, from what that pass left
// (leftWaiting). Nor do they
// while a pass on the chart is under way (an install creates the workloads
// whose events then arrive): that pass looks at the wait itself.

// satisfyPriority is the work-queue priority of a chart whose wait the
// cache shows is over; every other add has priority 0 (queuePriority).
const satisfyPriority = 100

// chartQueue is controller-runtime's priority queue with two priorities:
// satisfyPriority for the immediate adds of workload events that end a
// chart's wait, 0 for everything else, served in the order it became due,
// as a FIFO queue would. controller-runtime's lower priority for objects
// of an informer's initial list, which their requeues keep, is not used:
// charts polled every few seconds would starve those (see
// operatorkit.NewManager, which turns the priority queue off for that).
type chartQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
}

// newChartQueue is the ArmadaChart controller's queue (controller.Options
// NewQueue).
func newChartQueue(log logr.Logger) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		return chartQueue{priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
			o.RateLimiter = rl
			o.Log = log.WithValues("controller", name)
		})}
	}
}

// AddWithOpts adds items at queuePriority(o).
func (q chartQueue) AddWithOpts(o priorityqueue.AddOpts, items ...reconcile.Request) {
	p := queuePriority(o)
	o.Priority = &p
	q.PriorityQueue.AddWithOpts(o, items...)
}

// queuePriority is the priority of an add to the chart queue:
// satisfyPriority only for an immediate add at that priority, 0 for every
// other one (a requeue after a pass keeps the priority of the pass in
// controller-runtime; here it does not).
func queuePriority(o priorityqueue.AddOpts) int {
	if o.Priority != nil && *o.Priority == satisfyPriority && o.After == 0 && !o.RateLimited {
		return satisfyPriority
	}
	return 0
}

// workloadEffect is what an event of one of a release's workloads does to
// the release's chart.
type workloadEffect int

const (
	// effectReconcile: a pass in turn, as for any change (the chart is
	// deployed and may have drifted, or its status does not say yet that
	// it waits for its workloads).
	effectReconcile workloadEffect = iota
	// effectSatisfy: the chart's wait is not done and the cache shows its
	// workloads all ready: a pass before any other work.
	effectSatisfy
	// effectNone: the chart waits for its workloads and they are still not
	// all ready; the poll looks again.
	effectNone
)

func (e workloadEffect) String() string {
	switch e {
	case effectReconcile:
		return "reconcile"
	case effectSatisfy:
		return "satisfy"
	case effectNone:
		return "none"
	}
	return "unknown"
}

// waitPhase is where a chart's cached status says its wait is.
type waitPhase int

const (
	// waitUnknown: a pass may be under way (an install or upgrade whose
	// status is not written yet), or the chart failed, or has a new spec.
	waitUnknown waitPhase = iota
	// waitPending: the last pass, for the chart's current generation and
	// target state, ended waiting for the workloads of the release's
	// current revision.
	waitPending
	// waitDone: the current revision was seen ready (status.waitCompleted
	// for the current generation and target state); only drift matters.
	waitDone
	// waitInPass: the status says nothing yet, and a pass on the chart is
	// under way: it looks at the wait itself once its Helm action is done,
	// so only an event showing every workload ready is news to it.
	waitInPass
)

// waitPhaseOf reads c's wait phase from its status.
func waitPhaseOf(c *armadav1.ArmadaChart) waitPhase {
	if c.Status.ObservedGeneration != c.Generation {
		return waitUnknown
	}
	if t, err := chartTarget(c); err != nil || t != c.Status.TargetState {
		return waitUnknown
	}
	if c.Status.WaitCompleted {
		return waitDone
	}
	ready := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.ReadyCondition)
	if ready != nil && ready.Reason == ReasonWaiting && ready.ObservedGeneration == c.Generation {
		return waitPending
	}
	return waitUnknown
}

// effectOf chooses a workload event's effect on a chart from its wait
// phase and, unless the wait is done, what its wait read from the cache
// (checkErr when it could not be read). A wait the cache shows over
// satisfies a chart whose pass is still under way too: the pass looked
// before the event, and the chart runs again, first, once it ends.
func effectOf(phase waitPhase, res wait.Result, checkErr error) workloadEffect {
	switch {
	case phase == waitDone, checkErr != nil:
		return effectReconcile
	case res.Ready:
		return effectSatisfy
	case phase == waitPending, phase == waitInPass:
		return effectNone
	default:
		return effectReconcile
	}
}

// workloadHandler maps events of the release's workloads to their charts
// with the effect effectOf chooses.
func (r *ArmadaChartReconciler) workloadHandler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.enqueueForWorkload(ctx, q, e.Object, e.IsInInitialList)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			resync := e.ObjectOld.GetResourceVersion() == e.ObjectNew.GetResourceVersion()
			if releaseOf(e.ObjectOld) != releaseOf(e.ObjectNew) {
				// The object moved to another release: its old chart
				// lost it.
				r.enqueueForWorkload(ctx, q, e.ObjectOld, resync)
			}
			r.enqueueForWorkload(ctx, q, e.ObjectNew, resync)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.enqueueForWorkload(ctx, q, e.Object, false)
		},
		GenericFunc: func(ctx context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.enqueueForWorkload(ctx, q, e.Object, false)
		},
	}
}

// enqueueForWorkload enqueues the charts of o's release by the effect of
// an event of o. An event of the initial list or of a resync says nothing
// new: its charts are enqueued in turn, without reading their wait.
func (r *ArmadaChartReconciler) enqueueForWorkload(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], o client.Object, unchanged bool) {
	charts, err := r.chartsOfRelease(ctx, o)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ArmadaCharts for a release object", "release", releaseOf(o))
		return
	}
	for i := range charts {
		c := &charts[i]
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Name}}
		if unchanged {
			enqueue(q, req, 0)
			continue
		}
		var res wait.Result
		var err error
		phase := waitPhaseOf(c)
		if phase == waitUnknown && r.leftWaiting(c) {
			// The cache does not hold the last pass's status yet.
			phase = waitPending
		}
		if phase == waitUnknown && r.inPass(req.NamespacedName) {
			phase = waitInPass
		}
		if phase != waitDone {
			res, err = r.checkWait(ctx, c, false)
		}
		effect := effectOf(phase, res, err)
		switch effect {
		case effectSatisfy:
			enqueue(q, req, satisfyPriority)
		case effectReconcile:
			enqueue(q, req, 0)
		case effectNone:
		}
	}
}

// enqueue adds req at priority when q is a priority queue, else in turn.
func enqueue(q workqueue.TypedRateLimitingInterface[reconcile.Request], req reconcile.Request, priority int) {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{Priority: &priority}, req)
		return
	}
	q.Add(req)
}

// releaseOf is the "<namespace>/<name>" of the Helm release o belongs to.
func releaseOf(o client.Object) string {
	ns := o.GetAnnotations()[helmReleaseNamespaceAnnotation]
	if ns == "" {
		ns = o.GetNamespace()
	}
	return releaseKey(ns, o.GetAnnotations()[helmReleaseNameAnnotation])
}

// chartsOfRelease lists, from the cache, the ArmadaCharts whose release o
// belongs to.
func (r *ArmadaChartReconciler) chartsOfRelease(ctx context.Context, o client.Object) ([]armadav1.ArmadaChart, error) {
	var list armadav1.ArmadaChartList
	if err := r.Client.List(ctx, &list, client.MatchingFields{releaseKeyIndex: releaseOf(o)}); err != nil {
		return nil, err
	}
	return list.Items, nil
}
