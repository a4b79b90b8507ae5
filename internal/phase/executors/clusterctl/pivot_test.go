package clusterctl_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/apply"
	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/metal3/metal3operator"
	"github.com/airshipit/airship-go/internal/metal3/metal3test"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// clusterctl's library logs through controller-runtime's logger, which
// prints a stack trace when no logger is set; the tests do not read it.
func init() { ctrllog.SetLogger(logr.Discard()) }

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
- {name: metal3, type: InfrastructureProvider, url: site/providers/metal3}
init-options:
  core-provider: cluster-api:v1.14.2
  bootstrap-providers: [kubeadm:v1.14.2]
  control-plane-providers: [kubeadm:v1.14.2]
  infrastructure-providers: [metal3:v0.1.0]
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
	tenantNS    = "tenant"
	cluster     = "workload"
	machine     = "workload-cp-0"
	hostName    = "node-1"
	bmcPassword = "pw-pivot-Hk2"
)

func obj(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

// startMetal3 runs metal3-operator (every controller) against env until
// the test ends, its BareMetalHost controller driving the Ironic inst
// (the deploy agent downloads images itself).
func startMetal3(t *testing.T, env *testenv.Env, inst *localironic.Instance) {
	t.Helper()
	o := metal3operator.DefaultOptions()
	o.SkipControllerNameValidation = true
	o.MetricsAddr, o.ProbeAddr, o.LeaderElection = "0", "0", false
	o.PowerPollInterval = 5 * time.Second
	o.IronicEndpoint, o.DeployISO = inst.APIURL, inst.DeployISOURL
	o.IronicImageDownloadSource = "http"
	o.ProvisionPollInterval = time.Second
	// The infrastructure kinds store v1beta2: the operator's conversion
	// webhook, at a URL, converts every v1beta1 request.
	addr := testenv.FreeAddr(t)
	o.Conversion = operatorkit.ConversionWebhook{Addr: addr, URL: "https://" + addr}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- metal3operator.Run(ctx, env.Config, o, logr.Discard()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("metal3-operator: %v", err)
		}
	})
	metal3test.WaitConversion(t, env.Client, o.Conversion.URL)
}

// tenantDocs are the workload cluster's objects: its host and BMC Secret,
// a Cluster with a Metal3Cluster, one control-plane Machine with its
// KubeadmConfig and Metal3Machine. Bootstrap and infrastructure first.
const tenantDocs = `apiVersion: v1
kind: Secret
metadata: {name: node-1-bmc, namespace: tenant}
stringData: {username: admin, password: PASSWORD}
---
apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata: {name: node-1, namespace: tenant}
spec:
  online: true
  bootMACAddress: MAC
  bmc: {address: BMC, credentialsName: node-1-bmc}
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfig
metadata: {name: workload-cp-0, namespace: tenant}
spec:
  initConfiguration:
    nodeRegistration:
      name: '{{ ds.meta_data.name }}'
      kubeletExtraArgs:
      - {name: node-labels, value: 'metal3.io/uuid={{ ds.meta_data.uuid }}'}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Machine
metadata: {name: workload-cp-0, namespace: tenant}
spec:
  image: {url: IMAGES/node.img, checksum: IMAGES/node.img.md5sum}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: Metal3Cluster
metadata: {name: workload, namespace: tenant}
spec:
  controlPlaneEndpoint: {host: HOST, port: PORT}
  noCloudProvider: true
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Cluster
metadata: {name: workload, namespace: tenant}
spec:
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Cluster, name: workload}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata:
  name: workload-cp-0
  namespace: tenant
  labels: {cluster.x-k8s.io/control-plane: "", cluster.x-k8s.io/cluster-name: workload}
spec:
  clusterName: workload
  version: v1.37.1
  bootstrap:
    configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: workload-cp-0}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3Machine, name: workload-cp-0}
`

// TestPivotProvisionedCluster provisions a Cluster API Cluster on a
// management control plane with the real core and kubeadm managers (run
// locally by capienv) and the bare-metal infrastructure provider
// (metal3-operator, installed by clusterctl init from config/metal3,
// driving a local Ironic): Ironic writes the image and a config drive to
// an emulated host's disk, and the host boots from it into the workload
// cluster, a second local control plane. Then it installs the providers
// there, with a second, fresh Ironic, and pivots with the executor's
// move: the host, its BMC Secret and the machines arrive with their state
// (the host's status through its status annotation), the managers there
// carry on, the second Ironic adopts the host (active without a deploy),
// and the host is not provisioned again nor power-cycled.
func TestPivotProvisionedCluster(t *testing.T) {
	capi := capienv.ModuleDir(t)
	start := time.Now()
	step := func(format string, args ...any) {
		t.Logf("[%5.1fs] %s", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	mgmt := testenv.StartFull(t, testenv.Options{Nodes: 1})
	workload := testenv.StartFull(t, testenv.Options{Nodes: 1, AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme}})
	step("two local control planes up")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	pairs := []string{}
	for name, env := range map[string]*testenv.Env{"MGMT": mgmt, "WORKLOAD": workload} {
		for _, crd := range capienv.CertManagerStubs() {
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
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	metal3Rel, err := filepath.Rel(filepath.Join(dir, "site", "providers", "metal3"), filepath.Join(root, "config", "metal3", "default"))
	if err != nil {
		t.Fatal(err)
	}
	writeSite(t, dir, map[string]string{
		"config": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts: {c: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":                       "phase: {path: phases}\n",
		"site/phases/kustomization.yaml":           "resources: [phases.yaml]\n",
		"site/phases/phases.yaml":                  strings.NewReplacer(pairs...).Replace(pivotPhases),
		"site/providers/capi/kustomization.yaml":   "resources:\n- " + rel("capi", "core") + "\n",
		"site/providers/cabpk/kustomization.yaml":  "resources:\n- " + rel("cabpk", "bootstrap/kubeadm") + "\n",
		"site/providers/kcp/kustomization.yaml":    "resources:\n- " + rel("kcp", "controlplane/kubeadm") + "\n",
		"site/providers/metal3/kustomization.yaml": "resources:\n- " + metal3Rel + "\n",
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

	mgmtIronic := testenv.Ironic(t)
	// The site's Metal3MachineTemplate names IMAGES/node.img and its md5sum file.
	image := testenv.ServeDiskImage(t, mgmtIronic, "node.img", 4<<20, testenv.DiskImageOptions{SumFile: metal3v1alpha1.MD5})
	startMetal3(t, mgmt, mgmtIronic)
	// One emulated host; it boots into the cluster its user-data names.
	host := emulator.Generate(1, 1)[0]
	host.Name = hostName
	emu, err := emulator.New(emulator.Config{Username: "admin", Password: bmcPassword, Hosts: []emulator.Host{host}},
		emulator.Options{StateDir: t.TempDir(), HeartbeatInterval: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	emuCtx, stopEmu := context.WithCancel(context.Background())
	t.Cleanup(func() { stopEmu(); emu.Close() })
	if _, err := emu.Start(emuCtx, "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	step("Ironic, metal3-operator and the emulator running for mgmt")

	caCrt, err := os.ReadFile(filepath.Join(workload.StateDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := os.ReadFile(filepath.Join(workload.StateDir, "pki", "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	apiHost, apiPort := apiEndpoint(t, workload)
	if err := mgmt.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenantNS}}); err != nil {
		t.Fatal(err)
	}
	ca := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: cluster + "-ca", Namespace: tenantNS, Labels: map[string]string{"cluster.x-k8s.io/cluster-name": cluster}},
		Type:       "cluster.x-k8s.io/secret",
		Data:       map[string][]byte{"tls.crt": caCrt, "tls.key": caKey},
	}
	if err := mgmt.Client.Create(ctx, ca); err != nil {
		t.Fatal(err)
	}
	docs := strings.NewReplacer("PASSWORD", bmcPassword, "MAC", host.NICs[0].MAC, "BMC", emu.Address(hostName),
		"HOST", apiHost, "PORT", fmt.Sprint(apiPort), "IMAGES", mgmtIronic.HTTPURL).Replace(tenantDocs)
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		if err := mgmt.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	step("host, Cluster, Metal3Cluster, Machine, KubeadmConfig and Metal3Machine created on mgmt")
	waitProvisioned(ctx, t, mgmt.Client, "mgmt")
	step("Cluster provisioned and initialized, Machine Running with a nodeRef (real managers, this provider, Ironic, the emulator)")
	before, _ := emu.State(hostName)
	disk := emu.DiskPath(hostName, "sda")
	diskBefore := diskState(t, disk)
	if cd := configdrivetest.ProvisionedDisk(t, disk, image.Raw); !strings.Contains(string(cd.UserData), "kubeadm") || before.NodeDisk != "sda" {
		// The user-data is not printed: it holds the cluster's CA key.
		t.Fatalf("the host's config drive holds no kubeadm bootstrap data, or the host did not boot from its disk (%+v)", before)
	}
	bmhBefore := obj("metal3.io/v1alpha1", "BareMetalHost", tenantNS, hostName)
	if err := mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmhBefore), bmhBefore); err != nil {
		t.Fatal(err)
	}
	m3mBefore := obj("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine", tenantNS, machine)
	if err := mgmt.Client.Get(ctx, client.ObjectKeyFromObject(m3mBefore), m3mBefore); err != nil {
		t.Fatal(err)
	}
	providerID, _, _ := unstructured.NestedString(m3mBefore.Object, "spec", "providerID")
	if providerID != "metal3://"+string(bmhBefore.GetUID()) {
		t.Fatalf("Metal3Machine providerID %q, want metal3://<host uid>", providerID)
	}

	run("init-workload")
	step("providers installed on workload")
	capienv.Start(t, workload, capienv.Options{Name: "workload-"})
	workloadIronic := testenv.Ironic(t)
	startMetal3(t, workload, workloadIronic)
	step("Cluster API managers, a second Ironic and metal3-operator running for workload")

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

	moved := []client.Object{
		obj("cluster.x-k8s.io/v1beta2", "Cluster", tenantNS, cluster), obj("cluster.x-k8s.io/v1beta2", "Machine", tenantNS, machine),
		obj("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Cluster", tenantNS, cluster), obj("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine", tenantNS, machine),
		obj("metal3.io/v1alpha1", "BareMetalHost", tenantNS, hostName),
	}
	for _, name := range []string{cluster + "-ca", cluster + "-kubeconfig", machine, hostName + "-bmc"} {
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
	if len(st.Objects) != 2 || st.Objects[0].ID != "Namespace "+tenantNS || !st.Objects[0].Ready ||
		!st.Objects[1].Applied || !st.Objects[1].Ready || st.Objects[1].Drifted {
		t.Errorf("move status = %+v, want the namespace marked and the Cluster on workload only", st)
	}
	// The source namespace names where its objects went, so the
	// management cluster's phases leave them alone from now on.
	srcNS := &corev1.Namespace{}
	if err := mgmt.Client.Get(ctx, client.ObjectKey{Name: tenantNS}, srcNS); err != nil {
		t.Fatal(err)
	}
	if to := srcNS.Annotations[apply.MovedToAnnotation]; to != "workload" {
		t.Errorf("source namespace annotation %s = %q, want workload", apply.MovedToAnnotation, to)
	}
	// Run again, the move has nothing to do and says so.
	events := make(chan executor.Event, 16)
	if err := phaseExecutor("pivot").Run(ctx, executor.RunOptions{Events: events}); err != nil {
		t.Fatalf("second move: %v", err)
	}
	close(events)
	var said []string
	for ev := range events {
		said = append(said, ev.Message)
	}
	if len(said) != 1 || !strings.Contains(said[0], "moved to \"workload\" already") {
		t.Errorf("second move said %q, want that it was moved already", said)
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

	// Status does not move: the host's comes back from its annotation,
	// the Metal3Machine's from the restored host, the Machine's from
	// Cluster API's managers on the new management cluster.
	waitProvisioned(ctx, t, workload.Client, "workload")
	step("after the pivot the workload cluster manages itself: Machine Running again")
	bmh := &metal3v1alpha1.BareMetalHost{}
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := workload.Client.Get(ctx, client.ObjectKey{Namespace: tenantNS, Name: hostName}, bmh); err != nil {
			return false, nil
		}
		id := bmh.Status.Provisioning.ID
		firstID, _, _ := unstructured.NestedString(bmhBefore.Object, "status", "provisioning", "ID")
		return id != "" && id != firstID && ironicState(ctx, workloadIronic, id) == "active", nil
	}); err != nil {
		t.Fatalf("the second Ironic did not adopt the moved host: status %+v", bmh.Status.Provisioning)
	}
	step("the second Ironic adopted the host: node %s active", bmh.Status.Provisioning.ID)
	if bmh.Status.Provisioning.State != metal3v1alpha1.StateProvisioned || !bmh.Status.PoweredOn || bmh.Spec.ConsumerRef == nil ||
		bmh.Spec.ConsumerRef.Name != machine || bmh.Annotations[metal3v1alpha1.PausedAnnotation] != "" {
		t.Errorf("moved host: state %q poweredOn %v consumerRef %+v annotations %v, want provisioned, on, the Metal3Machine, unpaused",
			bmh.Status.Provisioning.State, bmh.Status.PoweredOn, bmh.Spec.ConsumerRef, bmh.Annotations)
	}
	m3m := obj("infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine", tenantNS, machine)
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := workload.Client.Get(ctx, client.ObjectKeyFromObject(m3m), m3m); err != nil {
			return false, nil
		}
		ready, _, _ := unstructured.NestedBool(m3m.Object, "status", "ready")
		return ready, nil
	}); err != nil {
		t.Errorf("the moved Metal3Machine is not ready again: %v", m3m.Object["status"])
	}
	if got, _, _ := unstructured.NestedString(m3m.Object, "spec", "providerID"); got != providerID {
		t.Errorf("moved Metal3Machine providerID %q, want %q", got, providerID)
	}
	// The host was not provisioned again: same media, no power cycle,
	// its disk as it was; the first Ironic still holds its node, active.
	after, _ := emu.State(hostName)
	if !after.PowerOn || after.Media.Image != before.Media.Image || after.Media.Inserted || after.Resets != before.Resets || after.NodeDisk != "sda" {
		t.Errorf("the host was touched by the move: before %+v, after %+v", before, after)
	}
	if got := diskState(t, disk); got != diskBefore {
		t.Errorf("the host's disk changed across the move: before %+v, after %+v", diskBefore, got)
	}
	oldID, _, _ := unstructured.NestedString(bmhBefore.Object, "status", "provisioning", "ID")
	if got := ironicState(ctx, mgmtIronic, oldID); got != "active" {
		t.Errorf("the first Ironic's node %s is %q, want it kept active", oldID, got)
	}
	st, err = phaseExecutor("pivot").Status(ctx)
	if err != nil {
		t.Fatalf("move status: %v", err)
	}
	if len(st.Objects) != 2 || !st.Objects[1].Ready || !strings.Contains(st.Objects[1].Message, "phase Provisioned") {
		t.Errorf("move status once reconciled = %+v, want the Cluster ready in phase Provisioned", st)
	}
}

// diskFacts is what a move must leave as it is of a host's disk file.
type diskFacts struct {
	ModTime time.Time
	Size    int64
	Head    [sha256.Size]byte // of the first 4 MiB: the image and its table
}

func diskState(t *testing.T, path string) diskFacts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 4<<20)); err != nil {
		t.Fatal(err)
	}
	d := diskFacts{ModTime: fi.ModTime(), Size: fi.Size()}
	copy(d.Head[:], h.Sum(nil))
	return d
}

// ironicState is a node's provision_state, "" when it cannot be read.
func ironicState(ctx context.Context, inst *localironic.Instance, id string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, inst.APIURL+"/v1/nodes/"+id, nil)
	if err != nil {
		return ""
	}
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		return ""
	}
	defer func() { _ = resp.Body.Close() }()
	var n struct {
		ProvisionState string `json:"provision_state"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&n) != nil {
		return ""
	}
	return n.ProvisionState
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
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
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
