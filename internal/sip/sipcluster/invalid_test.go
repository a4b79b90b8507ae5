package sipcluster_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

const sipCRD = "sipclusters.airship.airshipit.org"

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// loosenCRD takes the SIPCluster CRD's schema away, as it was before the
// API had validation, until the test ends: objects the schema refuses can
// then be stored, as they were by earlier versions. The schema is put back
// at the end, and the test waits until the API server refuses a 70
// character name again.
func loosenCRD(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(crdGVK)
	if err := env.Client.Get(ctx, client.ObjectKey{Name: sipCRD}, crd); err != nil {
		t.Fatal(err)
	}
	orig := crd.DeepCopy()
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for i := range versions {
		v := versions[i].(map[string]any)
		v["schema"] = map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Update(ctx, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			cur := &unstructured.Unstructured{}
			cur.SetGroupVersionKind(crdGVK)
			if err := env.Client.Get(ctx, client.ObjectKey{Name: sipCRD}, cur); err != nil {
				return false, err
			}
			orig.SetResourceVersion(cur.GetResourceVersion())
			err := env.Client.Update(ctx, orig)
			if apierrors.IsConflict(err) {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			t.Errorf("restoring the SIPCluster CRD: %v", err)
			return
		}
		probe := &sipv1.SIPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.Repeat("p", 70)}}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err := env.Client.Create(ctx, probe)
			if err == nil {
				_ = env.Client.Delete(ctx, probe)
				return false, nil
			}
			return apierrors.IsInvalid(err), nil
		})
		if err != nil {
			t.Errorf("the restored CRD does not refuse a 70 character name: %v", err)
		}
	})
}

// createLoose creates c, retrying while the API server still applies the
// schema loosenCRD took away.
func createLoose(t *testing.T, c *sipv1.SIPCluster) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Create(ctx, c.DeepCopy())
		if apierrors.IsInvalid(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("creating SIPCluster %s: %v", c.Name, err)
	}
}

// waitGone deletes the cluster and waits until the API server no longer
// has it: its finalizer, if any, was let go.
func waitGone(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Delete(ctx, &sipv1.SIPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	var last *sipv1.SIPCluster
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		c := &sipv1.SIPCluster{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		last = c
		return false, err
	})
	if err != nil {
		msg := ""
		if last != nil {
			msg = readyMessage(last)
		}
		t.Fatalf("SIPCluster %s was never deleted (finalizers %v, Ready %q): %v", name, last.Finalizers, msg, err)
	}
}

// TestInvalidClusterIsDeletable: an invalid SIPCluster that got past the
// schema (stored before the CRD had one) gets no finalizer, reports
// Stalled and Ready False with reason InvalidSpec naming the field, labels
// no host, and is deleted at once; one finalized by an older operator is
// let go too. A cluster that held hosts and then became invalid keeps its
// finalizer, and deleting it releases its hosts.
func TestInvalidClusterIsDeletable(t *testing.T) {
	s := newSite(t, "sip-invalid")
	s.host("cp-1", "cp", "r1", "127.0.7.1")
	s.host("w-1", "w", "r1", "127.0.7.2")
	loosenCRD(t, s.ns)
	startOperator(t)

	valid := func(name string) *sipv1.SIPCluster {
		return &sipv1.SIPCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: name},
			Spec: sipv1.SIPClusterSpec{Nodes: map[sipv1.BMHRole]sipv1.NodeSet{
				sipv1.RoleControlPlane: {LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"flavor": s.flavor + "-cp"}}, Count: &sipv1.NodeCount{Active: 1}},
			}},
		}
	}
	tests := []struct {
		name      string
		mutate    func(*sipv1.SIPCluster)
		finalized bool // stored with the finalizer, as an older operator added it
		want      string
	}{
		{name: strings.Repeat("long", 17) + "xx", want: "metadata.name \"" + strings.Repeat("long", 17) + "xx\": the hosts carry it as a label value"},
		{name: "finalized-" + strings.Repeat("l", 60), finalized: true, want: "metadata.name"},
		{name: "empty-spec", mutate: func(c *sipv1.SIPCluster) { c.Spec = sipv1.SIPClusterSpec{} }, want: "spec.nodes: no role"},
		{name: "max-int64", mutate: func(c *sipv1.SIPCluster) { c.Spec.Nodes[sipv1.RoleControlPlane].Count.Active = math.MaxInt64 },
			want: "spec.nodes.ControlPlane.count.active: 9223372036854775807 is more than 1000"},
		{name: "negative", mutate: func(c *sipv1.SIPCluster) { c.Spec.Nodes[sipv1.RoleControlPlane].Count.Active = -1 },
			want: "spec.nodes.ControlPlane.count.active: -1 is negative"},
		{name: "unknown-role", mutate: func(c *sipv1.SIPCluster) { c.Spec.Nodes["Master"] = c.Spec.Nodes[sipv1.RoleControlPlane] },
			want: "spec.nodes.Master: unknown role"},
		{name: "empty-selector", mutate: func(c *sipv1.SIPCluster) { c.Spec.Nodes[sipv1.RoleWorker] = sipv1.NodeSet{} },
			want: "spec.nodes.Worker.labelSelector: empty"},
		{name: "bad-port", mutate: func(c *sipv1.SIPCluster) {
			c.Spec.Services.LoadBalancerControlPlane = []sipv1.LoadBalancerServiceControlPlane{{SIPClusterService: sipv1.SIPClusterService{Image: "haproxy", NodeInterface: "oam-ipv4"}, NodePort: 6443}}
		}, want: "spec.services.loadBalancerControlPlane[0].nodePort"},
	}
	for _, tc := range tests {
		t.Run(tc.name[:min(len(tc.name), 20)], func(t *testing.T) {
			s := &site{t: t, ns: s.ns, flavor: s.flavor}
			c := valid(tc.name)
			if tc.mutate != nil {
				tc.mutate(c)
			}
			if tc.finalized {
				controllerutil.AddFinalizer(c, sipv1.Finalizer)
			}
			createLoose(t, c)
			got := s.waitReady(tc.name, sipv1.ReasonTypeInvalidSpec)
			if msg := readyMessage(got); !strings.Contains(msg, tc.want) {
				t.Errorf("Ready message %q lacks %q", msg, tc.want)
			}
			stalled := apimeta.FindStatusCondition(got.Status.Conditions, sipv1.ConditionTypeStalled)
			if stalled == nil || stalled.Status != metav1.ConditionTrue || stalled.Reason != sipv1.ReasonTypeInvalidSpec || !strings.Contains(stalled.Message, tc.want) {
				t.Errorf("Stalled condition %+v, want True, InvalidSpec, naming %q", stalled, tc.want)
			}
			if controllerutil.ContainsFinalizer(got, sipv1.Finalizer) != tc.finalized {
				t.Errorf("finalizers %v: an invalid cluster must not get one", got.Finalizers)
			}
			if l := s.labelled(tc.name); len(l) != 0 {
				t.Errorf("labelled %v", l)
			}
			waitGone(t, s.ns, tc.name)
		})
	}

	t.Run("was-valid", func(t *testing.T) {
		s := &site{t: t, ns: s.ns, flavor: s.flavor}
		c := valid("was-valid")
		if err := env.Client.Create(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		s.waitReady("was-valid", sipv1.ReasonTypeReconciliationSucceeded)
		s.waitLabels("was-valid", "cp-1=ControlPlane")
		patchCluster(t, s.ns, "was-valid", func(c *sipv1.SIPCluster) { c.Spec.Nodes[sipv1.RoleControlPlane].Count.Standby = -1 })
		got := s.waitReady("was-valid", sipv1.ReasonTypeInvalidSpec)
		if !controllerutil.ContainsFinalizer(got, sipv1.Finalizer) {
			t.Errorf("finalizers %v: a cluster holding hosts keeps its finalizer", got.Finalizers)
		}
		// Invalid now, it keeps what it has until the spec is fixed.
		if l := s.labelled("was-valid"); !slices.Equal(l, []string{"cp-1=ControlPlane"}) {
			t.Errorf("hosts of the invalid cluster: %v", l)
		}
		waitGone(t, s.ns, "was-valid")
		if l := s.labelled("was-valid"); len(l) != 0 {
			t.Errorf("hosts still labelled after the delete: %v", l)
		}
	})
}
