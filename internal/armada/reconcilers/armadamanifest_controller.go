package reconcilers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// manifestGroupIndex indexes ArmadaManifests by the group names they list.
const manifestGroupIndex = "armada.airshipit.org/manifest-group"

// Manifest condition reasons.
const (
	ReasonGroupMissing   = "GroupMissing"
	ReasonGroupOwned     = "GroupOwnedElsewhere"
	ReasonGroupStalled   = "GroupStalled"
	ReasonGroupsPending  = "GroupsPending"
	ReasonNotImplemented = "NotImplemented"
)

// ArmadaManifestReconciler deploys a manifest's groups strictly in order
// under its release prefix, and summarises them.
type ArmadaManifestReconciler struct {
	Client client.Client
	// APIReader reads the object itself uncached; nil uses Client.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	// Helm uninstalls releases for enable_chart_cleanup.
	Helm *helm.Client
}

// SetupWithManager registers the reconciler and its watches.
func (r *ArmadaManifestReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	return setupOwner(ctx, mgr, r.Client, r, "armadamanifest", &armadav1.ArmadaManifest{}, &armadav1.ArmadaManifestList{}, &armadav1.ArmadaChartGroup{}, manifestGroupIndex,
		func(o client.Object) []string { return o.(*armadav1.ArmadaManifest).Spec.ChartGroups })
}

// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadamanifests,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadamanifests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadamanifests/finalizers,verbs=update

// Reconcile enables the manifest's groups one after another.
func (r *ArmadaManifestReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcileOwner(ctx, r.Client, r.APIReader, r.Recorder, req.NamespacedName, &armadav1.ArmadaManifest{}, manifestStatus, r.reconcileGroups)
}

// groups are a manifest's members. A group is done when it is Ready, which
// includes a group whose only unsatisfied charts are failed protected ones
// with continue_processing.
var groups = memberKind[*armadav1.ArmadaChartGroup]{
	kind: "ArmadaChartGroup", field: "spec.chart_groups", newMember: func() *armadav1.ArmadaChartGroup { return &armadav1.ArmadaChartGroup{} },
	report: func(g *armadav1.ArmadaChartGroup) memberReport {
		return memberReport{g.Status.ObservedGeneration, g.Status.TargetState, apimeta.IsStatusConditionTrue(g.Status.Conditions, armadav1.ReadyCondition), g.Status.Conditions}
	},
	reasons: memberReasons{ReasonGroupMissing, ReasonGroupOwned, ReasonGroupStalled, ReasonGroupsPending, "GroupEnabled"},
}

func (r *ArmadaManifestReconciler) reconcileGroups(ctx context.Context, m *armadav1.ArmadaManifest) (stepResult, error) {
	id := idOf(m)
	st := &m.Status
	st.TotalGroups = int32(len(m.Spec.ChartGroups))
	st.SatisfiedGroups, st.UnsatisfiedGroups, st.CurrentGroup, st.Satisfied = 0, nil, "", false
	defer func() { st.Summary = fmt.Sprintf("%d/%d", st.SatisfiedGroups, st.TotalGroups) }()
	target := m.Spec.TargetState
	if target == "" {
		target = armadav1.TargetStateDeployed
	}
	if m.Spec.EnableChartCleanup && r.Helm == nil {
		return stepResult{operatorkit.Stalled, ReasonNotImplemented, id + ": spec.enable_chart_cleanup needs the operator's Helm client, which this reconciler was built without"}, nil
	}
	res, err := groups.enable(ctx, r.Client, r.Recorder, enablement{
		owner:       m,
		names:       m.Spec.ChartGroups,
		target:      target,
		sequenced:   true,
		annotations: map[string]string{ReleasePrefixAnnotation: m.Spec.ReleasePrefix},
	})
	st.SatisfiedGroups, st.UnsatisfiedGroups, st.CurrentGroup = res.satisfied, res.unsatisfied, res.current
	if err != nil || res.outcome != operatorkit.Succeeded || target == armadav1.TargetStateUninitialized {
		return res.stepResult, err
	}
	if m.Spec.EnableChartCleanup && target == armadav1.TargetStateDeployed {
		if err := r.cleanupCharts(ctx, m, res.members); err != nil {
			return stepResult{}, err
		}
	}
	st.Satisfied = true
	return res.stepResult, nil
}

// cleanupCharts uninstalls releases named "<release_prefix>-..." that no
// chart of the manifest owns any more, like `armada apply
// --enable-chart-cleanup`. Release records are read from Helm's Secrets
// (owner=helm) in every namespace.
func (r *ArmadaManifestReconciler) cleanupCharts(ctx context.Context, m *armadav1.ArmadaManifest, groups []*armadav1.ArmadaChartGroup) error {
	id := fmt.Sprintf("ArmadaManifest %s/%s", m.Namespace, m.Name)
	wanted := map[string]bool{}
	for _, g := range groups {
		for _, name := range g.Spec.ChartGroup {
			c := &armadav1.ArmadaChart{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: name}, c); err != nil {
				return fmt.Errorf("%s: spec.enable_chart_cleanup: reading ArmadaChart %s/%s: %w", id, g.Namespace, name, err)
			}
			wanted[releaseKey(c.Spec.Namespace, m.Spec.ReleasePrefix+"-"+c.Spec.Release)] = true
		}
	}
	var secrets corev1.SecretList
	if err := reader(r.APIReader, r.Client).List(ctx, &secrets, client.MatchingLabels{"owner": "helm"}); err != nil {
		return fmt.Errorf("%s: spec.enable_chart_cleanup: listing Helm release records: %w", id, err)
	}
	done := map[string]bool{}
	for _, s := range secrets.Items {
		name := s.Labels["name"]
		key := releaseKey(s.Namespace, name)
		if !strings.HasPrefix(name, m.Spec.ReleasePrefix+"-") || wanted[key] || done[key] {
			continue
		}
		done[key] = true
		// A prefix can be the start of another manifest's prefix ("site" and
		// "site-b"): never remove a release some ArmadaChart still owns.
		var owners armadav1.ArmadaChartList
		if err := r.Client.List(ctx, &owners, client.MatchingFields{releaseKeyIndex: key}); err != nil {
			return fmt.Errorf("%s: spec.enable_chart_cleanup: %w", id, err)
		}
		if len(owners.Items) > 0 {
			continue
		}
		if err := r.Helm.Uninstall(s.Namespace, name, time.Duration(armadav1.DefaultDeleteTimeoutSeconds)*time.Second); err != nil {
			return fmt.Errorf("%s: spec.enable_chart_cleanup: %w", id, err)
		}
		operatorkit.Events{Recorder: r.Recorder}.Record(m, corev1.EventTypeNormal, "ChartCleanup", "Uninstall",
			fmt.Sprintf("release %s no longer belongs to the manifest; uninstalled", key))
	}
	return nil
}

// manifestStatus points the shared reconcile at the status fields it writes.
func manifestStatus(m *armadav1.ArmadaManifest) ownerStatus {
	return ownerStatus{observedGeneration: &m.Status.ObservedGeneration, conditions: &m.Status.Conditions, satisfied: &m.Status.Satisfied}
}
