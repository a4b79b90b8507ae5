package clusterctl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// clusterctl's library logs through controller-runtime's logger, which
// prints a stack trace when no logger is set; the tests do not read it.
func init() { ctrllog.SetLogger(logr.Discard()) }

// testInfraComponents is a minimal infrastructure provider: two CRDs that
// follow the v1beta2 contract (the contract label, controlPlaneEndpoint and
// providerID in spec, status.initialization.provisioned) and no controller.
// The test plays the provider by writing their status.
const testInfraComponents = `apiVersion: v1
kind: Namespace
metadata: {name: infrastructure-test-system}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: testclusters.infrastructure.test.airshipit.org
  labels: {cluster.x-k8s.io/v1beta2: v1alpha1}
spec:
  group: infrastructure.test.airshipit.org
  scope: Namespaced
  names: {plural: testclusters, singular: testcluster, kind: TestCluster, listKind: TestClusterList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: testmachines.infrastructure.test.airshipit.org
  labels: {cluster.x-k8s.io/v1beta2: v1alpha1}
spec:
  group: infrastructure.test.airshipit.org
  scope: Namespaced
  names: {plural: testmachines, singular: testmachine, kind: TestMachine, listKind: TestMachineList}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

const pivotPhases = `apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: init-mgmt, clusterName: mgmt}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: init}
---
apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: init-workload, clusterName: workload}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: init}
---
apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: pivot, clusterName: workload}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: move}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: move}
action: move
move-options: {namespace: tenant}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: init}
action: init
providers:
- {name: cluster-api, type: CoreProvider, url: site/providers/capi, variable-substitution: true}
- {name: kubeadm, type: BootstrapProvider, url: site/providers/cabpk, variable-substitution: true}
- {name: kubeadm, type: ControlPlaneProvider, url: site/providers/kcp, variable-substitution: true}
- {name: test, type: InfrastructureProvider, url: site/providers/infra-test}
init-options:
  core-provider: cluster-api:v1.14.2
  bootstrap-providers: [kubeadm:v1.14.2]
  control-plane-providers: [kubeadm:v1.14.2]
  infrastructure-providers: [test:v0.1.0]
---
apiVersion: airshipit.org/v1alpha1
kind: ClusterMap
metadata: {name: m}
map:
  mgmt:
    kubeconfigSources:
    - type: filesystem
      filesystem: {path: MGMT_KUBECONFIG, contextName: MGMT_CONTEXT}
  workload:
    parent: mgmt
    kubeconfigSources:
    - type: filesystem
      filesystem: {path: WORKLOAD_KUBECONFIG, contextName: WORKLOAD_CONTEXT}
`

const (
	tenantNS   = "tenant"
	cluster    = "workload"
	machine    = "workload-cp-0"
	providerID = "test://workload/control-plane-0"
	infraGroup = "infrastructure.test.airshipit.org"
)

func obj(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// setStatus writes status.initialization.provisioned (and more) as the
// infrastructure provider would.
func setStatus(ctx context.Context, c client.Client, u *unstructured.Unstructured, status map[string]any) error {
	cur := obj(u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
	if err := c.Get(ctx, client.ObjectKeyFromObject(cur), cur); err != nil {
		return err
	}
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Object["status"] = status
	return c.Status().Patch(ctx, cur, patch)
}

// TestPivotProvisionedCluster provisions a Cluster API Cluster on a
// management control plane with the real core and kubeadm managers (run
// locally by capienv) and a test-played infrastructure provider, the
// workload cluster being a second local control plane; then it installs
// the providers there and pivots with the executor's move.
func TestPivotProvisionedCluster(t *testing.T) {
	capi := capiModuleDir(t)
	start := time.Now()
	step := func(format string, args ...any) {
		t.Logf("[%5.1fs] %s", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	mgmt := testenv.StartFull(t, testenv.Options{Nodes: 1})
	workload := testenv.StartFull(t, testenv.Options{Nodes: 1})
	step("two local control planes up")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	pairs := []string{}
	for name, env := range map[string]*testenv.Env{"MGMT": mgmt, "WORKLOAD": workload} {
		for _, crd := range []*apiextensionsv1.CustomResourceDefinition{stubCRD("issuers", "Issuer"), stubCRD("certificates", "Certificate")} {
			if err := env.Client.Create(ctx, crd); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := clientcmd.LoadFromFile(env.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, name+"_KUBECONFIG", env.Kubeconfig, name+"_CONTEXT", raw.CurrentContext)
	}
	dir := t.TempDir()
	rel := func(provider, module string) string {
		r, err := filepath.Rel(filepath.Join(dir, "site", "providers", provider), filepath.Join(capi, module, "config", "default"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	writeSite(t, dir, map[string]string{
		"config": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts: {c: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":                           "phase: {path: phases}\n",
		"site/phases/kustomization.yaml":               "resources: [phases.yaml]\n",
		"site/phases/phases.yaml":                      strings.NewReplacer(pairs...).Replace(pivotPhases),
		"site/providers/capi/kustomization.yaml":       "resources:\n- " + rel("capi", "core") + "\n",
		"site/providers/cabpk/kustomization.yaml":      "resources:\n- " + rel("cabpk", "bootstrap/kubeadm") + "\n",
		"site/providers/kcp/kustomization.yaml":        "resources:\n- " + rel("kcp", "controlplane/kubeadm") + "\n",
		"site/providers/infra-test/kustomization.yaml": "resources: [components.yaml]\n",
		"site/providers/infra-test/components.yaml":    testInfraComponents,
	})
	phaseExecutor := func(name string) executor.Executor {
		t.Helper()
		site, p := loadPhase(t, dir, name)
		if err := site.CheckPhase(ctx, p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ex, err := site.Executor(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return ex
	}
	run := func(name string) {
		t.Helper()
		if err := phaseExecutor(name).Run(ctx, executor.RunOptions{Timeout: 3 * time.Minute}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	// Before anything, the move phase finds no Cluster anywhere.
	st, err := phaseExecutor("pivot").Status(ctx)
	if err != nil {
		t.Fatalf("move status before init: %v", err)
	}
	if len(st.Objects) != 0 || !strings.Contains(st.Message, "no Cluster API Cluster") {
		t.Errorf("move status before init = %+v, want no objects", st)
	}
	// Before init, the init phase's status says nothing is installed.
	st, err = phaseExecutor("init-workload").Status(ctx)
	if err != nil {
		t.Fatalf("status before init: %v", err)
	}
	if len(st.Objects) != 4 || st.Objects[0].Applied || !strings.Contains(st.Message, "never run") {
		t.Errorf("status before init = %+v, want 4 providers not applied and a never-run message", st)
	}

	run("init-mgmt")
	step("providers installed on mgmt")
	capienv.Start(t, mgmt, capienv.Options{Name: "mgmt-"})
	step("Cluster API managers running for mgmt")

	// The workload cluster's control-plane Node, as the infrastructure
	// provider would have named it.
	node := &corev1.Node{}
	if err := workload.Client.Get(ctx, client.ObjectKey{Name: local.NodeName(0)}, node); err != nil {
		t.Fatal(err)
	}
	node.Spec.ProviderID = providerID
	if err := workload.Client.Update(ctx, node); err != nil {
		t.Fatalf("setting the Node's providerID: %v", err)
	}

	caCrt, err := os.ReadFile(filepath.Join(workload.StateDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := os.ReadFile(filepath.Join(workload.StateDir, "pki", "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	host, port := apiEndpoint(t, workload)
	clusterLabels := map[string]string{"cluster.x-k8s.io/cluster-name": cluster}

	infraCluster := obj(infraGroup+"/v1alpha1", "TestCluster", tenantNS, cluster)
	infraCluster.Object["spec"] = map[string]any{"controlPlaneEndpoint": map[string]any{"host": host, "port": int64(port)}}
	infraMachine := obj(infraGroup+"/v1alpha1", "TestMachine", tenantNS, machine)
	infraMachine.SetLabels(clusterLabels)
	infraMachine.Object["spec"] = map[string]any{"providerID": providerID}
	capiCluster := obj("cluster.x-k8s.io/v1beta2", "Cluster", tenantNS, cluster)
	capiCluster.Object["spec"] = map[string]any{
		"controlPlaneEndpoint": map[string]any{"host": host, "port": int64(port)},
		"infrastructureRef":    map[string]any{"apiGroup": infraGroup, "kind": "TestCluster", "name": cluster},
	}
	capiMachine := obj("cluster.x-k8s.io/v1beta2", "Machine", tenantNS, machine)
	capiMachine.SetLabels(map[string]string{"cluster.x-k8s.io/control-plane": ""})
	capiMachine.Object["spec"] = map[string]any{
		"clusterName":       cluster,
		"bootstrap":         map[string]any{"dataSecretName": machine + "-bootstrap"},
		"infrastructureRef": map[string]any{"apiGroup": infraGroup, "kind": "TestMachine", "name": machine},
	}
	secrets := []*corev1.Secret{
		{
			ObjectMeta: metav1.ObjectMeta{Name: cluster + "-ca", Namespace: tenantNS, Labels: clusterLabels},
			Type:       "cluster.x-k8s.io/secret",
			Data:       map[string][]byte{"tls.crt": caCrt, "tls.key": caKey},
		},
		{
			// Bootstrap data would come from a bootstrap provider; its name
			// is not one clusterctl links to the Cluster, so it asks to move.
			ObjectMeta: metav1.ObjectMeta{Name: machine + "-bootstrap", Namespace: tenantNS,
				Labels: map[string]string{"cluster.x-k8s.io/cluster-name": cluster, "clusterctl.cluster.x-k8s.io/move": ""}},
			Type: "cluster.x-k8s.io/secret",
			Data: map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")},
		},
	}
	if err := mgmt.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if err := mgmt.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// Infrastructure and bootstrap first, then the owners: a Machine created
	// before its infrastructure waits for a requeue.
	for _, o := range []*unstructured.Unstructured{infraCluster, infraMachine, capiCluster, capiMachine} {
		if err := mgmt.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	step("Cluster, Machine and infrastructure created on mgmt")
	// Play the infrastructure provider.
	if err := setStatus(ctx, mgmt.Client, infraCluster, map[string]any{"initialization": map[string]any{"provisioned": true}}); err != nil {
		t.Fatalf("TestCluster status: %v", err)
	}
	if err := setStatus(ctx, mgmt.Client, infraMachine, map[string]any{
		"initialization": map[string]any{"provisioned": true},
		"addresses":      []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}},
	}); err != nil {
		t.Fatalf("TestMachine status: %v", err)
	}
	waitProvisioned(ctx, t, mgmt.Client, "mgmt")
	step("Cluster provisioned and initialized, Machine Running with a nodeRef (real managers)")

	run("init-workload")
	step("providers installed on workload")
	capienv.Start(t, workload, capienv.Options{Name: "workload-"})
	step("Cluster API managers running for workload")

	st, err = phaseExecutor("pivot").Status(ctx)
	if err != nil {
		t.Fatalf("move status before the move: %v", err)
	}
	if len(st.Objects) != 1 || st.Objects[0].Applied || st.Objects[0].Ready || !strings.Contains(st.Objects[0].Message, "not moved") {
		t.Errorf("move status before the move = %+v, want the Cluster not moved", st)
	}

	moveStart := time.Now()
	run("pivot")
	moveTook := time.Since(moveStart)
	step("move took %s", moveTook.Round(time.Millisecond))

	moved := []client.Object{capiCluster, capiMachine, infraCluster, infraMachine}
	for _, name := range []string{cluster + "-ca", cluster + "-kubeconfig", machine + "-bootstrap"} {
		moved = append(moved, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tenantNS, Name: name}})
	}
	for _, o := range moved {
		id := fmt.Sprintf("%T %s", o, client.ObjectKeyFromObject(o))
		if u, ok := o.(*unstructured.Unstructured); ok {
			id = u.GetKind() + " " + client.ObjectKeyFromObject(o).String()
		}
		got := o.DeepCopyObject().(client.Object)
		if err := workload.Client.Get(ctx, client.ObjectKeyFromObject(o), got); err != nil {
			t.Errorf("%s is not on the workload cluster after the move: %v", id, err)
		}
		got = o.DeepCopyObject().(client.Object)
		if err := mgmt.Client.Get(ctx, client.ObjectKeyFromObject(o), got); !apierrors.IsNotFound(err) {
			t.Errorf("%s is still on mgmt after the move (get: %v)", id, err)
		}
	}
	// The move unpauses the Cluster on the target.
	got := obj("cluster.x-k8s.io/v1beta2", "Cluster", tenantNS, cluster)
	if err := workload.Client.Get(ctx, client.ObjectKeyFromObject(got), got); err == nil {
		if paused, _, _ := unstructured.NestedBool(got.Object, "spec", "paused"); paused {
			t.Error("the moved Cluster is still paused")
		}
	}

	st, err = phaseExecutor("pivot").Status(ctx)
	if err != nil {
		t.Fatalf("move status: %v", err)
	}
	t.Logf("move status: %+v", st)
	if len(st.Objects) != 1 || !st.Objects[0].Applied || !st.Objects[0].Ready || st.Objects[0].Drifted {
		t.Errorf("move status = %+v, want the Cluster on workload only", st)
	}
	st, err = phaseExecutor("init-workload").Status(ctx)
	if err != nil {
		t.Fatalf("init status: %v", err)
	}
	for _, o := range st.Objects {
		t.Logf("init status: %+v", o)
		if !o.Applied || o.Drifted {
			t.Errorf("init status of %s = %+v, want applied and not drifted", o.ID, o)
		}
	}

	// Status does not move: play the infrastructure provider again on the
	// new management cluster and let its managers bring the Machine back.
	if err := setStatus(ctx, workload.Client, infraCluster, map[string]any{"initialization": map[string]any{"provisioned": true}}); err != nil {
		t.Fatalf("TestCluster status on workload: %v", err)
	}
	if err := setStatus(ctx, workload.Client, infraMachine, map[string]any{
		"initialization": map[string]any{"provisioned": true},
		"addresses":      []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}},
	}); err != nil {
		t.Fatalf("TestMachine status on workload: %v", err)
	}
	waitProvisioned(ctx, t, workload.Client, "workload")
	step("after the pivot the workload cluster manages itself: Machine Running again")
	st, err = phaseExecutor("pivot").Status(ctx)
	if err != nil {
		t.Fatalf("move status: %v", err)
	}
	if len(st.Objects) != 1 || !st.Objects[0].Ready || !strings.Contains(st.Objects[0].Message, "phase Provisioned") {
		t.Errorf("move status once reconciled = %+v, want the Cluster ready in phase Provisioned", st)
	}
}

// apiEndpoint returns the host and port of a local control plane's API server.
func apiEndpoint(t *testing.T, env *testenv.Env) (string, int) {
	t.Helper()
	host := strings.TrimPrefix(env.Config.Host, "https://")
	h, p, ok := strings.Cut(host, ":")
	if !ok {
		t.Fatalf("API server address %q has no port", env.Config.Host)
	}
	var port int
	if _, err := fmt.Sscanf(p, "%d", &port); err != nil {
		t.Fatalf("API server address %q: %v", env.Config.Host, err)
	}
	return h, port
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

// waitProvisioned waits until the managers report the Cluster's
// infrastructure provisioned and its control plane initialized, and the
// Machine Running with a nodeRef: what clusterctl move checks first.
func waitProvisioned(ctx context.Context, t *testing.T, c client.Client, where string) {
	t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		cl := obj("cluster.x-k8s.io/v1beta2", "Cluster", tenantNS, cluster)
		m := obj("cluster.x-k8s.io/v1beta2", "Machine", tenantNS, machine)
		if err := c.Get(ctx, client.ObjectKeyFromObject(cl), cl); err != nil {
			if ctx.Err() == nil {
				last = err.Error()
			}
			return false, nil
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
			if ctx.Err() == nil {
				last = err.Error()
			}
			return false, nil
		}
		infra, _, _ := unstructured.NestedBool(cl.Object, "status", "initialization", "infrastructureProvisioned")
		// Without a control-plane provider only the condition says so;
		// status.initialization.controlPlaneInitialized is the provider's.
		cp := conditionTrue(cl, "ControlPlaneInitialized")
		clPhase, _, _ := unstructured.NestedString(cl.Object, "status", "phase")
		mPhase, _, _ := unstructured.NestedString(m.Object, "status", "phase")
		nodeRef, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name")
		last = fmt.Sprintf("Cluster phase %q infrastructureProvisioned=%v controlPlaneInitialized=%v; Machine phase %q nodeRef %q",
			clPhase, infra, cp, mPhase, nodeRef)
		return infra && cp && mPhase == "Running" && nodeRef != "", nil
	})
	if err != nil {
		for _, o := range []*unstructured.Unstructured{
			obj("cluster.x-k8s.io/v1beta2", "Cluster", tenantNS, cluster), obj("cluster.x-k8s.io/v1beta2", "Machine", tenantNS, machine),
		} {
			if gerr := c.Get(context.Background(), client.ObjectKeyFromObject(o), o); gerr == nil {
				data, _ := yaml.Marshal(o.Object["status"])
				t.Logf("%s %s status:\n%s", o.GetKind(), o.GetName(), data)
			}
		}
		t.Fatalf("%s: waiting for the Cluster to be provisioned: %s: %v", where, last, err)
	}
	t.Logf("%s: %s", where, last)
}
