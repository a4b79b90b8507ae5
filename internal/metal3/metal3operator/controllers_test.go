package metal3operator

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	ipamv1 "github.com/airshipit/airship-go/api/ipam/v1alpha1"
	"github.com/airshipit/airship-go/internal/metal3/metal3test"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestControllersStartWithTheirOwnCRDs runs the operator with its default
// controllers on an API server that serves only the BareMetalHost CRD, as
// on a site of hosts without Cluster API: the BareMetalHost controller
// reconciles a host (its BMC unreachable: the finalizer is added and the
// registration error recorded) and the process is ready, while the
// Metal3Cluster controller is logged as waiting. Once Cluster API's and
// Metal3's infrastructure CRDs are installed the Metal3Cluster controller
// starts and makes a Metal3Cluster ready.
func TestControllersStartWithTheirOwnCRDs(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{
		CRDDirs:     []string{"config/metal3/crd/bases/metal3.io_baremetalhosts.yaml"},
		AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme, infrav1.AddToScheme, ipamv1.AddToScheme, clusterv1.AddToScheme},
	})
	saved := operatorkit.APIPollInterval
	operatorkit.APIPollInterval = 200 * time.Millisecond
	t.Cleanup(func() { operatorkit.APIPollInterval = saved })
	ctx := context.Background()
	c := env.Client

	var mu sync.Mutex
	var lines []string
	matching := func(s string) []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, l := range lines {
			if strings.Contains(l, s) {
				out = append(out, l)
			}
		}
		return out
	}
	logged := func(s string) int { return len(matching(s)) }
	log := funcr.New(func(_, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{})
	o := DefaultOptions()
	o.LeaderElection = false
	o.SkipControllerNameValidation = true
	o.MetricsAddr = "0"
	o.ProbeAddr = freeAddr(t)
	o.BMCTimeout = 2 * time.Second
	webhook := freeAddr(t)
	o.Conversion = operatorkit.ConversionWebhook{Addr: webhook, URL: "https://" + webhook}
	testenv.Go(t, ctx, "Run", func(ctx context.Context) error { return Run(ctx, env.Config, o, log) })

	poll := func(what string, cond func(ctx context.Context) (bool, string)) {
		t.Helper()
		last := ""
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
			// The outer ctx: at the deadline, the last message is still the object's.
			ok, msg := cond(ctx)
			last = msg
			return ok, nil
		}); err != nil {
			t.Fatalf("%s: %v; last: %s", what, err, last)
		}
	}

	// A host whose BMC does not answer (nothing listens on port 1).
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "metal3"}}); err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "bmc"}, Data: map[string][]byte{"username": []byte("admin"), "password": []byte("pw-crds")}}
	host := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "node-1"},
		Spec: metal3v1alpha1.BareMetalHostSpec{BMC: metal3v1alpha1.BMCDetails{Address: "redfish+http://127.0.0.1:1/redfish/v1/Systems/1", CredentialsName: "bmc"}}}
	for _, obj := range []client.Object{sec, host} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	poll("the host reconciled without Cluster API's CRDs", func(ctx context.Context) (bool, string) {
		h := &metal3v1alpha1.BareMetalHost{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(host), h); err != nil {
			return false, err.Error()
		}
		return controllerutil.ContainsFinalizer(h, metal3v1alpha1.BareMetalHostFinalizer) && h.Status.ErrorType == metal3v1alpha1.RegistrationError,
			fmt.Sprintf("finalizers %v, status %+v", h.Finalizers, h.Status)
	})
	poll("ready, the Metal3Cluster controller logged as waiting", func(ctx context.Context) (bool, string) {
		code, body := testenv.HTTPGet(ctx, "http://"+o.ProbeAddr+"/readyz")
		return code == http.StatusOK && logged(`"msg"="controller baremetalhost started"`) == 1 &&
				logged(`"msg"="controller metal3cluster waits for CRDs" "missing"=["cluster.x-k8s.io/v1beta2 Cluster" "infrastructure.cluster.x-k8s.io/v1beta1 Metal3Cluster"`) == 1 &&
				logged(`"msg"="controller metal3cluster started"`) == 0,
			fmt.Sprintf("/readyz %d %q; logged %q", code, body, matching("controller "))
	})

	capiCRDs := filepath.Join(capienv.ModuleDir(t), "core", "config", "crd", "bases")
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{capiCRDs, filepath.Join(root, "config", "metal3", "crd", "bases")}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	poll("the Metal3Cluster controller started", func(context.Context) (bool, string) {
		return logged(`"msg"="controller metal3cluster started"`) == 1, ""
	})
	// v1beta2 is stored: a v1beta1 object needs the operator's webhook.
	metal3test.WaitConversion(t, c, o.Conversion.URL)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "c1"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "Metal3Cluster", Name: "c1"}}}
	if err := c.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	m3c := &infrav1.Metal3Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "metal3", Name: "c1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c1", UID: cluster.UID}}},
		Spec: infrav1.Metal3ClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "10.9.0.1", Port: 6443}, CloudProviderEnabled: ptr.To(true)}}
	if err := c.Create(ctx, m3c); err != nil {
		t.Fatal(err)
	}
	poll("the Metal3Cluster ready", func(ctx context.Context) (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(m3c), m3c); err != nil {
			return false, err.Error()
		}
		return m3c.Status.Ready && len(m3c.Status.APIEndpoints) == 1 && m3c.Status.APIEndpoints[0].Port == 6443, conditionsOf(m3c.Status.Conditions)
	})
}
