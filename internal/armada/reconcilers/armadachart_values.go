package reconcilers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// ReasonValuesNotFound: an object or key spec.valuesFrom names is missing.
const ReasonValuesNotFound = "ValuesNotFound"

// valuesFromIndex indexes ArmadaCharts by "<Kind>/<name>" of each
// spec.valuesFrom entry.
const valuesFromIndex = "armada.airshipit.org/values-from"

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch

func valuesFromKey(kind, name string) string { return kind + "/" + name }

func valuesFromKeys(o client.Object) []string {
	c := o.(*armadav1.ArmadaChart)
	out := make([]string, 0, len(c.Spec.ValuesFrom))
	for _, ref := range c.Spec.ValuesFrom {
		out = append(out, valuesFromKey(ref.Kind, ref.Name))
	}
	return out
}

// chartsReadingValues maps a Secret or ConfigMap (metadata only) to the
// ArmadaCharts in its namespace whose spec.valuesFrom names it.
func (r *ArmadaChartReconciler) chartsReadingValues(kind string) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list armadav1.ArmadaChartList
		if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()),
			client.MatchingFields{valuesFromIndex: valuesFromKey(kind, o.GetName())}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing ArmadaCharts that read values from an object", "kind", kind, "name", o.GetName())
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, c := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Name}})
		}
		return out
	}
}

// chartValues returns the values a release gets: each spec.valuesFrom
// entry merged in order, then inline (spec.values, from valuesOf). The
// objects are read directly from the API server (the operator caches their
// metadata only). Errors never quote a Secret's content.
func (r *ArmadaChartReconciler) chartValues(ctx context.Context, c *armadav1.ArmadaChart, inline map[string]any) (map[string]any, error) {
	if len(c.Spec.ValuesFrom) == 0 {
		return inline, nil
	}
	id := fmt.Sprintf("ArmadaChart %s/%s", c.Namespace, c.Name)
	out := map[string]any{}
	for i, ref := range c.Spec.ValuesFrom {
		key := ref.ValuesKey
		if key == "" {
			key = armadav1.DefaultValuesKey
		}
		field := fmt.Sprintf("%s: spec.valuesFrom[%d]: %s %s/%s", id, i, ref.Kind, c.Namespace, ref.Name)
		var data []byte
		var found bool
		var err error
		switch ref.Kind {
		case "Secret":
			var s corev1.Secret
			err = reader(r.APIReader, r.Client).Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: ref.Name}, &s)
			data, found = s.Data[key]
		case "ConfigMap":
			var cm corev1.ConfigMap
			err = reader(r.APIReader, r.Client).Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: ref.Name}, &cm)
			var str string
			str, found = cm.Data[key]
			data = []byte(str)
		default:
			return nil, operatorkit.Stall(ReasonInvalidValues, fmt.Errorf("%s: kind must be Secret or ConfigMap", field))
		}
		switch {
		case apierrors.IsNotFound(err):
			if ref.Optional {
				continue
			}
			return nil, operatorkit.Stall(ReasonValuesNotFound, fmt.Errorf("%s not found", field))
		case err != nil:
			return nil, fmt.Errorf("%s: %w", field, err)
		case !found:
			if ref.Optional {
				continue
			}
			return nil, operatorkit.Stall(ReasonValuesNotFound, fmt.Errorf("%s has no key %s", field, key))
		}
		var v map[string]any
		if err := yaml.Unmarshal(data, &v); err != nil {
			if ref.Kind == "Secret" {
				// The parser's message may quote the content.
				return nil, operatorkit.Stall(ReasonInvalidValues, fmt.Errorf("%s: key %s is not a YAML map", field, key))
			}
			return nil, operatorkit.Stall(ReasonInvalidValues, fmt.Errorf("%s: key %s is not a YAML map: %w", field, key, err))
		}
		mergeValues(out, v)
	}
	mergeValues(out, inline)
	return out, nil
}

// mergeValues merges src into dst: maps key by key, anything else
// replaced, as Helm merges values files.
func mergeValues(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeValues(dm, sm)
				continue
			}
			v = cloneValues(sm)
		}
		dst[k] = v
	}
}

// cloneValues copies the maps of a values map, so merging into the copy
// leaves the source alone.
func cloneValues(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sm, ok := v.(map[string]any); ok {
			v = cloneValues(sm)
		}
		out[k] = v
	}
	return out
}
