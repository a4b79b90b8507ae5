package data_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
)

// TestDataReferencesToOtherNamespaces: a Metal3Data whose template, claim,
// metaData or networkData names another namespace (where a template of
// that name exists) is refused by the controller with no admission policy
// installed: its status names the field, it gets no finalizer and no Secret
// is rendered.
func TestDataReferencesToOtherNamespaces(t *testing.T) {
	startManager(t)
	other := newSite(t, "other")
	other.template("tpl", "clusterName: test1\nmetaData:\n  strings: [{key: k, value: other-namespace-value}]\n")
	tests := []struct {
		field string
		set   func(d *infrav1.Metal3Data, ns string)
	}{
		{"spec.template", func(d *infrav1.Metal3Data, ns string) { d.Spec.Template.Namespace = ns }},
		{"spec.claim", func(d *infrav1.Metal3Data, ns string) { d.Spec.Claim.Namespace = ns }},
		{"spec.metaData", func(d *infrav1.Metal3Data, ns string) {
			d.Spec.MetaData = &corev1.SecretReference{Name: "m-metadata", Namespace: ns}
		}},
		{"spec.networkData", func(d *infrav1.Metal3Data, ns string) {
			d.Spec.NetworkData = &corev1.SecretReference{Name: "m-networkdata", Namespace: ns}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			s := newSite(t, "xns")
			d := &infrav1.Metal3Data{ObjectMeta: metav1.ObjectMeta{Name: "tpl-0", Labels: map[string]string{clusterv1.ClusterNameLabel: "test1"}},
				Spec: infrav1.Metal3DataSpec{Template: corev1.ObjectReference{Name: "tpl"}, Claim: corev1.ObjectReference{Name: "m"}}}
			tt.set(d, other.ns)
			s.create(d)
			want := fmt.Sprintf(`%s.namespace: must be the Metal3Data's namespace %q, not %q`, tt.field, s.ns, other.ns)
			eventually(t, "refused", func() (bool, error) {
				got := &infrav1.Metal3Data{}
				if err := s.get("tpl-0", got); err != nil {
					return false, err
				}
				msg := ptr.Deref(got.Status.ErrorMessage, "")
				if !strings.Contains(msg, want) {
					return false, fmt.Errorf("status %q, want %q", msg, want)
				}
				if got.Status.Ready || slices.Contains(got.Finalizers, infrav1.DataFinalizer) {
					return false, fmt.Errorf("a refused Metal3Data is ready %v or has the finalizer %v", got.Status.Ready, got.Finalizers)
				}
				return true, nil
			})
			var secs corev1.SecretList
			if err := env.Client.List(context.Background(), &secs, client.InNamespace(s.ns)); err != nil {
				t.Fatal(err)
			}
			if len(secs.Items) != 0 {
				t.Errorf("a refused Metal3Data rendered %d Secrets", len(secs.Items))
			}
		})
	}
}
