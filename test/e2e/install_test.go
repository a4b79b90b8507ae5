//go:build e2e

package e2e

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	armadaop "github.com/airshipit/airship-go/internal/armada/armadaoperator"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/image"
	"github.com/airshipit/airship-go/internal/installchart"
	metal3op "github.com/airshipit/airship-go/internal/metal3/metal3operator"
	sipop "github.com/airshipit/airship-go/internal/sip/sipoperator"
	"github.com/airshipit/airship-go/internal/test/capienv"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
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
	home := t.TempDir()
	env := []string{"HOME=" + home, "AIRSHIP_TESTBIN_DIR=" + local.DefaultBinDir(), "AIRSHIP_LOCAL_STATE_DIR="}
	t.Cleanup(func() { runEnv(t, env, bin, "cluster", "local", "down", "--purge") })
	if r := runEnv(t, env, bin, "cluster", "local", "up", "--nodes=1"); r.code != 0 {
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
	t.Run("helm chart", func(t *testing.T) { helmChart(t, kubectl, kubeconfig, root) })
	if t.Failed() {
		return
	}
	// Each operator's binary, taken out of its image, runs against the
	// cluster as its ServiceAccount from the chart (kwok runs no containers).
	for _, op := range imageOperators {
		t.Run("image of "+op.name, func(t *testing.T) { runImageOperator(t, kubectl, kubeconfig, root, op) })
	}
}

// helmChart renders charts/airship-operators with overrides (one
// namespace, images by digest from a registry) and applies it as a server
// dry run, then installs it with its defaults through the Helm SDK as
// `helm install` does.
func helmChart(t *testing.T, kubectl, kubeconfig, root string) {
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
	if _, err := install.Run(ch, nil); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	t.Logf("helm install in %s", time.Since(start).Round(time.Millisecond))
	for _, obj := range []string{"crd/armadacharts.armada.airshipit.org", "crd/baremetalhosts.metal3.io", "-n=armada-system deployment/armada-operator",
		"-n=sip-system serviceaccount/sip-operator", "clusterrolebinding/metal3-operator-manager", "-n=promenade-system service/promenade-api"} {
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
	args                     []string
	// prepare installs what the operator needs beyond the chart.
	prepare func(t *testing.T, kubectl, kubeconfig string)
	// object is applied once the operator is ready; reconciled reports
	// whether the operator acted on it.
	object     func(t *testing.T, dir string) string
	get        []string
	reconciled func(obj *unstructured.Unstructured) bool
}

var imageOperators = []imageOperator{
	{
		name: "armada-operator", namespace: "armada-system", leaseID: armadaop.LeaderElectionID,
		// The chart below is installed from --chart-root/charts/image-check.
		object: func(t *testing.T, dir string) string {
			chart := filepath.Join(dir, "charts", "image-check")
			writeFiles(t, chart, map[string]string{
				"Chart.yaml":            "apiVersion: v2\nname: image-check\nversion: 0.1.0\n",
				"templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: image-check\ndata:\n  from: {{ .Values.from }}\n",
			})
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
    type: local
    location: /charts/image-check
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

// runImageOperator builds op's image for this machine as make images
// does, takes the binary out of the image's layer, and runs it with the
// token of the ServiceAccount the chart made (so with the chart's RBAC):
// it must answer /readyz, hold the leader Lease in its namespace and
// reconcile an object.
func runImageOperator(t *testing.T, kubectl, adminKubeconfig, root string, op imageOperator) {
	dir := t.TempDir()
	host := "linux/" + goruntime.GOARCH
	began := time.Now()
	bin := filepath.Join(dir, "build", op.name)
	build := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", bin, "./cmd/"+op.name)
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goruntime.GOARCH)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", op.name, err, out)
	}
	built := time.Since(began)
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		testtool.Missing(t, "the CA bundle make images puts in the images: %v; %s", err, testtool.SetupHint)
	}
	idx, err := image.Build(image.Spec{Name: op.name, Binaries: map[string]string{host: bin}, CACertificates: ca, Source: "https://example.invalid/e2e", Revision: "e2e", Version: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	layoutDir := filepath.Join(dir, "layout")
	if err := image.WriteLayout(layoutDir, idx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: binary built in %s, image in %s", op.name, built.Round(time.Millisecond), (time.Since(began) - built).Round(time.Millisecond))

	// Read the image back from its layout and take the entrypoint out of
	// the flattened file system.
	back, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := image.Platform(back, host)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != image.BinaryDir+"/"+op.name {
		t.Fatalf("entrypoint %v", cf.Config.Entrypoint)
	}
	extracted := filepath.Join(dir, "rootfs-"+op.name)
	extractFile(t, img, strings.TrimPrefix(cf.Config.Entrypoint[0], "/"), extracted)

	// A kubeconfig holding a token of the chart's ServiceAccount, its
	// namespace as the context's (where the Lease goes, as in a pod).
	token, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", adminKubeconfig, "-n", op.namespace, "create", "token", op.name, "--duration=1h").Output()
	if err != nil {
		t.Fatalf("a token of ServiceAccount %s/%s: %v", op.namespace, op.name, err)
	}
	admin, err := clientcmd.LoadFromFile(adminKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster := admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = cluster
	kc.AuthInfos[op.name] = &clientcmdapi.AuthInfo{Token: strings.TrimSpace(string(token))}
	kc.Contexts[op.name] = &clientcmdapi.Context{Cluster: "local", AuthInfo: op.name, Namespace: op.namespace}
	kc.CurrentContext = op.name
	saKubeconfig := filepath.Join(dir, "kubeconfig")
	if err := kubeconfig.Write(saKubeconfig, kc); err != nil {
		t.Fatal(err)
	}

	probe, metrics := testenv.FreeAddr(t), testenv.FreeAddr(t)
	args := append([]string{"--kubeconfig", saKubeconfig, "--health-probe-bind-address=" + probe, "--metrics-bind-address=" + metrics}, op.args...)
	if op.name == "armada-operator" {
		args = append(args, "--chart-root", dir)
	}
	manifest := op.object(t, dir)
	if op.prepare != nil {
		op.prepare(t, kubectl, adminKubeconfig)
	}
	started := time.Now()
	start(t, op.name+" (from the image)", "", extracted, args...)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	poll := func(what string, cond func() (bool, string)) {
		t.Helper()
		last := ""
		err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(context.Context) (bool, error) {
			ok, state := cond()
			last = state
			return ok, nil
		})
		if err != nil {
			t.Fatalf("%s: %s: %v; last seen: %s", op.name, what, err, last)
		}
	}
	poll("/readyz answering 200", func() (bool, string) {
		resp, err := httpGet(t, "http://"+probe+"/readyz")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close() // only read: closing cannot lose data
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	poll("/metrics answering 200", func() (bool, string) {
		resp, err := httpGet(t, "http://"+metrics+"/metrics")
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close() // only read: closing cannot lose data
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	poll("the leader Lease "+op.namespace+"/"+op.leaseID, func() (bool, string) {
		out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", adminKubeconfig, "-n", op.namespace, "get", "lease", op.leaseID, "-o", "jsonpath={.spec.holderIdentity}").CombinedOutput()
		return err == nil && len(out) > 0, string(out)
	})
	obj := filepath.Join(dir, "object.yaml")
	if err := os.WriteFile(obj, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", adminKubeconfig, "apply", "-f", obj).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	poll("reconciling "+strings.Join(op.get, " "), func() (bool, string) {
		out, err := exec.CommandContext(t.Context(), kubectl, append([]string{"--kubeconfig", adminKubeconfig, "get", "-o", "json"}, op.get...)...).Output()
		if err != nil {
			return false, err.Error()
		}
		var u unstructured.Unstructured
		if err := u.UnmarshalJSON(out); err != nil {
			return false, err.Error()
		}
		return op.reconciled(&u), string(out)
	})
	t.Logf("%s: ready, leader and reconciled %s in %s", op.name, strings.Join(op.get, " "), time.Since(started).Round(time.Millisecond))
	if op.name == "armada-operator" {
		out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", adminKubeconfig, "-n", "default", "get", "configmap", "image-check", "-o", "jsonpath={.data.from}").CombinedOutput()
		if err != nil || string(out) != "the-image" {
			t.Errorf("the chart's ConfigMap: %v %q", err, out)
		}
	}
}

// extractFile writes the file at path of img's flattened file system to
// dst, executable.
func extractFile(t *testing.T, img v1.Image, path, dst string) {
	t.Helper()
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }() // only read: closing cannot lose data
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s not in the image", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != path {
			continue
		}
		if h.Mode&0o111 == 0 || h.Uid != 0 {
			t.Errorf("%s: mode %o uid %d", path, h.Mode, h.Uid)
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, tr); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
}

// httpGet is http.Get with the tests' bounded client, under the test's
// context.
func httpGet(t *testing.T, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return testenv.HTTPClient().Do(req)
}
