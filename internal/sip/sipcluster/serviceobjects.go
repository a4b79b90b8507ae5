package sipcluster

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/sip/services"
)

// applyServices applies the services' objects and deletes the cluster's
// objects that are no longer wanted.
func (r *SIPClusterReconciler) applyServices(ctx context.Context, c *sipv1.SIPCluster, objs []client.Object) error {
	want := map[string]bool{}
	for _, o := range objs {
		gvk, err := gvkOf(r.Client, o)
		if err != nil {
			return err
		}
		o.GetObjectKind().SetGroupVersionKind(gvk)
		o.SetManagedFields(nil)
		o.SetResourceVersion("")
		// services.Build makes typed objects; client.Client.Apply wants
		// apply configurations, and converting a typed object to an
		// unstructured one cannot tell a zero value from one that is set.
		//nolint:staticcheck // the client.Apply patch type applies the typed objects as they are
		if err := r.Client.Patch(ctx, o, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
		want[gvk.Kind+"/"+o.GetName()] = true
	}
	return r.pruneServices(ctx, c, want)
}

// serviceKinds are the kinds services.Build makes, for pruning.
func serviceKinds() []client.ObjectList {
	return []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ServiceList{}, &corev1.ConfigMapList{}, &corev1.SecretList{}}
}

// pruneServices deletes the cluster's service objects not in want (all
// of them when want is empty).
func (r *SIPClusterReconciler) pruneServices(ctx context.Context, c *sipv1.SIPCluster, want map[string]bool) error {
	for _, list := range serviceKinds() {
		if err := r.APIReader.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{sipv1.ClusterNameLabel: c.Name}, client.HasLabels{services.ServiceLabel}); err != nil {
			return fmt.Errorf("listing the cluster's services: %w", err)
		}
		items, err := apimeta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, it := range items {
			o := it.(client.Object)
			gvk, err := gvkOf(r.Client, o)
			if err != nil {
				return err
			}
			if want[gvk.Kind+"/"+o.GetName()] {
				continue
			}
			if err := r.Client.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
			}
		}
	}
	return nil
}

// servicesReady marks each service ready when its Deployment is
// Available with its current generation; it returns how many are and the
// names of the others.
func (r *SIPClusterReconciler) servicesReady(ctx context.Context, c *sipv1.SIPCluster, statuses []sipv1.ServiceStatus) (int, []string) {
	ready := 0
	var waiting []string
	for i := range statuses {
		s := &statuses[i]
		d := &appsv1.Deployment{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: s.Name}, d)
		switch {
		case err != nil:
			s.Ready, s.Message = false, "Deployment: "+err.Error()
		case d.Status.ObservedGeneration < d.Generation:
			s.Ready, s.Message = false, "Deployment not yet observed by its controller"
		case !deploymentAvailable(d):
			s.Ready, s.Message = false, fmt.Sprintf("Deployment %d/%d available", d.Status.AvailableReplicas, ptrVal(d.Spec.Replicas))
		default:
			// Ready; Build's message (such as a load balancer without
			// backends yet) stays.
			s.Ready = true
		}
		if s.Ready {
			ready++
		} else {
			waiting = append(waiting, s.Name)
		}
	}
	return ready, waiting
}

func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			return c.Status == corev1.ConditionTrue && d.Status.UpdatedReplicas == ptrVal(d.Spec.Replicas)
		}
	}
	return false
}

func ptrVal(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// gvkOf is o's kind as c's scheme knows it: typed objects built in Go
// carry none, and server-side apply needs it.
func gvkOf(c client.Client, o client.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(o, c.Scheme())
}
