package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	"github.com/airshipit/airship-go/internal/armada/helm"
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
	// Helm uninstalls releases for enable_chart_cleanup.
	Helm *helm.Client
	// APIReader reads the object itself uncached; nil uses Client.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
}

// SetupWithManager registers the reconciler and its watches.
func (r *ArmadaManifestReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &armadav1.ArmadaManifest{}, manifestGroupIndex, func(o client.Object) []string {
		return o.(*armadav1.ArmadaManifest).Spec.ChartGroups
	}); err != nil {
		return fmt.Errorf("indexing ArmadaManifests by group: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&armadav1.ArmadaManifest{}).
		Watches(&armadav1.ArmadaChartGroup{}, handler.EnqueueRequestsFromMapFunc(r.manifestsForGroup)).
		Named("armadamanifest").
		Complete(r)
}

func (r *ArmadaManifestReconciler) manifestsForGroup(ctx context.Context, o client.Object) []reconcile.Request {
	var l armadav1.ArmadaManifestList
	if err := r.Client.List(ctx, &l, client.InNamespace(o.GetNamespace()), client.MatchingFields{manifestGroupIndex: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing ArmadaManifests for a group")
		return nil
	}
	out := make([]reconcile.Request, 0, len(l.Items))
	for _, m := range l.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.Namespace, Name: m.Name}})
	}
	return out
}

// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadamanifests,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadamanifests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=armada.airshipit.org,resources=armadamanifests/finalizers,verbs=update

// Reconcile enables the manifest's groups one after another.
func (r *ArmadaManifestReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &armadav1.ArmadaManifest{}
	if err := reader(r.APIReader, r.Client).Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	base := m.DeepCopy()
	out, reason, msg, err := r.reconcileGroups(ctx, m)
	if err != nil {
		out, reason, msg = outcomeFailed, ReasonFailed, err.Error()
	}
	m.Status.ObservedGeneration = m.Generation
	m.Status.Summary = fmt.Sprintf("%d/%d", m.Status.SatisfiedGroups, m.Status.TotalGroups)
	setConditions(&m.Status.Conditions, m.Generation, out, reason, msg)
	if out == outcomeStalled && !sameCondition(base.Status.Conditions, m.Status.Conditions, armadav1.StalledCondition) && r.Recorder != nil {
		r.Recorder.Eventf(m, nil, corev1.EventTypeWarning, reason, "Reconcile", "%s", truncate(msg))
	}
	if perr := r.Client.Status().Patch(ctx, m, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); perr != nil && !apierrors.IsNotFound(perr) {
		if apierrors.IsConflict(perr) {
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, fmt.Errorf("patching status of ArmadaManifest %s/%s: %w", m.Namespace, m.Name, perr)
	}
	return ctrl.Result{}, err
}

func groupSatisfied(g *armadav1.ArmadaChartGroup, target armadav1.TargetState) bool {
	if g.Status.ObservedGeneration != g.Generation || groupTarget(g) != target {
		return false
	}
	r := apimeta.FindStatusCondition(g.Status.Conditions, armadav1.ReadyCondition)
	return r != nil && r.Status == metav1.ConditionTrue && r.ObservedGeneration == g.Generation
}

func (r *ArmadaManifestReconciler) reconcileGroups(ctx context.Context, m *armadav1.ArmadaManifest) (outcome, string, string, error) {
	id := fmt.Sprintf("ArmadaManifest %s/%s", m.Namespace, m.Name)
	st := &m.Status
	st.TotalGroups = int32(len(m.Spec.ChartGroups))
	st.SatisfiedGroups = 0
	st.UnsatisfiedGroups = nil
	st.CurrentGroup = ""
	st.Satisfied = false
	target := m.Spec.TargetState
	if target == "" {
		target = armadav1.TargetStateDeployed
	}
	if m.Spec.EnableChartCleanup && r.Helm == nil {
		return outcomeStalled, ReasonNotImplemented, id + ": spec.enable_chart_cleanup needs the operator's Helm client, which this reconciler was built without", nil
	}

	groups := make([]*armadav1.ArmadaChartGroup, len(m.Spec.ChartGroups))
	var missing []string
	for i, name := range m.Spec.ChartGroups {
		g := &armadav1.ArmadaChartGroup{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, g); err != nil {
			if apierrors.IsNotFound(err) {
				missing = append(missing, fmt.Sprintf("spec.chart_groups[%d]: ArmadaChartGroup %s/%s not found", i, m.Namespace, name))
				st.UnsatisfiedGroups = append(st.UnsatisfiedGroups, name)
				continue
			}
			return 0, "", "", fmt.Errorf("%s: spec.chart_groups[%d]: getting ArmadaChartGroup %s: %w", id, i, name, err)
		}
		groups[i] = g
	}
	if len(missing) > 0 {
		return outcomeStalled, ReasonGroupMissing, id + ": " + strings.Join(missing, "; "), nil
	}
	for i, g := range groups {
		patch := client.MergeFrom(g.DeepCopy())
		if err := controllerutil.SetControllerReference(m, g, r.Client.Scheme()); err != nil {
			var already *controllerutil.AlreadyOwnedError
			if asAlreadyOwned(err, &already) {
				return outcomeStalled, ReasonGroupOwned, fmt.Sprintf("%s: spec.chart_groups[%d]: ArmadaChartGroup %s already belongs to %s %s", id, i, g.Name, already.Owner.Kind, already.Owner.Name), nil
			}
			return 0, "", "", fmt.Errorf("%s: spec.chart_groups[%d]: %w", id, i, err)
		}
		setAnnotation(g, ReleasePrefixAnnotation, m.Spec.ReleasePrefix)
		if err := r.Client.Patch(ctx, g, patch); err != nil {
			return 0, "", "", fmt.Errorf("%s: spec.chart_groups[%d]: updating ArmadaChartGroup %s: %w", id, i, g.Name, err)
		}
	}
	if target == armadav1.TargetStateUninitialized {
		return outcomeReady, ReasonUninitialized, id + ": target_state is uninitialized; groups are left alone", nil
	}
	for i, g := range groups {
		if groupTarget(g) != target {
			patch := client.MergeFrom(g.DeepCopy())
			g.Spec.TargetState = target
			if err := r.Client.Patch(ctx, g, patch); err != nil {
				return 0, "", "", fmt.Errorf("%s: spec.chart_groups[%d]: enabling ArmadaChartGroup %s: %w", id, i, g.Name, err)
			}
			if r.Recorder != nil {
				r.Recorder.Eventf(m, g, corev1.EventTypeNormal, "GroupEnabled", "Enable", "ArmadaChartGroup %s target_state set to %s", g.Name, target)
			}
		}
		if groupSatisfied(g, target) {
			st.SatisfiedGroups++
			continue
		}
		for _, rest := range groups[i:] {
			st.UnsatisfiedGroups = append(st.UnsatisfiedGroups, rest.Name)
		}
		st.CurrentGroup = g.Name
		if s := apimeta.FindStatusCondition(g.Status.Conditions, armadav1.StalledCondition); s != nil && s.Status == metav1.ConditionTrue && s.ObservedGeneration == g.Generation {
			return outcomeStalled, ReasonGroupStalled, fmt.Sprintf("%s: spec.chart_groups[%d]: ArmadaChartGroup %s is stalled: %s", id, i, g.Name, s.Message), nil
		}
		return outcomeProgressing, ReasonGroupsPending, fmt.Sprintf("%s: deploying group %d/%d %s", id, i+1, len(groups), g.Name), nil
	}
	if m.Spec.EnableChartCleanup && target == armadav1.TargetStateDeployed {
		if err := r.cleanupCharts(ctx, m, groups); err != nil {
			return 0, "", "", err
		}
	}
	st.Satisfied = true
	return outcomeReady, ReasonSucceeded, fmt.Sprintf("%s: all %d groups satisfied", id, len(groups)), nil
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
		if r.Recorder != nil {
			r.Recorder.Eventf(m, nil, corev1.EventTypeNormal, "ChartCleanup", "Uninstall", "release %s no longer belongs to the manifest; uninstalled", key)
		}
	}
	return nil
}
