package reconcilers

import (
	"context"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/operatorkit"
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
	return setupOwner(ctx, mgr, r.Client, r, "armadachartgroup", &armadav1.ArmadaChartGroup{}, &armadav1.ArmadaChartGroupList{}, &armadav1.ArmadaChart{}, groupChartIndex,
		func(o client.Object) []string { return o.(*armadav1.ArmadaChartGroup).Spec.ChartGroup })
}

// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadachartgroups,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadachartgroups/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadachartgroups/finalizers,verbs=update

// Reconcile takes the group's charts, enables them in order, and summarises.
// Deleting a group deletes its charts through their owner references, and
// each chart's finalizer uninstalls its release.
func (r *ArmadaChartGroupReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileOwner(ctx, r.Client, r.APIReader, r.Recorder, req.NamespacedName, &armadav1.ArmadaChartGroup{}, groupStatus, r.reconcileCharts)
}

// groupTarget is the target state of a group: its manifest's
// TargetStateAnnotation, else spec.target_state.
func groupTarget(g *armadav1.ArmadaChartGroup) (armadav1.TargetState, error) {
	return effectiveTarget(g, g.Spec.TargetState)
}

// charts are a group's members. A group moves past a chart that is not
// satisfied when it is a protected release that failed, whose
// continue_processing lets the rest go on.
var charts = memberKind[*armadav1.ArmadaChart]{
	kind: "ArmadaChart", field: "spec.chart_group", newMember: func() *armadav1.ArmadaChart { return &armadav1.ArmadaChart{} },
	report: func(c *armadav1.ArmadaChart) memberReport {
		return memberReport{c.Status.ObservedGeneration, c.Status.TargetState, c.Status.Satisfied, c.Status.Conditions}
	},
	passable: func(c *armadav1.ArmadaChart, stalled *metav1.Condition) bool {
		return stalled.Reason == ReasonProtected && c.Spec.Protected != nil && c.Spec.Protected.ContinueProcessing
	},
	reasons: memberReasons{ReasonChartMissing, ReasonChartOwned, ReasonChartFailed, ReasonChartsPending, "ChartEnabled"},
}

func (r *ArmadaChartGroupReconciler) reconcileCharts(ctx context.Context, g *armadav1.ArmadaChartGroup) (stepResult, error) {
	st := &g.Status
	st.TotalCharts = int32(len(g.Spec.ChartGroup))
	st.SatisfiedCharts, st.UnsatisfiedCharts, st.Satisfied = 0, nil, false
	defer func() { st.Summary = fmt.Sprintf("%d/%d", st.SatisfiedCharts, st.TotalCharts) }()
	target, err := groupTarget(g)
	if err != nil {
		return stepResult{operatorkit.Stalled, ReasonInvalidTargetState, fmt.Sprintf("%s: %v", idOf(g), err)}, nil
	}
	st.TargetState = target
	tc := ""
	if g.Spec.TestCharts != nil {
		tc = strconv.FormatBool(*g.Spec.TestCharts)
	}
	res, err := charts.enable(ctx, r.Client, r.Recorder, enablement{
		owner:     g,
		names:     g.Spec.ChartGroup,
		target:    target,
		sequenced: g.Spec.Sequenced,
		annotations: map[string]string{
			ReleasePrefixAnnotation: g.Annotations[ReleasePrefixAnnotation],
			TestChartsAnnotation:    tc,
		},
	})
	st.SatisfiedCharts, st.UnsatisfiedCharts = res.satisfied, res.unsatisfied
	st.Satisfied = err == nil && target != armadav1.TargetStateUninitialized && res.outcome == operatorkit.Succeeded && len(res.unsatisfied) == 0
	return res.stepResult, err
}

// groupStatus points the shared reconcile at the status fields it writes.
func groupStatus(g *armadav1.ArmadaChartGroup) ownerStatus {
	return ownerStatus{observedGeneration: &g.Status.ObservedGeneration, conditions: &g.Status.Conditions, satisfied: &g.Status.Satisfied}
}
