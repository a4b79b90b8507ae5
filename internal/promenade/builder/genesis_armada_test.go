package builder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/promenade/docset"
)

// armadaGenesis writes genesis.sh of the example site with a bootstrap
// Armada and returns its path.
func armadaGenesis(t *testing.T) string {
	t.Helper()
	b, err := New(exampleSetFrom(t, armadaSources(t)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := b.GenesisScript()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "genesis.sh")
	if err := os.WriteFile(file, g, 0o700); err != nil {
		t.Fatal(err)
	}
	return file
}

// inOrder checks that each of steps occurs in calls after the previous one.
func inOrder(t *testing.T, calls string, steps ...string) {
	t.Helper()
	at := 0
	for _, s := range steps {
		i := strings.Index(calls[at:], s)
		if i < 0 {
			t.Fatalf("%q not called after the previous steps (from byte %d):\n%s", s, at, calls)
		}
		at += i + len(s)
	}
}

const (
	stepControlPlane = "get --raw /readyz"
	stepCRDs         = "apply --server-side --force-conflicts --field-manager=promenade-genesis -f "
	stepArmadaStart  = "armada-operator --kubeconfig "
	stepWaitReady    = "get armadamanifest cluster-bootstrap"
	stepArmadaStop   = "armada-operator stopped"
	stepValidation   = "-n kube-system get pod kube-apiserver-n0"
)

func TestGenesisBootstrapArmada(t *testing.T) {
	script := armadaGenesis(t)
	sb := newSandbox(t, "n0", "192.168.77.10")

	first := sb.run(t, script)
	inOrder(t, first, stepControlPlane, stepCRDs+sb.root+ArmadaDir+"/crds.yaml", stepCRDs+sb.root+ArmadaDir+"/manifest.yaml",
		stepArmadaStart+sb.root+"/etc/kubernetes/admin/kubeconfig.yaml --leader-elect=false --metrics-bind-address=0 --health-probe-bind-address=0 --chart-root "+sb.root+"/opt/armada/site",
		stepWaitReady, stepArmadaStop, stepValidation)
	if n := strings.Count(first, stepArmadaStart); n != 1 {
		t.Errorf("armada-operator started %d times", n)
	}
	if _, err := os.Stat(sb.root + "/var/lib/promenade/armada-operator.pid"); err == nil {
		t.Error("pid file of the bootstrap Armada left behind")
	}
	// Only the target manifest's tree is applied, dependencies included.
	m, err := os.ReadFile(sb.root + ArmadaDir + "/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"name: cluster-bootstrap", "name: kubernetes-etcd", "name: kubernetes-control-plane", "name: etcd", "name: helm-toolkit", "name: apiserver", "namespace: kube-system"} {
		if !strings.Contains(string(m), want) {
			t.Errorf("manifest.yaml lacks %q:\n%s", want, m)
		}
	}
	if strings.Contains(string(m), "full-site") {
		t.Errorf("manifest.yaml holds a manifest genesis does not name:\n%s", m)
	}
	if fi, err := os.Stat(sb.root + ArmadaDir + "/manifest.yaml"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("manifest.yaml: %v %v", fi, err)
	}
	if fi, err := os.Stat(sb.root + DefaultArmadaOperatorPath); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("armada-operator not installed: %v %v", fi, err)
	}

	// A second run finds the manifest Ready: no second bootstrap Armada,
	// no CRDs or objects applied again, no download; validation still runs.
	second := sb.run(t, script)
	for _, unwanted := range []string{stepArmadaStart, "apply --server-side", "armada-operator.tar.gz", "systemctl restart"} {
		if strings.Contains(second, unwanted) {
			t.Errorf("second run called %q:\n%s", unwanted, second)
		}
	}
	inOrder(t, second, stepControlPlane, stepWaitReady, stepValidation)
}

func TestGenesisBootstrapArmadaTimeout(t *testing.T) {
	script := armadaGenesis(t)
	sb := newSandbox(t, "n0", "192.168.77.10")
	sb.env = []string{"STUB_ARMADA_NEVER_READY=1", "PROMENADE_ARMADA_TIMEOUT=0"}
	out, err := sb.runErr(script)
	if err == nil {
		t.Fatalf("genesis.sh succeeded with a manifest that is never Ready:\n%s", out)
	}
	want := "timed out after 0s waiting for ArmadaManifest kube-system/cluster-bootstrap to be Ready; charts not ready: etcd helm-toolkit apiserver"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	calls, err := os.ReadFile(sb.log)
	if err != nil {
		t.Fatal(err)
	}
	inOrder(t, string(calls), stepArmadaStart, stepWaitReady, "get armadachart apiserver", stepArmadaStop)
	if strings.Contains(string(calls), stepValidation) {
		t.Errorf("validation ran after Armada failed:\n%s", calls)
	}
	if _, err := os.Stat(sb.root + "/var/lib/promenade/armada-operator.pid"); err == nil {
		t.Error("pid file of the bootstrap Armada left behind")
	}
	if _, err := os.Stat(sb.root + "/var/lib/promenade/genesis-complete"); err == nil {
		t.Error("genesis marked complete")
	}

	// A new run, with a manifest not Ready yet that can become Ready,
	// starts one bootstrap Armada and completes.
	sb.env = nil
	if err := os.Remove(sb.armadaStarted); err != nil {
		t.Fatal(err)
	}
	calls2 := sb.run(t, script)
	if n := strings.Count(calls2, stepArmadaStart); n != 1 {
		t.Errorf("armada-operator started %d times:\n%s", n, calls2)
	}
	inOrder(t, calls2, stepArmadaStart, stepWaitReady, stepArmadaStop, stepValidation)
}

func TestGenesisArmadaConfigErrors(t *testing.T) {
	src := armadaSources(t)
	for i := range src {
		if src[i].Name == "Genesis.yaml" {
			src[i].Data = []byte(strings.Replace(string(src[i].Data), "target_manifest: cluster-bootstrap", "target_manifest: nope", 1))
		}
	}
	b, err := New(exampleSetFrom(t, src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.GenesisScript()
	if err == nil || !strings.Contains(err.Error(), `no armada/Manifest document named "nope"`) || !strings.Contains(err.Error(), "found cluster-bootstrap, full-site") {
		t.Fatalf("got %v", err)
	}

	// The schema refuses a tarball without its member and unknown fields.
	src = armadaSources(t)
	for i := range src {
		if src[i].Name == "Genesis.yaml" {
			s := strings.Replace(string(src[i].Data), "      tar_path: armada-operator\n", "", 1)
			s = strings.Replace(s, "chart_root:", "chartRoot:", 1)
			src[i].Data = []byte(s)
		}
	}
	_, err = docset.LoadSources(src...)
	if err == nil || !strings.Contains(err.Error(), "/data/armada/operator") || !strings.Contains(err.Error(), "chartRoot") {
		t.Fatalf("got %v", err)
	}
}
