package armadaoperator

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/operatorkit/operatortest"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func TestDefaultKustomizationBuilds(t *testing.T) {
	testenv.ExpectKinds(t, "config/armada/default", map[string]int{"CustomResourceDefinition": 3, "ClusterRole": 2, "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1, "ServiceAccount": 1, "Namespace": 1, "Deployment": 1, "Service": 1})
}

// TestRBACIsEnough runs the operator as its ServiceAccount, with only the
// roles under config/armada/rbac, and installs, upgrades nothing and
// uninstalls a chart: any missing permission fails the test.
func TestRBACIsEnough(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{CRDDirs: []string{"config/armada/crd/bases"}, AddToScheme: []func(*runtime.Scheme) error{armadav1.AddToScheme, apiextensionsv1.AddToScheme}})
	ctx := context.Background()
	o := DefaultOptions()
	o.SkipControllerNameValidation = true
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.LeaderElectionNamespace = "armada-system"
	o.PollInterval = 500 * time.Millisecond
	testenv.RunAs(t, env, testenv.ServiceAccount{Namespace: "armada-system", Name: "armada-operator", RBAC: "config/armada/rbac"},
		func(ctx context.Context, cfg *rest.Config) error { return Run(ctx, cfg, o, logr.Discard()) })

	wd, _ := os.Getwd()
	act := &armadav1.ArmadaChart{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec: armadav1.ArmadaChartSpec{
			Release:   "rbac-web",
			Namespace: "apps", // created by the install
			Source:    armadav1.ArmadaChartSource{Type: armadav1.SourceTypeDir, Location: filepath.Join(wd, "..", "reconcilers", "testdata", "charts", "small")},
			// Nothing runs pods in API mode: wait only for (absent) jobs.
			Wait: &armadav1.ArmadaChartWait{Resources: []armadav1.ArmadaChartWaitResource{{Type: armadav1.WaitResourceJob, Required: new(bool)}}},
			Test: &armadav1.ArmadaChartTest{Enabled: new(bool)},
			// Values read from a ConfigMap and a Secret: the role lets the
			// operator watch and read both.
			ValuesFrom: []armadav1.ValuesReference{{Kind: "ConfigMap", Name: "web-defaults"}, {Kind: "Secret", Name: "web-values"}},
		},
	}
	for _, o := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-defaults"}, Data: map[string]string{"values.yaml": "greeting: from-configmap\n"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-values"}, Data: map[string][]byte{"values.yaml": []byte("greeting: from-secret\n")}},
		act,
	} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	var got armadav1.ArmadaChart
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(act), &got); err != nil {
			return false, err
		}
		return got.Status.Satisfied, nil
	}); err != nil {
		t.Fatalf("not satisfied as the ServiceAccount: %v; status %+v", err, got.Status)
	}
	if !apimeta.IsStatusConditionTrue(got.Status.Conditions, armadav1.ReadyCondition) {
		t.Fatalf("conditions %+v", got.Status.Conditions)
	}
	// Leader election's Event on its Lease needs core/v1 Events in armada-system.
	operatortest.ExpectLeaderEvent(t, env.Client, client.ObjectKey{Namespace: "armada-system", Name: LeaderElectionID})
	var values corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "rbac-web-config"}, &values); err != nil || values.Data["greeting"] != "from-secret" {
		t.Fatalf("the release's ConfigMap: greeting %q (err %v), want the Secret's", values.Data["greeting"], err)
	}
	if err := env.Client.Delete(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(act), &got)
		return client.IgnoreNotFound(err) == nil && err != nil, nil
	}); err != nil {
		t.Fatalf("not uninstalled as the ServiceAccount: %v; status %+v", err, got.Status)
	}
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "rbac-web-config"}, &cm); client.IgnoreNotFound(err) != nil || err == nil {
		t.Fatalf("release ConfigMap still there after uninstall (err %v)", err)
	}
}
