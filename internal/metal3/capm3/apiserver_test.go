package capm3

import (
	"context"
	"path/filepath"
	"testing"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/metal3/metal3test"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// startReconciler starts an API server with the Metal3 and Cluster API
// core CRDs and a manager running the reconciler setup registers, and
// creates namespace ns; it returns the client and a function that creates
// objects, failing the test on an error.
func startReconciler(t *testing.T, ns string, setup func(context.Context, ctrl.Manager) error) (client.Client, func(...client.Object)) {
	t.Helper()
	capiCRDs := filepath.Join(capienv.ModuleDir(t), "core", "config", "crd", "bases")
	env := testenv.StartAPI(t, testenv.Options{
		CRDDirs:     []string{"config/metal3/crd/bases", capiCRDs},
		AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme, infrav1.AddToScheme, clusterv1.AddToScheme},
	})
	metal3test.ServeConversion(t, env) // v1beta2 is stored
	ctx := context.Background()
	mgr := testenv.NewManager(t, env)
	if err := setup(ctx, mgr); err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, ctx, "manager", mgr.Start)
	c := env.Client
	create := func(objs ...client.Object) {
		t.Helper()
		for _, o := range objs {
			if err := c.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	return c, create
}
