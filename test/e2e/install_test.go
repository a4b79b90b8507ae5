//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	armadaop "github.com/airshipit/airship-go/internal/armada/armadaoperator"
	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/installchart"
	"github.com/airshipit/airship-go/internal/localironic"
	metal3op "github.com/airshipit/airship-go/internal/metal3/metal3operator"
	"github.com/airshipit/airship-go/internal/pki"
	sipop "github.com/airshipit/airship-go/internal/sip/sipoperator"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestInstallEveryOperator: `kubectl apply -k config/default` (server dry
// run) is accepted by a real API server, and every Deployment it holds runs
// the project's image as a non-root user with a read-only root, no
// capabilities, resource limits and probes; the operators with leader
// election, the Promenade API with TLS and a token. On the same cluster the
// Helm chart renders and applies (server dry run with overrides, then a
// real install through the Helm SDK), and the binary taken out of each
// operator's image runs as the operator with the chart's ServiceAccount:
// ready, leader, and reconciling an object.
func TestInstallEveryOperator(t *testing.T) {
	requireBinaries(t)
	bin := airshipctl(t)
	kubectl := kubectlPath(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The operators' images as `make images` builds them, pause among
	// them: a real node (a kubelet and containerd) runs them as pods.
	images := testenv.BuildImages(t, []string{"armada-operator", "metal3-operator", "sip-operator", "pause"}, false)
	unlock, err := local.LockRealNodeHost(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "AIRSHIP_TESTBIN_DIR=" + local.DefaultBinDir(), "AIRSHIP_LOCAL_STATE_DIR="}
	t.Cleanup(func() {
		defer unlock()
		if r := runEnv(t, env, bin, "cluster", "local", "down", "--purge"); r.code != 0 {
			t.Errorf("down: %s%s", r.stdout, r.stderr)
		}
	})
	if r := runEnv(t, env, bin, "cluster", "local", "up", "--nodes=0", "--real-nodes=1", "--images="+images); r.code != 0 {
		t.Fatalf("up: %s%s", r.stdout, r.stderr)
	}
	kubeconfig := filepath.Join(home, ".airship", "local", "kubeconfig")
	config := filepath.Join(root, "config", "default")
	// A server dry run creates nothing, so the namespaces it would create
	// must exist for the objects in them to be checked.
	for _, ns := range []string{"armada-system", "metal3-system", "sip-system", "promenade-system"} {
		if out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "create", "namespace", ns).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "apply", "-k", config, "--dry-run=server").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply -k config/default --dry-run=server: %v\n%s", err, out)
	}
	for _, want := range []string{"deployment.apps/armada-operator created (server dry run)", "deployment.apps/metal3-operator created (server dry run)", "deployment.apps/sip-operator created (server dry run)", "deployment.apps/promenade created (server dry run)", "service/promenade-api created (server dry run)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}

	rendered, err := exec.CommandContext(t.Context(), kubectl, "kustomize", config).Output()
	if err != nil {
		t.Fatal(err)
	}
	deployments := 0
	for _, doc := range strings.Split(string(rendered), "\n---\n") {
		if !strings.Contains(doc, "kind: Deployment\n") {
			continue
		}
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		if d.Name == "ironic" {
			// Metal3's Ironic as config/metal3/ironic writes it, not an
			// image of this project (metal3operator TestInstallDryRun).
			continue
		}
		deployments++
		pod := d.Spec.Template.Spec
		if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
			t.Errorf("%s: pod not runAsNonRoot", d.Name)
		}
		for _, c := range pod.Containers {
			sc := c.SecurityContext
			switch {
			case c.Image != "localhost/airship/"+d.Name+":latest":
				t.Errorf("%s: image %q, want localhost/airship/%s:latest", d.Name, c.Image, d.Name)
			case sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("%s: container security context %+v", d.Name, sc)
			case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL":
				t.Errorf("%s: capabilities %+v, want all dropped", d.Name, sc.Capabilities)
			case c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero():
				t.Errorf("%s: resources %+v", d.Name, c.Resources)
			case c.LivenessProbe == nil || c.ReadinessProbe == nil:
				t.Errorf("%s: probes missing", d.Name)
			case d.Name != "promenade" && !strings.Contains(strings.Join(c.Args, " "), "--leader-elect"):
				t.Errorf("%s: args %v lack --leader-elect", d.Name, c.Args)
			case d.Name == "promenade" && !strings.Contains(strings.Join(c.Args, " "), "--tls-cert=/tls/tls.crt --tls-key=/tls/tls.key --token-file=/token/token"):
				t.Errorf("promenade: args %v do not serve HTTPS with a token", c.Args)
			}
		}
	}
	if deployments != 4 {
		t.Errorf("config/default has %d Deployments, want armada-operator, metal3-operator, sip-operator and promenade", deployments)
	}

	// The Helm chart: a server dry run of its rendering with overrides,
	// then a real install through the Helm SDK, whose CRDs and RBAC the
	// operators below run with.
	ironic := prepareMetal3Pod(t, kubectl, kubeconfig)
	t.Run("helm chart", func(t *testing.T) { helmChart(t, kubectl, kubeconfig, root, imageValues(t, images)) })
	if t.Failed() {
		return
	}
	// What each operator needs beyond the chart (Cluster API's CRDs for
	// metal3-operator's provider, as on a management cluster).
	for _, op := range imageOperators {
		if op.prepare != nil {
			op.prepare(t, kubectl, kubeconfig)
		}
	}
	pointMetal3AtIronic(t, kubectl, kubeconfig, ironic)
	chartURL := serveChartArchive(t)
	// Each operator runs as the chart's Deployment: a pod on the real
	// node, with the chart's ServiceAccount, RBAC, probes and security
	// settings, enforced by the kubelet and the runtime.
	for _, op := range imageOperators {
		t.Run("pod of "+op.name, func(t *testing.T) { runPodOperator(t, kubectl, kubeconfig, op, chartURL) })
	}
}

// helmChart renders charts/airship-operators with overrides (one
// namespace, images by digest from a registry) and applies it as a server
// dry run, then installs it through the Helm SDK as `helm install` does,
// with values (the local images by digest).
func helmChart(t *testing.T, kubectl, kubeconfig, root string, values map[string]any) {
	chart := filepath.Join(root, installchart.ChartDir)
	const ns = "airship-helm"
	digest := "sha256:" + strings.Repeat("ab", 32)
	start := time.Now()
	r, err := installchart.Render(chart, "airship", ns, map[string]any{
		"singleNamespace": true,
		"armada":          map[string]any{"image": map[string]any{"repository": "registry.example:5000/airship/armada-operator", "digest": digest}, "replicas": 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered the chart in %s", time.Since(start).Round(time.Millisecond))
	manifest := filepath.Join(t.TempDir(), "chart.yaml")
	if err := os.WriteFile(manifest, []byte(r.Manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "create", "namespace", ns).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "apply", "-f", manifest, "--dry-run=server").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply --dry-run=server of the rendered chart: %v\n%s", err, out)
	}
	for _, want := range []string{"deployment.apps/armada-operator created (server dry run)", "deployment.apps/promenade created (server dry run)", "clusterrolebinding.rbac.authorization.k8s.io/sip-operator-manager created (server dry run)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	var armada *appsv1.Deployment
	for _, o := range r.Objects {
		if o.GetKind() == "Deployment" && o.GetName() == "armada-operator" {
			armada = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, armada); err != nil {
				t.Fatal(err)
			}
		}
	}
	if armada == nil || armada.Namespace != ns || *armada.Spec.Replicas != 2 || armada.Spec.Template.Spec.Containers[0].Image != "registry.example:5000/airship/armada-operator@"+digest {
		t.Errorf("rendered armada-operator Deployment: %+v", armada)
	}

	// helm install airship charts/airship-operators -n airship-install --create-namespace
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	release := "airship-install"
	flags.Namespace = &release
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, release, "secret"); err != nil {
		t.Fatal(err)
	}
	ch, err := loader.LoadDir(chart)
	if err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName = "airship"
	install.Namespace = release
	install.CreateNamespace = true
	// The namespaces exist already: the dry run above needed them.
	install.TakeOwnership = true
	// helm install without --wait: the Promenade API waits for Secrets
	// the user creates. Helm still waits for the CRDs.
	install.WaitStrategy = kube.HookOnlyStrategy
	install.Timeout = 2 * time.Minute
	start = time.Now()
	if _, err := install.Run(ch, values); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	t.Logf("helm install in %s", time.Since(start).Round(time.Millisecond))
	for _, obj := range []string{"crd/armadacharts.armada.airshipit.org", "crd/baremetalhosts.metal3.io", "-n=armada-system deployment/armada-operator",
		"-n=sip-system serviceaccount/sip-operator", "clusterrolebinding/metal3-operator-manager"} {
		args := append([]string{"--kubeconfig", kubeconfig, "get", "-o", "jsonpath={.metadata.labels.app\\.kubernetes\\.io/managed-by}"}, strings.Fields(obj)...)
		out, err := exec.CommandContext(t.Context(), kubectl, args...).CombinedOutput()
		if err != nil || (!strings.HasPrefix(obj, "crd/") && string(out) != "Helm") {
			t.Errorf("%s after helm install: %v %q", obj, err, out)
		}
	}
}

// imageOperator is an operator whose image the test builds, and what it
// must do against the cluster to show it runs.
type imageOperator struct {
	name, namespace, leaseID string
	// prepare installs what the operator needs beyond the chart.
	prepare func(t *testing.T, kubectl, kubeconfig string)
	// object is applied once the operator is ready (given the URL of the
	// test chart's archive); reconciled reports whether the operator acted
	// on it.
	object     func(t *testing.T, chartURL string) string
	get        []string
	reconciled func(obj *unstructured.Unstructured) bool
}

var imageOperators = []imageOperator{
	{
		name: "armada-operator", namespace: "armada-system", leaseID: armadaop.LeaderElectionID,
		// The chart comes as an archive the test serves on the nodes' bridge.
		object: func(t *testing.T, chartURL string) string {
			return `apiVersion: armada.airshipit.org/v1alpha1
kind: ArmadaChart
metadata:
  name: image-check
  namespace: default
spec:
  chart_name: image-check
  release: image-check
  namespace: default
  source:
    type: tar
    location: ` + chartURL + `
  values:
    from: the-image
`
		},
		get: []string{"-n", "default", "armadachart/image-check"},
		reconciled: func(obj *unstructured.Unstructured) bool {
			return conditionTrue(obj, "Ready")
		},
	},
	{
		name: "sip-operator", namespace: "sip-system", leaseID: sipop.LeaderElectionID,
		object: func(*testing.T, string) string {
			return `apiVersion: airship.airshipit.org/v1
kind: SIPCluster
metadata:
  name: image-check
  namespace: default
spec:
  nodes:
    ControlPlane:
      labelSelector:
        matchLabels:
          airshipit.org/k8s-role: image-check
      count:
        active: 1
`
		},
		get: []string{"-n", "default", "sipcluster/image-check"},
		// No host matches: the operator takes the SIPCluster in hand
		// (finalizer) and reports it not ready in its conditions.
		reconciled: func(obj *unstructured.Unstructured) bool {
			conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
			return len(obj.GetFinalizers()) > 0 && len(conds) > 0
		},
	},
	{
		name: "metal3-operator", namespace: "metal3-system", leaseID: metal3op.LeaderElectionID,
		// The Cluster API provider in it waits for Cluster API's CRDs,
		// which clusterctl init installs on a management cluster.
		prepare: func(t *testing.T, kubectl, kubeconfig string) {
			dir, err := capienv.CoreCRDs()
			if err != nil {
				t.Fatal(err)
			}
			if out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "-f", dir).CombinedOutput(); err != nil {
				t.Fatalf("Cluster API's CRDs: %v\n%s", err, out)
			}
		},
		object: func(*testing.T, string) string {
			return `apiVersion: metal3.io/v1alpha1
kind: BareMetalHost
metadata:
  name: image-check
  namespace: default
spec:
  online: false
  bootMACAddress: "52:54:00:00:00:99"
  bmc:
    address: redfish+http://127.0.0.1:1/redfish/v1/Systems/image-check
    credentialsName: image-check-bmc
`
		},
		get: []string{"-n", "default", "baremetalhost/image-check"},
		// Its BMC answers nowhere: the host is taken in hand (finalizer)
		// and its state or error recorded.
		reconciled: func(obj *unstructured.Unstructured) bool {
			state, _, _ := unstructured.NestedString(obj.Object, "status", "provisioning", "state")
			errType, _, _ := unstructured.NestedString(obj.Object, "status", "errorType")
			return len(obj.GetFinalizers()) > 0 && (state != "" || errType != "")
		},
	},
}

func conditionTrue(obj *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if c, ok := c.(map[string]any); ok && c["type"] == typ && c["status"] == "True" {
			return true
		}
	}
	return false
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runPodOperator checks op's Deployment from the chart on the real node:
// Available, its pod Running there and ready (its probes pass) without a
// restart, holding the leader Lease in its namespace, reconciling an
// object, and never refused by the API server (the chart's RBAC is
// enough); still no restart at the end.
func runPodOperator(t *testing.T, kubectl, kubeconfig string, op imageOperator, chartURL string) {
	k := func(args ...string) ([]byte, error) {
		return exec.CommandContext(t.Context(), kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	started := time.Now()
	poll := func(what string, cond func() (bool, string)) {
		t.Helper()
		last := ""
		err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(context.Context) (bool, error) {
			ok, state := cond()
			last = state
			return ok, nil
		})
		if err != nil {
			out, _ := k("-n", op.namespace, "describe", "pods", "-l", "app.kubernetes.io/name="+op.name)
			logs, _ := k("-n", op.namespace, "logs", "deploy/"+op.name, "--tail=30")
			t.Fatalf("%s: %s: %v; last seen: %s\n%s\n--- log ---\n%s", op.name, what, err, last, out, logs)
		}
	}
	var pod corev1.Pod
	readPod := func() (bool, string) {
		out, err := k("-n", op.namespace, "get", "pods", "-l", "app.kubernetes.io/name="+op.name, "-o", "json")
		if err != nil {
			return false, string(out)
		}
		var list corev1.PodList
		if err := json.Unmarshal(out, &list); err != nil || len(list.Items) != 1 {
			return false, fmt.Sprintf("%d pods (%v)", len(list.Items), err)
		}
		pod = list.Items[0]
		return true, ""
	}
	poll("the Deployment Available with a ready pod on the real node", func() (bool, string) {
		if ok, state := readPod(); !ok {
			return false, state
		}
		if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) != 1 || !pod.Status.ContainerStatuses[0].Ready {
			return false, fmt.Sprintf("pod %s %s %+v", pod.Name, pod.Status.Phase, pod.Status.ContainerStatuses)
		}
		out, err := k("-n", op.namespace, "get", "deploy", op.name, "-o", "jsonpath={.status.availableReplicas}")
		return err == nil && string(out) == "1", "available replicas " + string(out)
	})
	if pod.Spec.NodeName != local.RealNodeName(0) || pod.Spec.HostNetwork || pod.Status.PodIP == "" || pod.Status.PodIP == pod.Status.HostIP {
		t.Errorf("pod %s: node %q, hostNetwork %v, IP %s (host %s): want its own address on %s", pod.Name, pod.Spec.NodeName, pod.Spec.HostNetwork, pod.Status.PodIP, pod.Status.HostIP, local.RealNodeName(0))
	}
	poll("the leader Lease "+op.namespace+"/"+op.leaseID, func() (bool, string) {
		out, err := k("-n", op.namespace, "get", "lease", op.leaseID, "-o", "jsonpath={.spec.holderIdentity}")
		return err == nil && strings.HasPrefix(string(out), pod.Name), string(out)
	})
	obj := filepath.Join(t.TempDir(), "object.yaml")
	if err := os.WriteFile(obj, []byte(op.object(t, chartURL)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := k("apply", "-f", obj); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	poll("reconciling "+strings.Join(op.get, " "), func() (bool, string) {
		out, err := k(append([]string{"get", "-o", "json"}, op.get...)...)
		if err != nil {
			return false, string(out)
		}
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(out); err != nil {
			return false, err.Error()
		}
		return op.reconciled(&u), string(out)
	})
	t.Logf("%s: a pod on %s, ready, leader and reconciled %s in %s", op.name, pod.Spec.NodeName, strings.Join(op.get, " "), time.Since(started).Round(time.Millisecond))
	if op.name == "armada-operator" {
		out, err := k("-n", "default", "get", "configmap", "image-check", "-o", "jsonpath={.data.from}")
		if err != nil || string(out) != "the-image" {
			t.Errorf("the chart's ConfigMap: %v %q", err, out)
		}
	}
	logs, err := k("-n", op.namespace, "logs", pod.Name)
	if err != nil {
		t.Fatalf("the pod's log through the API server: %v: %s", err, logs)
	}
	if strings.Contains(string(logs), "forbidden") {
		t.Errorf("%s was refused by the API server: the chart's RBAC is not enough:\n%s", op.name, logs)
	}
	if ok, state := readPod(); !ok || pod.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("%s restarted: %s %+v", op.name, state, pod.Status.ContainerStatuses)
	}
}

// imageValues are the chart's values that run the images of dir (make
// images' kustomization.yaml) by digest, and leave Promenade out: its API
// waits for Secrets a site creates.
func imageValues(t *testing.T, dir string) map[string]any {
	t.Helper()
	values, err := installchart.ImageValues(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"armada", "metal3", "sip"} {
		if _, ok := values[key]; !ok {
			t.Fatalf("%s/kustomization.yaml pins no digest of %s", dir, installchart.ChartImages[key])
		}
	}
	values["install"] = map[string]any{"promenade": false}
	delete(values, "promenade")
	return values
}

// prepareMetal3Pod starts the Ironic the metal3-operator pod drives: a
// local process on the nodes' bridge, so that pods reach it, with HTTP
// basic authentication; its credentials become the Secret the chart
// mounts, with a CA bundle the chart mounts too.
func prepareMetal3Pod(t *testing.T, kubectl, kubeconfig string) *localironic.Instance {
	t.Helper()
	inst := testenv.Ironic(t, func(o *localironic.Options) {
		o.Host = local.NodeGateway
		o.Auth = localironic.AuthHTTPBasic
	})
	creds, err := os.ReadFile(inst.CredentialsFile)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.NewCA("unused-ironic-ca", time.Hour, pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"credentials.yaml": string(creds), "ca.crt": string(ca.CertPEM())})
	for _, args := range [][]string{
		{"-n", "metal3-system", "create", "secret", "generic", "ironic-credentials", "--from-file=credentials.yaml=" + filepath.Join(dir, "credentials.yaml")},
		{"-n", "metal3-system", "create", "secret", "generic", "ironic-cacert", "--from-file=ca.crt=" + filepath.Join(dir, "ca.crt")},
	} {
		if out, err := exec.CommandContext(t.Context(), kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("kubectl %v: %v: %s", args, err, out)
		}
	}
	return inst
}

// pointMetal3AtIronic sets the chart's ironic-bmo-configmap to the local
// Ironic and restarts metal3-operator to read it.
func pointMetal3AtIronic(t *testing.T, kubectl, kubeconfig string, inst *localironic.Instance) {
	t.Helper()
	patch := fmt.Sprintf(`{"data":{"IRONIC_ENDPOINT":%q,"DEPLOY_KERNEL_URL":"","DEPLOY_RAMDISK_URL":""}}`, inst.APIURL+"/v1/")
	for _, args := range [][]string{
		{"-n", "metal3-system", "patch", "configmap", "ironic-bmo-configmap", "--type=merge", "-p", patch},
		{"-n", "metal3-system", "rollout", "restart", "deployment/metal3-operator"},
		{"-n", "metal3-system", "rollout", "status", "deployment/metal3-operator", "--timeout=2m"},
	} {
		if out, err := exec.CommandContext(t.Context(), kubectl, append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput(); err != nil {
			pods, _ := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "-n", "metal3-system", "describe", "pods", "-l", "app.kubernetes.io/name=metal3-operator").CombinedOutput()
			logs, _ := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "-n", "metal3-system", "logs", "-l", "app.kubernetes.io/name=metal3-operator", "--tail=20", "--prefix").CombinedOutput()
			t.Fatalf("kubectl %v: %v: %s\n%s\n--- logs ---\n%s", args, err, out, pods, logs)
		}
	}
}

// serveChartArchive serves the test chart image-check as a .tgz on the
// nodes' bridge, where the armada-operator pod fetches it.
func serveChartArchive(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"image-check/Chart.yaml":            "apiVersion: v2\nname: image-check\nversion: 0.1.0\n",
		"image-check/templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: image-check\ndata:\n  from: {{ .Values.from }}\n",
	} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", net.JoinHostPort(local.NodeGateway, "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/image-check-0.1.0.tgz" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(buf.Bytes())
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String() + "/image-check-0.1.0.tgz"
}
