package builder

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/promenade/certs"
	"github.com/airshipit/airship-go/internal/promenade/docset"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// buildBinary compiles a command of this repository into a temporary
// directory.
func buildBinary(t *testing.T, pkg string) string {
	t.Helper()
	goBin := testtool.Path(t, "go")
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.CommandContext(t.Context(), goBin, "build", "-o", bin, pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// genesisSite is the example site for a genesis against a local API
// server: the API server on apiPort, and Genesis naming the manifest
// cluster-bootstrap with charts read below /opt/armada/site. It returns the
// documents, the generated certificates among them, as files in a directory.
func genesisSite(t *testing.T, apiPort int) (dir string, files []string) {
	t.Helper()
	src := exampleSources(t)
	for i := range src {
		data := string(src[i].Data)
		switch src[i].Name {
		case "KubernetesNetwork.yaml":
			data = strings.Replace(data, "    apiserver_port: 6443\n", "    apiserver_port: "+strconv.Itoa(apiPort)+"\n", 1)
		case "Genesis.yaml":
			data = strings.Replace(data, "\n  hostname: n0\n", "\n  armada:\n    target_manifest: cluster-bootstrap\n    chart_root: /opt/armada/site\n  hostname: n0\n", 1)
		default:
			continue
		}
		if data == string(src[i].Data) {
			t.Fatalf("%s: the line to change is not there", src[i].Name)
		}
		src[i].Data = []byte(data)
	}
	set, err := docset.LoadSources(src...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := certs.Generate(set, certs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pemDocs, err := docset.MarshalYAML(res.Documents)
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, docset.Source{Name: "certificates.yaml", Data: pemDocs})
	dir = t.TempDir()
	for _, s := range src {
		f := filepath.Join(dir, s.Name)
		if err := os.WriteFile(f, s.Data, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return dir, files
}

// startControlPlane starts the local control plane (etcd, API server,
// controller manager, scheduler, kwok with one Node) with the site's
// kubernetes CA on apiPort, so the admin kubeconfig genesis.sh lays down
// reaches it as it would reach the genesis API server.
func startControlPlane(t *testing.T, set *docset.Set, apiPort int) client.Client {
	t.Helper()
	ca, err := pki.Parse([]byte(set.PEM(v1.SchemaCertificateAuthority, "kubernetes")), []byte(set.PEM(v1.SchemaCertificateAuthorityKey, "kubernetes")))
	if err != nil {
		t.Fatalf("kubernetes CA of the site: %v", err)
	}
	stateDir, err := os.MkdirTemp("", "airship-genesis-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := local.Down(local.DownOptions{StateDir: stateDir, Purge: true}); err != nil {
			t.Errorf("stopping the local control plane: %v", err)
		}
	})
	res, err := local.Up(context.WithoutCancel(t.Context()), local.Options{StateDir: stateDir, Nodes: 1, APIServerPort: apiPort, CA: ca, Timeout: 3 * time.Minute})
	if errors.Is(err, local.ErrNoBinaries) {
		testtool.Missing(t, "%v: %s", err, local.BuildHint)
	}
	if err != nil {
		t.Fatalf("starting the local control plane: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", res.State.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, armadav1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// standInForKubelet does, for the API, what the genesis kubelet would:
// registers the Node n0 (managed by kwok, which reports it and its pods
// Ready) and posts the mirror pods of the static pods genesis.sh lays down.
func standInForKubelet(t *testing.T, c client.Client, b *Builder) {
	t.Helper()
	ctx := t.Context()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n0",
		Labels:      map[string]string{"kubernetes.io/hostname": "n0", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
		Annotations: map[string]string{local.FakeNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"}}}
	if err := c.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	p, err := b.GenesisPayload()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Files {
		if filepath.Dir(f.Path) != ManifestDir {
			continue
		}
		var pod corev1.Pod
		if err := yaml.Unmarshal(f.Content, &pod); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		pod.Name += "-n0"
		pod.Spec.NodeName = "n0"
		pod.Annotations = map[string]string{"kubernetes.io/config.mirror": "genesis", "kubernetes.io/config.source": "file"}
		if err := c.Create(ctx, &pod); err != nil {
			t.Fatalf("mirror pod of %s: %v", f.Path, err)
		}
	}
}

// rootedKubeconfig is a bash snippet that sets args to the script's
// arguments with --kubeconfig FILE replaced by a copy of FILE whose host
// paths are under PROMENADE_ROOT: what the genesis host's own root gives
// the real kubectl and armada-operator.
const rootedKubeconfig = `args=()
while (($#)); do
  if [[ "$1" == --kubeconfig ]]; then
    sed "s|: /etc/kubernetes/|: ${PROMENADE_ROOT}/etc/kubernetes/|" "$2" >"$2.rooted"
    args+=(--kubeconfig "$2.rooted")
    shift 2
    continue
  fi
  args+=("$1")
  shift
done
`

// TestGenesisBootstrapArmadaOnAPIServer runs genesis.sh with its bootstrap
// Armada against a real API server: the real CRDs, the example site's
// core-chart manifest (promenade charts-values --armada-documents, as
// docs/promenade.md says to write it) with the site's real charts, the real
// kubectl and armada-operator binaries; only the host is stubbed
// (systemctl, apt-get, the kubelet's health, downloads), and kwok stands in
// for the kubelet. The ArmadaManifest ends Ready with every chart's Helm
// release deployed and its workload ready on the kwok nodes, the anchors on
// the genesis node, and the bootstrap Armada stopped.
func TestGenesisBootstrapArmadaOnAPIServer(t *testing.T) {
	realKubectl := testtool.Path(t, "kubectl")
	if _, err := testtool.Find(local.Etcd, local.DefaultBinDir()); err != nil {
		testtool.Missing(t, "%v: %s", err, local.BuildHint)
	}
	operator := buildBinary(t, "./cmd/armada-operator")
	promenade := buildBinary(t, "./cmd/promenade")

	apiPort, err := strconv.Atoi(strings.TrimPrefix(testenv.FreeAddr(t), "127.0.0.1:"))
	if err != nil {
		t.Fatal(err)
	}
	siteDir, files := genesisSite(t, apiPort)
	cmd := exec.CommandContext(t.Context(), promenade, append([]string{"charts-values", "--armada", "--armada-documents",
		"--manifest-name", "cluster-bootstrap", "-n", "kube-system", "--charts-dir", "/charts", "--wait-timeout", "300"}, files...)...)
	armadaDocs, err := cmd.Output()
	if err != nil {
		t.Fatalf("promenade charts-values: %v\n%s", err, exitStderr(err))
	}
	if err := os.WriteFile(filepath.Join(siteDir, "armada.yaml"), armadaDocs, 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := docset.Load(append(files, filepath.Join(siteDir, "armada.yaml"))...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	genesis, err := b.GenesisScript()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "genesis.sh")
	if err := os.WriteFile(script, genesis, 0o700); err != nil {
		t.Fatal(err)
	}

	c := startControlPlane(t, set, apiPort)
	ctx := t.Context()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: "armadamanifests.armada.airshipit.org"}, &crd); !apierrors.IsNotFound(err) {
		t.Fatalf("the Armada CRDs before genesis.sh: %v", err)
	}
	standInForKubelet(t, c, b)

	sb := newSandbox(t, "n0", "192.168.77.10")
	realSleep := testtool.Path(t, "sleep")
	for name, body := range map[string]string{
		"kubectl": fmt.Sprintf("echo \"kubectl $*\" >>%q\n%sexec %q \"${args[@]}\"\n", sb.log, rootedKubeconfig, realKubectl),
		"sleep":   fmt.Sprintf("exec %q \"$@\"\n", realSleep),
	} {
		if err := os.WriteFile(filepath.Join(sb.bin, name), []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The operator where the Genesis document expects it (no tar_url):
	// the real binary, given the rooted kubeconfig.
	opPath := sb.root + DefaultArmadaOperatorPath
	if err := os.MkdirAll(filepath.Dir(opPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(opPath, []byte(fmt.Sprintf("#!/bin/bash\n%sexec %q \"${args[@]}\"\n", rootedKubeconfig, operator)), 0o755); err != nil {
		t.Fatal(err)
	}
	// The site's charts where chart_root and --charts-dir say.
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	copyDir(t, filepath.Join(root, "charts", "promenade"), sb.root+"/opt/armada/site/charts")
	sb.env = append(sb.env, "PROMENADE_POLL_INTERVAL=1", "PROMENADE_ARMADA_TIMEOUT=300")

	out, err := sb.runErr(script)
	if err != nil {
		opLog, _ := os.ReadFile(sb.root + "/var/log/promenade/armada-operator.log")
		t.Fatalf("genesis.sh: %v\n%s\narmada-operator log (tail):\n%s", err, out, tail(string(opLog), 60))
	}
	calls, err := os.ReadFile(sb.log)
	if err != nil {
		t.Fatal(err)
	}
	inOrder(t, string(calls), stepControlPlane, stepCRDs+sb.root+ArmadaDir+"/crds.yaml", stepCRDs+sb.root+ArmadaDir+"/manifest.yaml",
		stepWaitReady, stepValidation)

	// The manifest and every chart Ready, each chart's release deployed.
	var m armadav1.ArmadaManifest
	if err := c.Get(ctx, client.ObjectKey{Namespace: ArmadaNamespace, Name: "cluster-bootstrap"}, &m); err != nil {
		t.Fatal(err)
	}
	if !ready(m.Status.Conditions) {
		t.Errorf("ArmadaManifest cluster-bootstrap not Ready: %+v", m.Status.Conditions)
	}
	var charts armadav1.ArmadaChartList
	if err := c.List(ctx, &charts, client.InNamespace(ArmadaNamespace)); err != nil {
		t.Fatal(err)
	}
	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets, client.MatchingLabels{"owner": "helm", "status": "deployed"}); err != nil {
		t.Fatal(err)
	}
	var deployed []string
	for _, s := range secrets.Items {
		deployed = append(deployed, s.Namespace+"/"+s.Labels["name"])
	}
	if len(charts.Items) == 0 {
		t.Fatal("no ArmadaCharts")
	}
	for _, ch := range charts.Items {
		if !ready(ch.Status.Conditions) {
			t.Errorf("ArmadaChart %s not Ready: %+v", ch.Name, ch.Status.Conditions)
		}
		release := ch.Spec.Namespace + "/" + m.Spec.ReleasePrefix + "-" + ch.Spec.Release
		if !slices.Contains(deployed, release) {
			t.Errorf("release %s of chart %s not deployed (deployed: %v)", release, ch.Name, deployed)
		}
	}

	// The control-plane anchors run on the genesis node, as its labels say.
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace("kube-system"), client.MatchingLabels{"application": "promenade"}); err != nil {
		t.Fatal(err)
	}
	for _, anchor := range []string{"etcd-anchor", "apiserver-anchor", "controller-manager-anchor", "scheduler-anchor", "haproxy-anchor"} {
		on := false
		for _, p := range pods.Items {
			on = on || (p.Labels["component"] == anchor && p.Spec.NodeName == "n0" && p.Status.Phase == corev1.PodRunning)
		}
		if !on {
			t.Errorf("no %s pod Running on n0", anchor)
		}
	}

	// The bootstrap Armada was stopped; genesis completed.
	if _, err := os.Stat(sb.root + "/var/lib/promenade/armada-operator.pid"); err == nil {
		t.Error("pid file of the bootstrap Armada left behind")
	}
	if _, err := os.Stat(sb.root + "/var/lib/promenade/genesis-complete"); err != nil {
		t.Errorf("genesis not marked complete: %v", err)
	}
	if opLog, err := os.ReadFile(sb.root + "/var/log/promenade/armada-operator.log"); err != nil || len(opLog) == 0 {
		t.Errorf("armada-operator log: %v (%d bytes)", err, len(opLog))
	}
	if pids := running(t, operator); len(pids) > 0 {
		t.Errorf("armada-operator still running: pids %v", pids)
	}

	// A second run finds the manifest Ready: nothing applied again, no
	// bootstrap Armada started.
	second := sb.run(t, script)
	if strings.Contains(second, "apply --server-side") {
		t.Errorf("second run applied again:\n%s", second)
	}
	inOrder(t, second, stepControlPlane, stepWaitReady, stepValidation)
	if pids := running(t, operator); len(pids) > 0 {
		t.Errorf("armada-operator running after the second run: pids %v", pids)
	}
}

// running lists the processes whose command line runs bin.
func running(t *testing.T, bin string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		if strings.HasPrefix(string(cmdline), bin+"\x00") {
			out = append(out, filepath.Base(filepath.Dir(p)))
		}
	}
	return out
}

func ready(conds []metav1.Condition) bool {
	for _, c := range conds {
		if c.Type == "Ready" {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func exitStderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
