package data_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
)

// TestClusterPausedByAnnotation: a Cluster paused by Cluster API's paused
// annotation (not spec.paused) pauses its IPPools, Metal3DataTemplates and
// Metal3Data, as it pauses its Metal3Machines: nothing is served until it
// is unpaused. They used to go on (package ipam's Paused read only
// spec.paused and the object's own annotation).
func TestClusterPausedByAnnotation(t *testing.T) {
	ctx := context.Background()
	s := newSite(t, "paused")
	startManager(t)
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "test1", Annotations: map[string]string{clusterv1.PausedAnnotation: ""}},
		Spec:       clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: "test1"}},
	}
	s.create(cluster)
	s.pool("oam", "192.168.1.10", "192.168.1.19")
	s.template("workers", fullTemplate)
	s.machine("worker-p", "workers", "52:54:00:00:00:0e")

	// Long enough for an unpaused site to get its finalizers and a
	// Metal3Data (TestClaimRendersSecrets renders in about a second).
	time.Sleep(3 * time.Second)
	pool, tmpl, claim := &ipamv1.IPPool{}, &infrav1.Metal3DataTemplate{}, &infrav1.Metal3DataClaim{}
	for name, o := range map[string]client.Object{"oam": pool, "workers": tmpl, "worker-p": claim} {
		if err := s.get(name, o); err != nil {
			t.Fatal(err)
		}
	}
	if len(pool.Finalizers) > 0 || controllerutil.ContainsFinalizer(tmpl, infrav1.DataTemplateFinalizer) || claim.Status.RenderedData != nil {
		t.Fatalf("paused Cluster: pool finalizers %v, template finalizers %v, claim renderedData %v; want nothing done", pool.Finalizers, tmpl.Finalizers, claim.Status.RenderedData)
	}
	var datas infrav1.Metal3DataList
	if err := env.Client.List(ctx, &datas, client.InNamespace(s.ns)); err != nil || len(datas.Items) > 0 {
		t.Fatalf("paused Cluster: %d Metal3Data (%v), want none", len(datas.Items), err)
	}

	// Unpaused: served. The pool and template are touched so that they do
	// not wait for their paused recheck.
	patch := client.MergeFrom(cluster.DeepCopy())
	delete(cluster.Annotations, clusterv1.PausedAnnotation)
	if err := env.Client.Patch(ctx, cluster, patch); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{pool, tmpl} {
		patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
		o.SetAnnotations(map[string]string{"test/touched": "true"})
		if err := env.Client.Patch(ctx, o, patch); err != nil {
			t.Fatal(err)
		}
	}
	s.readyData("worker-p")
}
