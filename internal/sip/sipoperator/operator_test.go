package sipoperator

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/operatorkit/operatortest"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func TestValidate(t *testing.T) {
	operatortest.Validate(t, DefaultOptions, []operatortest.Case[Options]{
		{Name: "no resync", Mutate: func(o *Options) { o.Resync = 0 }, Want: "--resync"},
		{Name: "negative qps", Mutate: func(o *Options) { o.QPS = -1 }, Want: "--kube-api-qps"},
	})
}

// build renders a kustomization under config/sip.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	return testenv.Kustomize(t, filepath.Join("config", "sip", dir))
}

func TestDefaultKustomizationBuilds(t *testing.T) {
	testenv.ExpectKinds(t, "config/sip/default", map[string]int{"CustomResourceDefinition": 14, "ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "ServiceAccount": 1, "Namespace": 1, "Deployment": 1, "Service": 1})
	samples := build(t, "samples")
	if len(samples) != 2 || samples[0].GetKind() != "Namespace" || samples[1].GetKind() != "SIPCluster" || samples[1].GetNamespace() != samples[0].GetName() {
		t.Fatalf("config/sip/samples: %d objects, want the SIPCluster and its Namespace", len(samples))
	}
	// The sample decodes strictly into the API types.
	var c sipv1.SIPCluster
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(samples[1].Object, &c, true); err != nil {
		t.Errorf("sample SIPCluster: %v", err)
	}
}

func freeAddr(t *testing.T) string { return testenv.FreeAddr(t) }

// TestRBACIsEnough runs the operator as its ServiceAccount with only the
// roles under config/sip/rbac, leader election on: it schedules and labels
// hosts, applies a load balancer's objects, and on delete removes them and
// releases the hosts. Any missing permission fails the test. Probes
// answer and the Lease is held.
func TestRBACIsEnough(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{
		CRDDirs:     []string{"config/sip/crd/bases", "config/metal3/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{sipv1.AddToScheme, metal3v1alpha1.AddToScheme},
	})
	ctx := context.Background()
	for _, ns := range []string{"tenant", "hosts"} {
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		name := fmt.Sprintf("node-%d", i)
		nd := fmt.Sprintf(`{"networks":[{"id":"oam-ipv4","ip_address":"10.0.0.%d"}]}`, i+1)
		for _, o := range []client.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "hosts", Name: name + "-nd"}, Data: map[string][]byte{"networkData": []byte(nd)}},
			&metal3v1alpha1.BareMetalHost{
				ObjectMeta: metav1.ObjectMeta{Namespace: "hosts", Name: name, Labels: map[string]string{"role": "cp", "rack": fmt.Sprintf("r%d", i)}},
				Spec:       metal3v1alpha1.BareMetalHostSpec{NetworkData: &corev1.SecretReference{Name: name + "-nd"}},
			},
		} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}

	o := DefaultOptions()
	o.SkipControllerNameValidation = true
	o.MetricsAddr, o.ProbeAddr = "0", freeAddr(t)
	o.LeaderElectionNamespace = "sip-system"
	testenv.RunAs(t, env, testenv.ServiceAccount{Namespace: "sip-system", Name: "sip-operator", RBAC: "config/sip/rbac"},
		func(ctx context.Context, cfg *rest.Config) error { return Run(ctx, cfg, o, logr.Discard()) })

	c := &sipv1.SIPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "c1"},
		Spec: sipv1.SIPClusterSpec{
			Nodes: map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleControlPlane: {LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"role": "cp"}}, TopologyKey: "rack", Count: &sipv1.NodeCount{Active: 2}}},
			Services: sipv1.SIPClusterServices{LoadBalancerControlPlane: []sipv1.LoadBalancerServiceControlPlane{
				{SIPClusterService: sipv1.SIPClusterService{Image: "haproxy:2.8", NodeInterface: "oam-ipv4"}, NodePort: 30443},
			}},
		},
	}
	if err := env.Client.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	// API-only: no controller makes the Deployment Available, so the
	// cluster stays Progressing after labelling and applying.
	labelled := func(want int) error {
		return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			var list metal3v1alpha1.BareMetalHostList
			if err := env.Client.List(ctx, &list, client.MatchingLabels{sipv1.ClusterNameLabel: "c1"}); err != nil {
				return false, err
			}
			return len(list.Items) == want, nil
		})
	}
	if err := labelled(2); err != nil {
		got := &sipv1.SIPCluster{}
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(c), got)
		t.Fatalf("hosts not labelled as the ServiceAccount: %v; status %+v", err, got.Status)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &sipv1.SIPCluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), got); err != nil {
			return false, err
		}
		cond := apimeta.FindStatusCondition(got.Status.Conditions, sipv1.ConditionTypeReady)
		return cond != nil && cond.Reason == sipv1.ReasonTypeProgressing, nil
	}); err != nil {
		t.Fatalf("never Progressing (services applied) as the ServiceAccount: %v", err)
	}
	operatortest.ExpectLeaderAndProbes(t, env.Client, client.ObjectKey{Namespace: "sip-system", Name: LeaderElectionID}, o.ProbeAddr)
	if err := env.Client.Delete(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(c), &sipv1.SIPCluster{})), nil
	}); err != nil {
		t.Fatal("not decommissioned as the ServiceAccount")
	}
	if err := labelled(0); err != nil {
		t.Fatal("hosts not released as the ServiceAccount")
	}
	var cms corev1.ConfigMapList
	if err := env.Client.List(ctx, &cms, client.InNamespace("tenant"), client.MatchingLabels{sipv1.ClusterNameLabel: "c1"}); err != nil || len(cms.Items) != 0 {
		t.Errorf("ConfigMaps left: %v %d", err, len(cms.Items))
	}
}
