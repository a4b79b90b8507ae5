//go:build e2e

package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestInstallEveryOperator: `kubectl apply -k config/default` (server dry
// run) is accepted by a real API server, and every Deployment it holds runs
// the project's image as a non-root user with a read-only root, no
// capabilities, resource limits and probes; the operators with leader
// election, the Promenade API with TLS and a token.
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
		if out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "create", "namespace", ns).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "-k", config, "--dry-run=server").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply -k config/default --dry-run=server: %v\n%s", err, out)
	}
	for _, want := range []string{"deployment.apps/armada-operator created (server dry run)", "deployment.apps/metal3-operator created (server dry run)", "deployment.apps/sip-operator created (server dry run)", "deployment.apps/promenade created (server dry run)", "service/promenade-api created (server dry run)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}

	rendered, err := exec.Command(kubectl, "kustomize", config).Output()
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
}
