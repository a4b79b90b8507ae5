//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// copyDir copies the example site so a test may change it.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// runEnv runs a command with extra environment.
func runEnv(t *testing.T, env []string, bin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errOut.String(), code}
}

// TestExamplePlanOnLocalCluster runs the example site's plan on the local
// control plane as the demo does: the ClusterMap's filesystem source finds
// ~/.airship/local/kubeconfig, the workload becomes Ready under kwok, the
// Armada phase is clean (nothing drifted) after the operator enabled its
// groups and charts, second runs change nothing, and an object dropped
// from the site is pruned (after a dry run that shows it and changes
// nothing).
func TestExamplePlanOnLocalCluster(t *testing.T) {
	requireBinaries(t)
	bin := airshipctl(t)
	kubectl := kubectlPath(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	// The site and the Armada CRDs it takes from config/, in the
	// repository's layout.
	sites := filepath.Join(t.TempDir(), "examples")
	copyDir(t, filepath.Join(root, "examples", "site"), filepath.Join(sites, "site"))
	copyDir(t, filepath.Join(root, "config", "armada", "crd"), filepath.Join(sites, "..", "config", "armada", "crd"))
	conf := filepath.Join(sites, "site", "airship-config.yaml")
	operator := build(t, "armada-operator")
	env := []string{"HOME=" + home, "AIRSHIP_TESTBIN_DIR=" + local.DefaultBinDir(), "AIRSHIP_LOCAL_STATE_DIR=", "AIRSHIPCONFIG=" + conf, "AIRSHIP_RENDER_CACHE_DIR=" + filepath.Join(home, "cache")}
	t.Cleanup(func() { runEnv(t, env, bin, "cluster", "local", "down", "--purge") })

	if r := runEnv(t, env, bin, "cluster", "local", "up", "--nodes=2"); r.code != 0 {
		t.Fatalf("up: %s%s", r.stdout, r.stderr)
	}
	kubeconfig := filepath.Join(home, ".airship", "local", "kubeconfig")
	// The armada-ephemeral phase needs the operator; it runs outside the
	// cluster with the site's charts/ in place of the /charts volume.
	var opLog strings.Builder
	op := exec.Command(operator, "--kubeconfig", kubeconfig, "--chart-root", filepath.Join(sites, "site", "function", "armada-site"),
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
	op.Stdout, op.Stderr = &opLog, &opLog
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = op.Process.Kill()
		_ = op.Wait()
		if t.Failed() {
			t.Logf("armada-operator log:\n%s", opLog.String())
		}
	})

	r := runEnv(t, env, bin, "plan", "run", "deploy-local")
	if r.code != 0 {
		t.Fatalf("plan run: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"initinfra-ephemeral   succeeded", "workload-ephemeral    succeeded", "armada-ephemeral      succeeded"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("plan run summary lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "all 4 objects are ready") {
		t.Errorf("no readiness progress on stderr:\n%s", r.stderr)
	}
	out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "-n", "airship-demo", "get", "deploy", "hello",
		"-o", "jsonpath={.status.readyReplicas} {.spec.template.spec.containers[0].image}").CombinedOutput()
	if err != nil || string(out) != "3 registry.invalid/hello:1.0" {
		t.Fatalf("Deployment after plan run: %q %v (want 3 ready replicas of the catalogue's image)", out, err)
	}

	// The phase waited for the manifest: every chart's release is deployed
	// and its workloads are up.
	out, err = exec.Command(kubectl, "--kubeconfig", kubeconfig, "-n", "armada-site", "get", "act",
		"-o", `jsonpath={range .items[*]}{.metadata.name}={.status.state}/{.status.satisfied} {end}`).CombinedOutput()
	if err != nil || string(out) != "api=deployed/true cache=deployed/true web=deployed/true web-admin=deployed/true " {
		t.Fatalf("ArmadaCharts after plan run: %q %v", out, err)
	}
	out, err = exec.Command(kubectl, "--kubeconfig", kubeconfig, "-n", "demo", "get", "statefulset", "site-cache",
		"-o", "jsonpath={.status.readyReplicas}").CombinedOutput()
	if err != nil || string(out) != "3" {
		t.Fatalf("StatefulSet of the cache chart: %q %v (want 3 ready replicas)", out, err)
	}

	// Enabling the groups and charts is the operator's own state (an
	// annotation), not a change to what the phase applied (target_state:
	// uninitialized): right after the run the phase is clean, and a second
	// run changes nothing.
	as := runEnv(t, env, bin, "phase", "status", "armada-ephemeral", "-o", "json")
	var armada executor.Status
	if err := json.Unmarshal([]byte(as.stdout), &armada); as.code != 0 || err != nil {
		t.Fatalf("phase status armada-ephemeral: code %d (%v)\n%s%s", as.code, err, as.stdout, as.stderr)
	}
	kinds := map[string]int{}
	for _, o := range armada.Objects {
		if !o.Applied || !o.Ready || o.Drifted {
			t.Errorf("phase status armada-ephemeral: %s applied %v ready %v drifted %v: %s", o.ID, o.Applied, o.Ready, o.Drifted, o.Message)
		}
		kinds[strings.SplitN(o.ID, ".", 2)[0]]++
	}
	if kinds["ArmadaChart"] != 4 || kinds["ArmadaChartGroup"] != 2 || kinds["ArmadaManifest"] != 1 {
		t.Errorf("phase status armada-ephemeral lists %v, want 4 ArmadaCharts, 2 ArmadaChartGroups, 1 ArmadaManifest", kinds)
	}
	r = runEnv(t, env, bin, "phase", "run", "armada-ephemeral")
	if want := fmt.Sprintf("0 created, 0 configured, %d unchanged", len(armada.Objects)); r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("second run of armada-ephemeral should change nothing (%s): code %d\n%s", want, r.code, r.stderr)
	}

	r = runEnv(t, env, bin, "phase", "run", "workload-ephemeral")
	if r.code != 0 || !strings.Contains(r.stderr, "0 created, 0 configured, 4 unchanged") {
		t.Fatalf("second run should change nothing: code %d\n%s", r.code, r.stderr)
	}

	// Drop the Widget from the site: a dry run shows the prune and changes nothing.
	kust := filepath.Join(sites, "site", "function", "hello", "kustomization.yaml")
	data, err := os.ReadFile(kust)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kust, []byte(strings.Replace(string(data), "- widget.yaml\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runEnv(t, env, bin, "phase", "run", "workload-ephemeral", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stderr, "Widget.example.airshipit.org/airship-demo/hello-widget: pruned") {
		t.Fatalf("dry run: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	get := func() (string, error) {
		out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "-n", "airship-demo", "get", "widgets", "-o", "name").CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if w, err := get(); err != nil || w != "widget.example.airshipit.org/hello-widget" {
		t.Fatalf("dry run changed the cluster: %q %v", w, err)
	}
	r = runEnv(t, env, bin, "phase", "run", "workload-ephemeral")
	if r.code != 0 || !strings.Contains(r.stderr, "1 objects pruned") {
		t.Fatalf("run after dropping the Widget: code %d\n%s", r.code, r.stderr)
	}
	if w, err := get(); err != nil || w != "" {
		t.Fatalf("Widget not pruned: %q %v", w, err)
	}

	st := runEnv(t, env, bin, "plan", "status", "deploy-local", "-o", "json")
	if st.code != 0 || !strings.Contains(st.stdout, `"phase": "workload-ephemeral"`) || !strings.Contains(st.stdout, `"ready": 3`) {
		t.Fatalf("plan status: code %d\n%s%s", st.code, st.stdout, st.stderr)
	}
}
