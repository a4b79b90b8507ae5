package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// groupChartIndex indexes ArmadaChartGroups by the chart names they list,
// so a chart created after its group still wakes the group.
const groupChartIndex = "armada.airshipit.org/chart-group"

// Group condition reasons.
const (
	ReasonChartMissing  = "ChartMissing"
	ReasonChartOwned    = "ChartOwnedElsewhere"
	ReasonChartFailed   = "ChartFailed"
	ReasonChartsPending = "ChartsPending"
)

// ArmadaChartGroupReconciler enables a group's charts, one at a time when
// sequenced, and summarises them.
type ArmadaChartGroupReconciler struct {
	Client client.Client
	// APIReader reads the object itself uncached; nil uses Client.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
}

// SetupWithManager registers the reconciler and its watches.
func (r *ArmadaChartGroupReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &armadav1.ArmadaChartGroup{}, groupChartIndex, func(o client.Object) []string {
		return o.(*armadav1.ArmadaChartGroup).Spec.ChartGroup
	}); err != nil {
		return fmt.Errorf("indexing ArmadaChartGroups by chart: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&armadav1.ArmadaChartGroup{}).
		Watches(&armadav1.ArmadaChart{}, handler.EnqueueRequestsFromMapFunc(r.groupsForChart)).
		Named("armadachartgroup").
		Complete(r)
}

func (r *ArmadaChartGroupReconciler) groupsForChart(ctx context.Context, o client.Object) []reconcile.Request {
	var l armadav1.ArmadaChartGroupList
	if err := r.Client.List(ctx, &l, client.InNamespace(o.GetNamespace()), client.MatchingFields{groupChartIndex: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ArmadaChartGroups for a chart")
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for _, g := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: g.Namespace, Name: g.Name}})
	}
	return out
}

// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadachartgroups,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadachartgroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadachartgroups/finalizers,verbs=update

// Reconcile takes the group's charts, enables them in order, and summarises.
// Deleting a group deletes its charts through their owner references, and
// each chart's finalizer uninstalls its release.
func (r *ArmadaChartGroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g := &armadav1.ArmadaChartGroup{}
	if err := reader(r.APIReader, r.Client).Get(ctx, req.NamespacedName, g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !g.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	base := g.DeepCopy()
	out, reason, msg, err := r.reconcileCharts(ctx, g)
	if err != nil {
		out, reason, msg = outcomeFailed, ReasonFailed, err.Error()
	}
	g.Status.ObservedGeneration = g.Generation
	setConditions(&g.Status.Conditions, g.Generation, out, reason, msg)
	if out == outcomeStalled && !sameCondition(base.Status.Conditions, g.Status.Conditions, armadav1.StalledCondition) && r.Recorder != nil {
		r.Recorder.Eventf(g, nil, corev1.EventTypeWarning, reason, "Reconcile", "%s", truncate(msg))
	}
	if out == outcomeReady && !base.Status.Satisfied && r.Recorder != nil {
		r.Recorder.Eventf(g, nil, corev1.EventTypeNormal, ReasonSatisfied, "Reconcile", "%s", msg)
	}
	if perr := r.Client.Status().Patch(ctx, g, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); perr != nil && !apierrors.IsNotFound(perr) {
		if apierrors.IsConflict(perr) {
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, fmt.Errorf("patching status of ArmadaChartGroup %s/%s: %w", g.Namespace, g.Name, perr)
	}
	return ctrl.Result{}, err
}

func groupTarget(g *armadav1.ArmadaChartGroup) armadav1.TargetState {
	if g.Spec.TargetState == "" {
		return armadav1.TargetStateDeployed
	}
	return g.Spec.TargetState
}

// chartSatisfied reports whether a chart has reached target for its current
// generation.
func chartSatisfied(c *armadav1.ArmadaChart, target armadav1.TargetState) bool {
	return c.Status.ObservedGeneration == c.Generation && c.Spec.TargetState == target && c.Status.Satisfied
}

// chartPassable reports whether a sequenced group may move past a chart
// that is not satisfied: a protected release that failed, whose
// continue_processing lets the rest go on.
func chartPassable(c *armadav1.ArmadaChart) bool {
	if c.Spec.Protected == nil || !c.Spec.Protected.ContinueProcessing {
		return false
	}
	s := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.StalledCondition)
	return s != nil && s.Status == metav1.ConditionTrue && s.Reason == ReasonProtected && s.ObservedGeneration == c.Generation
}

func chartBlocked(c *armadav1.ArmadaChart) (string, bool) {
	s := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.StalledCondition)
	if s != nil && s.Status == metav1.ConditionTrue && s.ObservedGeneration == c.Generation && !chartPassable(c) {
		return s.Message, true
	}
	return "", false
}

func (r *ArmadaChartGroupReconciler) reconcileCharts(ctx context.Context, g *armadav1.ArmadaChartGroup) (outcome, string, string, error) {
	id := fmt.Sprintf("ArmadaChartGroup %s/%s", g.Namespace, g.Name)
	target := groupTarget(g)
	st := &g.Status
	st.TotalCharts = int32(len(g.Spec.ChartGroup))
	st.SatisfiedCharts = 0
	st.UnsatisfiedCharts = nil

	// Fetch every chart first: a missing one stalls the group before any
	// chart is touched.
	charts := make([]*armadav1.ArmadaChart, len(g.Spec.ChartGroup))
	var missing []string
	seen := map[string]int{}
	for i, name := range g.Spec.ChartGroup {
		if j, dup := seen[name]; dup {
			return outcomeStalled, ReasonChartMissing, fmt.Sprintf("%s: spec.chart_group[%d]: %q is listed twice (also at [%d])", id, i, name, j), nil
		}
		seen[name] = i
		c := &armadav1.ArmadaChart{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: name}, c); err != nil {
			if apierrors.IsNotFound(err) {
				missing = append(missing, fmt.Sprintf("spec.chart_group[%d]: ArmadaChart %s/%s not found", i, g.Namespace, name))
				st.UnsatisfiedCharts = append(st.UnsatisfiedCharts, name)
				continue
			}
			return 0, "", "", fmt.Errorf("%s: spec.chart_group[%d]: getting ArmadaChart %s: %w", id, i, name, err)
		}
		charts[i] = c
	}
	defer func() { st.Summary = fmt.Sprintf("%d/%d", st.SatisfiedCharts, st.TotalCharts) }()
	if len(missing) > 0 {
		return outcomeStalled, ReasonChartMissing, id + ": " + strings.Join(missing, "; "), nil
	}

	// Take ownership and pass down what the group decides for its charts.
	for i, c := range charts {
		patch := client.MergeFrom(c.DeepCopy())
		if err := controllerutil.SetControllerReference(g, c, r.Client.Scheme()); err != nil {
			var already *controllerutil.AlreadyOwnedError
			if ok := asAlreadyOwned(err, &already); ok {
				return outcomeStalled, ReasonChartOwned, fmt.Sprintf("%s: spec.chart_group[%d]: ArmadaChart %s already belongs to %s %s", id, i, c.Name, already.Owner.Kind, already.Owner.Name), nil
			}
			return 0, "", "", fmt.Errorf("%s: spec.chart_group[%d]: %w", id, i, err)
		}
		setAnnotation(c, ReleasePrefixAnnotation, g.Annotations[ReleasePrefixAnnotation])
		tc := ""
		if g.Spec.TestCharts != nil {
			tc = strconv.FormatBool(*g.Spec.TestCharts)
		}
		setAnnotation(c, TestChartsAnnotation, tc)
		if err := r.Client.Patch(ctx, c, patch); err != nil {
			return 0, "", "", fmt.Errorf("%s: spec.chart_group[%d]: updating ArmadaChart %s: %w", id, i, c.Name, err)
		}
	}

	if target == armadav1.TargetStateUninitialized {
		for _, c := range charts {
			if c.Status.Satisfied {
				st.SatisfiedCharts++
			} else {
				st.UnsatisfiedCharts = append(st.UnsatisfiedCharts, c.Name)
			}
		}
		st.Satisfied = false
		return outcomeReady, ReasonUninitialized, id + ": target_state is uninitialized; charts are left alone", nil
	}

	// Enable charts: all at once, or the next one once those before it are
	// satisfied (or failed but protected with continue_processing).
	var waitingOn []string
	for i, c := range charts {
		if c.Spec.TargetState != target {
			patch := client.MergeFrom(c.DeepCopy())
			c.Spec.TargetState = target
			if err := r.Client.Patch(ctx, c, patch); err != nil {
				return 0, "", "", fmt.Errorf("%s: spec.chart_group[%d]: enabling ArmadaChart %s: %w", id, i, c.Name, err)
			}
			if r.Recorder != nil {
				r.Recorder.Eventf(g, c, corev1.EventTypeNormal, "ChartEnabled", "Enable", "ArmadaChart %s target_state set to %s", c.Name, target)
			}
		}
		if chartSatisfied(c, target) {
			st.SatisfiedCharts++
			continue
		}
		st.UnsatisfiedCharts = append(st.UnsatisfiedCharts, c.Name)
		if msg, blocked := chartBlocked(c); blocked {
			return outcomeStalled, ReasonChartFailed, fmt.Sprintf("%s: spec.chart_group[%d]: ArmadaChart %s is stalled: %s", id, i, c.Name, msg), nil
		}
		if g.Spec.Sequenced && !chartPassable(c) {
			waitingOn = append(waitingOn, c.Name)
			// Later charts are not enabled yet; list them as unsatisfied.
			for _, rest := range charts[i+1:] {
				if !chartSatisfied(rest, target) {
					st.UnsatisfiedCharts = append(st.UnsatisfiedCharts, rest.Name)
				} else {
					st.SatisfiedCharts++
				}
			}
			break
		}
		if !chartPassable(c) {
			waitingOn = append(waitingOn, c.Name)
		}
	}
	st.Satisfied = len(st.UnsatisfiedCharts) == 0
	if len(waitingOn) > 0 {
		return outcomeProgressing, ReasonChartsPending, fmt.Sprintf("%s: waiting for ArmadaChart %s", id, strings.Join(waitingOn, ", ")), nil
	}
	if !st.Satisfied {
		// Only protected charts with continue_processing are left.
		return outcomeReady, ReasonSucceeded, fmt.Sprintf("%s: done; failed protected charts left alone: %s", id, strings.Join(st.UnsatisfiedCharts, ", ")), nil
	}
	return outcomeReady, ReasonSucceeded, fmt.Sprintf("%s: all %d charts satisfied", id, st.TotalCharts), nil
}

func setAnnotation(o metav1.Object, key, value string) {
	a := o.GetAnnotations()
	if value == "" {
		if _, ok := a[key]; ok {
			delete(a, key)
			o.SetAnnotations(a)
		}
		return
	}
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	o.SetAnnotations(a)
}
