package reconcilers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/chartsource"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// Dependency condition reasons.
const (
	ReasonDependencyMissing = "DependencyMissing"
	ReasonDependencyCycle   = "DependencyCycle"
)

// dependencyIndex indexes ArmadaCharts by the names in spec.dependencies.
const dependencyIndex = "armada.airshipit.org/dependency"

// dependentsOf maps an ArmadaChart to every chart in its namespace that
// vendors it, directly or through other dependencies.
func (r *ArmadaChartReconciler) dependentsOf(ctx context.Context, o client.Object) []reconcile.Request {
	seen := map[string]bool{o.GetName(): true}
	var out []reconcile.Request
	for queue := []string{o.GetName()}; len(queue) > 0; queue = queue[1:] {
		var list armadav1.ArmadaChartList
		if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{dependencyIndex: queue[0]}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing dependents of an ArmadaChart", "chart", queue[0])
			continue
		}
		for _, c := range list.Items {
			if seen[c.Name] {
				continue
			}
			seen[c.Name] = true
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Name}})
			queue = append(queue, c.Name)
		}
	}
	return out
}

// injectDependencies vendors the charts spec.dependencies names (ArmadaCharts
// in the same namespace, recursively) into ch as subcharts, replacing any
// subchart of the same name, as Armada does to inject helm-toolkit.
func (r *ArmadaChartReconciler) injectDependencies(ctx context.Context, obj *armadav1.ArmadaChart, ch *chartv2.Chart) error {
	return r.inject(ctx, client.ObjectKeyFromObject(obj), obj, ch, []string{obj.Name})
}

// inject vendors obj's dependencies into ch; waiter is the chart being
// reconciled, notified when a dependency's archive has been fetched.
func (r *ArmadaChartReconciler) inject(ctx context.Context, waiter types.NamespacedName, obj *armadav1.ArmadaChart, ch *chartv2.Chart, path []string) error {
	for i, name := range obj.Spec.Dependencies {
		for _, p := range path {
			if p == name {
				return operatorkit.Stall(ReasonDependencyCycle, fmt.Errorf("ArmadaChart %s/%s: spec.dependencies[%d]: cycle %s -> %s", obj.Namespace, obj.Name, i, strings.Join(path, " -> "), name))
			}
		}
		dep := &armadav1.ArmadaChart{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: name}, dep); err != nil {
			if apierrors.IsNotFound(err) {
				return operatorkit.Stall(ReasonDependencyMissing, fmt.Errorf("ArmadaChart %s/%s: spec.dependencies[%d]: ArmadaChart %s/%s not found", obj.Namespace, obj.Name, i, obj.Namespace, name))
			}
			return fmt.Errorf("ArmadaChart %s/%s: spec.dependencies[%d]: %w", obj.Namespace, obj.Name, i, err)
		}
		depChart, err := r.Loader.LoadFor(ctx, dep.Spec.Source, waiter)
		if errors.Is(err, chartsource.ErrFetching) {
			return r.fetching(fmt.Errorf("ArmadaChart %s/%s: spec.dependencies[%d] (%s): spec.source: %w", obj.Namespace, obj.Name, i, name, err))
		}
		if err != nil {
			if errors.Is(err, chartsource.ErrNotFound) || errors.Is(err, chartsource.ErrInvalid) {
				return operatorkit.Stall(ReasonDependencyMissing, fmt.Errorf("ArmadaChart %s/%s: spec.dependencies[%d] (%s): spec.source: %w", obj.Namespace, obj.Name, i, name, err))
			}
			return operatorkit.Fail(ReasonSourceFetchFailed, fmt.Errorf("ArmadaChart %s/%s: spec.dependencies[%d] (%s): %w", obj.Namespace, obj.Name, i, name, err))
		}
		if err := r.inject(ctx, waiter, dep, depChart, append(path, name)); err != nil {
			return err
		}
		kept := ch.Dependencies()[:0:0]
		for _, d := range ch.Dependencies() {
			if d.Name() != depChart.Name() {
				kept = append(kept, d)
			}
		}
		ch.SetDependencies(append(kept, depChart)...)
	}
	return nil
}
