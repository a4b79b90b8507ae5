package metal3operator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/metal3/metal3test"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// policyKinds are the Metal3 kinds with reference fields that may name a
// namespace: a valid object of each, and those fields.
var policyKinds = []struct {
	apiVersion, kind string
	spec             func() map[string]any
	fields           []string
}{
	{"metal3.io/v1alpha1", "BareMetalHost", func() map[string]any {
		return map[string]any{"online": false, "bmc": map[string]any{"address": "redfish+http://127.0.0.1:1/redfish/v1/Systems/1", "credentialsName": "bmc"}}
	}, []string{"spec.userData", "spec.networkData", "spec.metaData"}},
	{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine", func() map[string]any { return map[string]any{} },
		[]string{"spec.userData", "spec.metaData", "spec.networkData", "spec.dataTemplate"}},
	{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate", func() map[string]any { return map[string]any{"template": map[string]any{"spec": map[string]any{}}} },
		[]string{"spec.template.spec.userData", "spec.template.spec.metaData", "spec.template.spec.networkData", "spec.template.spec.dataTemplate"}},
	{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3DataClaim", func() map[string]any { return map[string]any{"template": map[string]any{"name": "tpl"}} },
		[]string{"spec.template"}},
	{"infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Data", func() map[string]any {
		return map[string]any{"template": map[string]any{"name": "tpl"}, "claim": map[string]any{"name": "claim"}}
	}, []string{"spec.template", "spec.claim", "spec.metaData", "spec.networkData"}},
	{"ipam.metal3.io/v1alpha1", "IPClaim", func() map[string]any { return map[string]any{"pool": map[string]any{"name": "pool"}} },
		[]string{"spec.pool"}},
	{"ipam.metal3.io/v1alpha1", "IPAddress", func() map[string]any {
		return map[string]any{"pool": map[string]any{"name": "pool"}, "claim": map[string]any{"name": "claim"}, "address": "10.0.0.1"}
	}, []string{"spec.pool", "spec.claim"}},
}

// policyObject is a valid object of kind i in namespace tenant, with field
// (if any) naming an object of namespace ns (none when ns is empty).
func policyObject(i int, name, field, ns string) *unstructured.Unstructured {
	k := policyKinds[i]
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.apiVersion, "kind": k.kind,
		"metadata": map[string]any{"name": name, "namespace": "tenant"},
		"spec":     k.spec(),
	}}
	if field == "" {
		return u
	}
	path := strings.Split(field, ".")
	ref := map[string]any{"name": "target"}
	if ns != "" {
		ref["namespace"] = ns
	}
	m := u.Object
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	if old, ok := m[path[len(path)-1]].(map[string]any); ok {
		for k, v := range ref {
			old[k] = v
		}
	} else {
		m[path[len(path)-1]] = ref
	}
	return u
}

// startPolicies starts an API server with the Metal3 CRDs and
// a namespace tenant; installPolicies adds config/metal3/policy.
func startPolicies(t *testing.T) client.Client {
	env := testenv.StartAPI(t, testenv.Options{CRDDirs: []string{"config/metal3/crd/bases"}})
	metal3test.ServeConversion(t, env) // the infrastructure kinds store v1beta2
	ctx := context.Background()
	c := env.Client
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}); err != nil {
		t.Fatal(err)
	}
	return c
}

func installPolicies(t *testing.T, c client.Client) {
	ctx := context.Background()
	for _, u := range build(t, "policy") {
		if err := c.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	// A policy is enforced once the API server has compiled it: wait for
	// each kind's first field to be refused.
	for i, k := range policyKinds {
		probe := policyObject(i, "probe", k.fields[0], "kube-system")
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			err := c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
			return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy"), nil
		})
		if err != nil {
			t.Fatalf("the policy of %s is never enforced", k.kind)
		}
	}
}

// TestReferencePolicies: with config/metal3/policy installed, the API
// server refuses every object of the Metal3 kinds whose reference fields
// name another namespace (what kubectl apply prints names the field, the
// kind and both namespaces) and accepts the same reference in the
// object's namespace or without one.
func TestReferencePolicies(t *testing.T) {
	c := startPolicies(t)
	installPolicies(t, c)
	ctx := context.Background()
	n := 0
	for i, k := range policyKinds {
		for _, field := range k.fields {
			for _, tt := range []struct {
				ns     string
				refuse bool
			}{{"kube-system", true}, {"tenant", false}, {"", false}} {
				t.Run(fmt.Sprintf("%s %s namespace %q", k.kind, field, tt.ns), func(t *testing.T) {
					n++
					u := policyObject(i, fmt.Sprintf("obj-%d", n), field, tt.ns)
					err := c.Create(ctx, u)
					if !tt.refuse {
						if err != nil {
							t.Fatalf("create: %v", err)
						}
						return
					}
					want := fmt.Sprintf(`%s.namespace: must be the %s's namespace "tenant", not "kube-system"`, field, k.kind)
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("create = %v, want a refusal containing %q", err, want)
					}
					// An update that brings the reference in is refused too.
					ok := policyObject(i, fmt.Sprintf("obj-%d-ok", n), field, "")
					if err := c.Create(ctx, ok); err != nil {
						t.Fatalf("create: %v", err)
					}
					bad := policyObject(i, ok.GetName(), field, "kube-system")
					bad.SetResourceVersion(ok.GetResourceVersion())
					if err := c.Update(ctx, bad); err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("update = %v, want a refusal containing %q", err, want)
					}
				})
			}
		}
	}
}

// TestReferencePoliciesLetBadObjectsGo: an object with a reference to
// another namespace, stored before the policies were installed, can still
// be deleted: its finalizer can be removed once it is being deleted,
// though any other change is refused.
func TestReferencePoliciesLetBadObjectsGo(t *testing.T) {
	c := startPolicies(t)
	ctx := context.Background()
	u := policyObject(0, "old", "spec.userData", "kube-system")
	u.SetFinalizers([]string{"example.com/keep"})
	if err := c.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	installPolicies(t, c)
	u.SetLabels(map[string]string{"a": "b"})
	if err := c.Update(ctx, u); err == nil || !strings.Contains(err.Error(), "spec.userData.namespace") {
		t.Fatalf("update of a bad object = %v, want a refusal naming spec.userData.namespace", err)
	}
	if err := c.Delete(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		t.Fatal(err)
	}
	u.SetFinalizers(nil)
	if err := c.Update(ctx, u); err != nil {
		t.Fatalf("removing the finalizer of a deleted bad object: %v", err)
	}
}
