package capi

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
)

// TestPausedAgrees: the Metal3Machine and Metal3Cluster reconcilers
// (capm3), the Metal3Data and Metal3DataTemplate reconcilers (data) and
// the IPPool reconciler (ipam) all ask Paused, and so agree on every
// (Cluster, object) pair. Before, a Cluster paused only by its annotation
// paused the machines but not their Metal3Data or IPPools, which went on
// rendering and allocating during a move.
func TestPausedAgrees(t *testing.T) {
	paused := map[string]string{clusterv1.PausedAnnotation: ""}
	cluster := func(spec *bool, ann map[string]string) *clusterv1.Cluster {
		return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: ann}, Spec: clusterv1.ClusterSpec{Paused: spec}}
	}
	for _, tc := range []struct {
		name    string
		cluster *clusterv1.Cluster
		objAnn  map[string]string
		want    bool
	}{
		{"no Cluster", nil, nil, false},
		{"no Cluster, object annotated", nil, paused, true},
		{"running Cluster", cluster(nil, nil), nil, false},
		{"spec.paused false", cluster(ptr.To(false), nil), nil, false},
		{"spec.paused true", cluster(ptr.To(true), nil), nil, true},
		{"Cluster annotated", cluster(nil, paused), nil, true},
		{"object annotated", cluster(ptr.To(false), nil), paused, true},
		{"annotation with a value", cluster(nil, nil), map[string]string{clusterv1.PausedAnnotation: "true"}, true},
		{"another annotation", cluster(nil, map[string]string{"cluster.x-k8s.io/other": ""}), map[string]string{"x": ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := metav1.ObjectMeta{Name: "o", Annotations: tc.objAnn}
			for kind, o := range map[string]metav1.Object{
				"capm3 Metal3Machine":     &infrav1.Metal3Machine{ObjectMeta: meta},
				"capm3 Metal3Cluster":     &infrav1.Metal3Cluster{ObjectMeta: meta},
				"data Metal3Data":         &infrav1.Metal3Data{ObjectMeta: meta},
				"data Metal3DataTemplate": &infrav1.Metal3DataTemplate{ObjectMeta: meta},
				"ipam IPPool":             &ipamv1.IPPool{ObjectMeta: meta},
			} {
				if got := Paused(tc.cluster, o); got != tc.want {
					t.Errorf("%s: Paused = %v, want %v", kind, got, tc.want)
				}
			}
		})
	}
}
