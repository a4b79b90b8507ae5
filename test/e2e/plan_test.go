//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
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
		if info.Mode()&os.ModeSymlink != 0 {
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
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
	return runIn(t, "", env, bin, args...)
}

// runIn is runEnv in the directory dir ("" for the test's own).
func runIn(t *testing.T, dir string, env []string, bin string, args ...string) result {
	t.Helper()
	// Not canceled with the test: cleanups run commands too (down,
	// demo-down), and the test stops what it starts itself.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errOut.String(), code}
}

// start runs a long-lived process for the test, waiting for a line of its
// output holding ready (none when empty); its output is logged if the test
// fails, and returned for the test to read.
func start(t *testing.T, name, ready, bin string, args ...string) *syncBuffer {
	t.Helper()
	log := &syncBuffer{}
	// Not canceled with the test: cleanups run commands too (down,
	// demo-down), and the test stops what it starts itself.
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		err := <-exited
		if t.Failed() {
			t.Logf("%s (%v) log:\n%s", name, err, log.String())
		}
	})
	if ready == "" {
		return log
	}
	deadline := time.After(30 * time.Second)
	for !strings.Contains(log.String(), ready) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s exited (%v) before printing %q:\n%s", name, err, ready, log.String())
		case <-deadline:
			t.Fatalf("%s did not print %q in 30s:\n%s", name, ready, log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return log
}

// syncBuffer is a bytes.Buffer safe for a process's writes and the test's reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// eventually polls check every half second until it says done or the
// timeout passes; then the test fails with what it last saw.
func eventually(t *testing.T, timeout time.Duration, what string, check func() (string, bool)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		seen, done := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s; last seen: %s", what, timeout, seen)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// targetHostProblems checks the example site's six hosts in the target
// cluster (name=type/state/operational status/CPUs/powered on/image
// URL/consumer): node04 and node05 provisioned with image for worker
// Machines, one control-plane host for tenant-1-cp-0, the others
// available, inspected, on and unclaimed. It says what is not so.
func targetHostProblems(hostStates map[string]string, image string) []string {
	var problems []string
	provisionedCP := 0
	for name, state := range hostStates {
		cpus := "16"
		if name <= "node03" {
			cpus = "8"
		}
		switch {
		case name == "node04" || name == "node05":
			if !regexp.MustCompile(`^Worker/provisioned/OK/16/true/` + regexp.QuoteMeta(image) + `/tenant-1-workers-`).MatchString(state) {
				problems = append(problems, fmt.Sprintf("worker host %s: %s, want provisioned with %s for a worker Machine", name, state, image))
			}
		case strings.HasPrefix(state, "ControlPlane/provisioned/"):
			provisionedCP++
			if state != "ControlPlane/provisioned/OK/8/true/"+image+"/tenant-1-cp-0" {
				problems = append(problems, fmt.Sprintf("control-plane host %s: %s, want provisioned with %s for tenant-1-cp-0", name, state, image))
			}
		case state != strings.SplitN(state, "/", 2)[0]+"/available/OK/"+cpus+"/true//":
			problems = append(problems, fmt.Sprintf("host %s: %s, want available, inspected, on and unclaimed", name, state))
		}
	}
	if len(hostStates) != 6 || provisionedCP != 1 {
		problems = append(problems, fmt.Sprintf("hosts %v: want 6, one control-plane host provisioned (got %d)", hostStates, provisionedCP))
	}
	return problems
}

// freePort is a port on 127.0.0.1 nothing listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }() // only probed for its port
	return l.Addr().(*net.TCPAddr).Port
}

// replaceIn replaces old by new in a file of the site's copy, once.
func replaceIn(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestExamplePlanOnLocalCluster runs the example site's plan on two local
// control planes as the demo does: the ClusterMap's filesystem sources
// find ~/.airship/local/kubeconfig (ephemeral) and
// ~/.airship/local-target/kubeconfig (target), the workload becomes Ready
// under kwok, clusterctl installs Cluster API and the bare-metal provider
// and the managers run, the site's hosts (served by the Redfish emulator)
// become available under metal3-operator and are found powered on through
// their BMCs, SIP picks and labels the tenant cluster's hosts among them,
// the target cluster's control-plane Machine and its two workers take
// those hosts, which boot the site's image and join the target cluster as
// its Nodes, the site's charts are deployed into the target cluster, the
// Armada phase is clean (nothing drifted) after the operator enabled its
// groups and charts, second runs change nothing, and an object dropped
// from the site is pruned (after a dry run that shows it and changes
// nothing). Markers planted in a Secret of the site, the BMCs' password and
// a SOPS-encrypted value show nowhere they must not (see planted): no
// process log, airshipctl output, Event, status, ConfigMap or annotation of
// either cluster, and the SOPS value in no render without the key.
func TestExamplePlanOnLocalCluster(t *testing.T) {
	requireBinaries(t)
	bin := airshipctl(t)
	kubectl := kubectlPath(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "examples", "site", "function", "capi", "upstream", "core")); err != nil {
		testtool.Missing(t, "the example site's link to Cluster API's components is missing (%v); `make testbin` writes it", err)
	}
	home := t.TempDir()
	// The site and what it takes from config/, in the repository's layout.
	sites := filepath.Join(t.TempDir(), "examples")
	copyDir(t, filepath.Join(root, "examples", "site"), filepath.Join(sites, "site"))
	copyDir(t, filepath.Join(root, "config", "armada", "crd"), filepath.Join(sites, "..", "config", "armada", "crd"))
	copyDir(t, filepath.Join(root, "config", "metal3"), filepath.Join(sites, "..", "config", "metal3"))
	copyDir(t, filepath.Join(root, "config", "sip", "crd"), filepath.Join(sites, "..", "config", "sip", "crd"))
	// The target cluster's API server on a free port, not the demo's 16443.
	targetPort := freePort(t)
	replaceIn(t, filepath.Join(sites, "site", "function", "k8scontrol", "cluster.yaml"), "port: 16443", fmt.Sprintf("port: %d", targetPort))
	// ... on loopback: no real node here, so no nodes' bridge (the demo's
	// endpoint is this machine's address on it).
	replaceIn(t, filepath.Join(sites, "site", "function", "k8scontrol", "cluster.yaml"), "host: "+local.NodeGateway, "host: 127.0.0.1")
	// The target cluster here has kwok Nodes only: sip-target keeps the
	// moved SIPCluster as it is, its load balancer where the scheduler
	// puts it, instead of on the demo's real node.
	sipTarget := filepath.Join(sites, "site", "site", "local", "sip-target", "kustomization.yaml")
	if err := os.WriteFile(sipTarget, []byte("resources:\n- ../../../function/tenant-cluster\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each cluster's metal3-operator drives an Ironic of its own, as in the
	// demo, on free ports; the ephemeral one's image server serves the
	// site's node image (hack/site-image) with its checksum file, at the
	// URL the copy's Metal3Machines name instead of the demo's.
	tuning := func(o *localironic.Options) { o.Tuning.SyncPowerStateInterval = 10 * time.Second }
	ironicEphemeral, ironicTarget := testenv.Ironic(t, tuning), testenv.Ironic(t, tuning)
	image := ironicEphemeral.HTTPURL + "/images/site-node.qcow2"
	if r := runEnv(t, nil, buildPath(t, "site-image", "./hack/site-image"), "--out", filepath.Join(ironicEphemeral.HTTPRoot, "images", "site-node.qcow2")); r.code != 0 {
		t.Fatalf("site-image: %s%s", r.stdout, r.stderr)
	}
	for _, f := range []string{filepath.Join("k8scontrol", "controlplane.yaml"), filepath.Join("workers", "workers.yaml")} {
		// The image's URL, then its checksum file's.
		for range 2 {
			replaceIn(t, filepath.Join(sites, "site", "function", f), "http://127.0.0.1:6180/", ironicEphemeral.HTTPURL+"/")
		}
	}
	conf := filepath.Join(sites, "site", "airship-config.yaml")
	// Markers where credentials go (see planted), looked for once the
	// plan ran.
	leak := plantMarkers(t, bin, filepath.Join(sites, "site"))
	operator := build(t, "armada-operator")
	emulatorBin, metal3Bin, sipBin := build(t, "redfish-emulator"), build(t, "metal3-operator"), build(t, "sip-operator")
	// The site-pki phase's script runs promenade and kubectl from PATH.
	promenadeBin := build(t, "promenade")
	pkiDir := filepath.Join(t.TempDir(), "promenade")
	env := []string{"HOME=" + home, "AIRSHIP_TESTBIN_DIR=" + local.DefaultBinDir(), "AIRSHIP_LOCAL_STATE_DIR=", "AIRSHIPCONFIG=" + conf,
		"AIRSHIP_RENDER_CACHE_DIR=" + filepath.Join(home, "cache"), "PROMENADE_OUTPUT_DIR=" + pkiDir,
		"PATH=" + filepath.Dir(promenadeBin) + string(os.PathListSeparator) + filepath.Dir(kubectl) + string(os.PathListSeparator) + os.Getenv("PATH")}
	env = append(env, leak.keyEnv...)
	runs := &transcript{}
	airship := func(args ...string) result { t.Helper(); return runs.run(t, env, bin, args...) }
	targetDir := filepath.Join(home, ".airship", "local-target")
	t.Cleanup(func() { runEnv(t, env, bin, "cluster", "local", "down", "--purge") })
	t.Cleanup(func() { runEnv(t, env, bin, "cluster", "local", "down", "--purge", "--state-dir", targetDir) })

	if r := airship("cluster", "local", "up", "--nodes=2"); r.code != 0 {
		t.Fatalf("up: %s%s", r.stdout, r.stderr)
	}
	// As the demo does: the site PKI first, then the target cluster's
	// control plane with the PKI's kubernetes CA.
	if r := airship("phase", "run", "site-pki"); r.code != 0 {
		t.Fatalf("phase run site-pki: %s%s", r.stdout, r.stderr)
	}
	caCert, caKey := filepath.Join(pkiDir, "pki", "ca-kubernetes.pem"), filepath.Join(pkiDir, "pki", "ca-kubernetes-key.pem")
	if r := airship("cluster", "local", "up", "--nodes=1", "--state-dir", targetDir, "--port", fmt.Sprint(targetPort),
		"--ca-cert", caCert, "--ca-key", caKey); r.code != 0 {
		t.Fatalf("up (target): %s%s", r.stdout, r.stderr)
	}
	kubeconfig := filepath.Join(home, ".airship", "local", "kubeconfig")
	targetKubeconfig := filepath.Join(targetDir, "kubeconfig")
	kc := func(config string, args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), kubectl, append([]string{"--kubeconfig", config}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The site PKI: its kubernetes CA is the target cluster's and the
	// Secret Cluster API signs the cluster's bootstrap data and kubeconfig
	// with; the node scripts are built from it.
	siteCA, err := os.ReadFile(caCert)
	if err != nil {
		t.Fatal(err)
	}
	if targetCA, err := os.ReadFile(filepath.Join(targetDir, "pki", "ca.crt")); err != nil || !bytes.Equal(targetCA, siteCA) {
		t.Fatalf("the target cluster's CA is not the site PKI's kubernetes CA (%v)", err)
	}
	secretCA := kc(kubeconfig, "-n", "metal3", "get", "secret", "tenant-1-ca", "-o", `jsonpath={.data.tls\.crt}`)
	if decoded, err := base64.StdEncoding.DecodeString(secretCA); err != nil || !bytes.Equal(decoded, siteCA) {
		t.Fatalf("Secret metal3/tenant-1-ca does not hold the site PKI's kubernetes CA (%v)", err)
	}
	for _, f := range []string{"genesis.sh", "join-n1.sh", "validate-cluster.sh"} {
		if _, err := os.Stat(filepath.Join(pkiDir, "scripts", f)); err != nil {
			t.Errorf("site-pki did not build %s: %v", f, err)
		}
	}
	// The armada-ephemeral phase needs the operator; it runs outside the
	// cluster with the site's charts/ in place of the /charts volume.
	logs := map[string]*syncBuffer{}
	logs["armada-operator"] = start(t, "armada-operator", "", operator, "--kubeconfig", kubeconfig, "--chart-root", filepath.Join(sites, "site", "function", "armada-site"),
		"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")

	// The hosts phases need the site's hosts served over Redfish and
	// metal3-operator. The emulator serves them on a free port and writes
	// the copy's hosts.yaml for that port (the site's names the demo's,
	// 127.0.0.1:8000); hosts that boot become Nodes of the cluster.
	hostsDir := filepath.Join(sites, "site", "function", "hosts")
	disks := t.TempDir()
	logs["redfish-emulator"] = start(t, "redfish-emulator", "serving 6 hosts at http://127.0.0.1:", emulatorBin, "--config", filepath.Join(hostsDir, "emulator.yaml"),
		"--listen", "127.0.0.1:0", "--manifests", filepath.Join(hostsDir, "hosts.yaml"), "--namespace", "metal3", "--target-kubeconfig", kubeconfig, "--state-dir", disks)
	// Each metal3-operator also serves its cluster's conversion webhook
	// (v1beta1 and v1beta2 of the infrastructure kinds), at a URL.
	ironicFlags := func(inst *localironic.Instance) []string {
		webhook := testenv.FreeAddr(t)
		return []string{"--ironic-endpoint", inst.APIURL, "--deploy-iso", inst.DeployISOURL, "--provision-poll-interval=2s",
			"--conversion-webhook-bind-address=" + webhook, "--conversion-webhook-url=https://" + webhook}
	}
	logs["metal3-operator"] = start(t, "metal3-operator", "", metal3Bin, append([]string{"--kubeconfig", kubeconfig, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0"},
		ironicFlags(ironicEphemeral)...)...)
	// Cluster API's managers, once clusterctl-init-ephemeral installed them.
	capiLogs, capiTargetLogs := t.TempDir(), t.TempDir()
	logs["capi-managers"] = start(t, "capi-managers", "waiting for clusterctl init", buildPath(t, "capi-managers", "./hack/capi-managers"), "--kubeconfig", kubeconfig, "--log-dir", capiLogs)
	// The core-charts-target and workload-target phases need an Armada
	// operator against the target cluster; it reads Promenade's charts at
	// /opt/promenade/charts.
	logs["armada-operator (target)"] = start(t, "armada-operator (target)", "", operator, "--kubeconfig", targetKubeconfig, "--chart-root", filepath.Join(sites, "site", "function", "armada-site"),
		"--chart-mount", "/opt/promenade/charts="+filepath.Join(root, "charts", "promenade"), "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
	logs["sip-operator"] = start(t, "sip-operator", "", sipBin, "--kubeconfig", kubeconfig, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")
	// After the pivot the target cluster manages itself: its own Cluster
	// API managers, metal3-operator and sip-operator.
	logs["capi-managers (target)"] = start(t, "capi-managers (target)", "waiting for clusterctl init", buildPath(t, "capi-managers", "./hack/capi-managers"), "--kubeconfig", targetKubeconfig, "--log-dir", capiTargetLogs)
	logs["metal3-operator (target)"] = start(t, "metal3-operator (target)", "", metal3Bin, append([]string{"--kubeconfig", targetKubeconfig, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0"},
		ironicFlags(ironicTarget)...)...)
	logs["sip-operator (target)"] = start(t, "sip-operator (target)", "", sipBin, "--kubeconfig", targetKubeconfig, "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0")

	r := airship("plan", "run", "deploy-local")
	if r.code != 0 {
		t.Fatalf("plan run: code %d, ending:\n%s\nwhole output:\n%s\n%s", r.code, r.lastErr(), r.stdout, r.stderr)
	}
	phases := []string{"site-pki", "initinfra-ephemeral", "workload-ephemeral", "armada-ephemeral", "clusterctl-init-ephemeral", "hosts-ephemeral",
		"hosts-power-ephemeral", "sip-ephemeral", "controlplane-ephemeral", "workers-ephemeral", "core-charts-target", "initinfra-target", "clusterctl-init-target",
		"clusterctl-move", "clusterctl-move-sip", "sip-target", "workload-target"}
	// Once the test is over (passed or not), before the processes stop:
	// no marker where it must not be.
	t.Cleanup(func() {
		leak.scanLeaks(t, leakScan{bin: bin, env: env, phases: phases, logs: logs, runs: runs, kubectl: kubectl,
			logDirs: []string{capiLogs, capiTargetLogs, filepath.Join(home, ".airship", "local", "logs"), filepath.Join(targetDir, "logs"),
				filepath.Dir(ironicEphemeral.LogFile), filepath.Dir(ironicTarget.LogFile)},
			clusters: map[string]string{"ephemeral-cluster": kubeconfig, "target-cluster": targetKubeconfig},
			cacheDir: filepath.Join(home, "cache")})
	})
	for _, p := range phases {
		if !regexp.MustCompile(`(?m)^` + p + ` +succeeded`).MatchString(r.stdout) {
			t.Errorf("plan run summary lacks %s succeeded:\n%s", p, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "all 4 objects are ready") {
		t.Errorf("no readiness progress on stderr:\n%s", r.stderr)
	}
	// The pivot moves the hosts and the SIPCluster that picked them in one
	// phase; clusterctl-move-sip finds nothing left to move.
	for _, want := range []string{
		`[clusterctl-move] namespace "metal3" of "ephemeral-cluster" marked moved to "target-cluster"`,
		`[clusterctl-move] namespace "tenant-1" of "ephemeral-cluster" marked moved to "target-cluster"`,
		`[clusterctl-move-sip] namespace "tenant-1" of "ephemeral-cluster" was moved to "target-cluster" already`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("plan run does not say %q:\n%s", want, r.stderr)
		}
	}
	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "-n", "airship-demo", "get", "deploy", "hello",
		"-o", "jsonpath={.status.readyReplicas} {.spec.template.spec.containers[0].image}").CombinedOutput()
	if err != nil || string(out) != "3 registry.invalid/hello:1.0" {
		t.Fatalf("Deployment after plan run: %q %v (want 3 ready replicas of the catalogue's image)", out, err)
	}

	// The phase waited for the manifest: every chart's release is deployed
	// and its workloads are up.
	out, err = exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "-n", "armada-site", "get", "act",
		"-o", `jsonpath={range .items[*]}{.metadata.name}={.status.state}/{.status.satisfied} {end}`).CombinedOutput()
	if err != nil || string(out) != "api=deployed/true cache=deployed/true web=deployed/true web-admin=deployed/true " {
		t.Fatalf("ArmadaCharts after plan run: %q %v", out, err)
	}
	out, err = exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "-n", "demo", "get", "statefulset", "site-cache",
		"-o", "jsonpath={.status.readyReplicas}").CombinedOutput()
	if err != nil || string(out) != "3" {
		t.Fatalf("StatefulSet of the cache chart: %q %v (want 3 ready replicas)", out, err)
	}

	// The pivot moved the Cluster API objects, the hosts and the
	// SIPCluster to the target cluster: none is left on the ephemeral one,
	// whose namespaces say where they went (and no longer that they are
	// being moved).
	if out := kc(kubeconfig, "get", "clusters,machines,machinedeployments,metal3machines,bmh,sipclusters", "-A", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("left on the ephemeral cluster after the move:\n%s", out)
	}
	if out := kc(kubeconfig, "get", "namespaces", "metal3", "tenant-1", "-o", `jsonpath={range .items[*]}{.metadata.name}={.metadata.annotations.airshipit\.org/moved-to} {end}`); out != "metal3=target-cluster tenant-1=target-cluster " {
		t.Errorf("ephemeral namespaces after the move: %q, want both marked moved to target-cluster", out)
	}
	if out := kc(kubeconfig, "get", "namespaces", "metal3", "tenant-1", "-o", `jsonpath={range .items[*]}{.metadata.name}={.metadata.annotations.airshipit\.org/moving-to} {end}`); out != "metal3= tenant-1= " {
		t.Errorf("ephemeral namespaces after the move: %q, want neither still marked being moved", out)
	}
	movedCA := kc(targetKubeconfig, "-n", "metal3", "get", "secret", "tenant-1-ca", "-o", `jsonpath={.data.tls\.crt}`)
	if decoded, err := base64.StdEncoding.DecodeString(movedCA); err != nil || !bytes.Equal(decoded, siteCA) {
		t.Errorf("the moved Secret metal3/tenant-1-ca does not hold the site PKI's kubernetes CA (%v)", err)
	}
	// There the managers carry on: every Machine Running again.
	var machines []string
	eventually(t, 2*time.Minute, "Machines Running in the target cluster after the move", func() (string, bool) {
		machines = strings.Fields(kc(targetKubeconfig, "-n", "metal3", "get", "machines", "-o",
			`jsonpath={range .items[*]}{.metadata.name}={.status.phase}/{.status.nodeRef.name}/{.spec.providerID} {end}`))
		for _, m := range machines {
			if !strings.Contains(m, "=Running/") {
				return strings.Join(machines, " "), false
			}
		}
		return strings.Join(machines, " "), len(machines) == 3
	})

	// The moved Metal3Machines read as v1beta2 too, converted by the
	// target's metal3-operator: the same machines, each with its host.
	v1beta2 := kc(targetKubeconfig, "-n", "metal3", "get", "metal3machines.v1beta2.infrastructure.cluster.x-k8s.io", "-o",
		`jsonpath={range .items[*]}{.apiVersion} {.spec.providerID}{"\n"}{end}`)
	if lines := strings.Split(strings.TrimSpace(v1beta2), "\n"); len(lines) != 3 || strings.Count(v1beta2, "infrastructure.cluster.x-k8s.io/v1beta2 metal3://") != 3 {
		t.Errorf("the target's Metal3Machines as v1beta2: %q, want 3 with their providerIDs", v1beta2)
	}

	// The hosts phase waited for metal3-operator: every host registered
	// and inspected through Ironic; the power phase found every host on
	// through its BMC. Then the machines took one control-plane host and
	// the two active workers, on which Ironic wrote the site's image, and
	// which booted it; the other hosts stay available. All of it moved with
	// the hosts.
	// The unclaimed hosts moved without a status: the target cluster's
	// Ironic enrolls, inspects and cleans them again, which takes a while.
	hostStates := map[string]string{}
	eventually(t, 5*time.Minute, "the target cluster's hosts provisioned or available", func() (string, bool) {
		hostStates = map[string]string{}
		for _, line := range strings.Fields(kc(targetKubeconfig, "-n", "metal3", "get", "bmh", "-o",
			`jsonpath={range .items[*]}{.metadata.name}={.metadata.labels.sip\.airshipit\.org/node-type}/{.status.provisioning.state}/{.status.operationalStatus}/{.status.hardware.cpu.count}/{.status.poweredOn}/{.status.provisioning.image.url}/{.spec.consumerRef.name} {end}`)) {
			name, state, _ := strings.Cut(line, "=")
			hostStates[name] = state
		}
		problems := targetHostProblems(hostStates, image)
		return strings.Join(problems, "; "), len(problems) == 0
	})
	// Ironic wrote the image and the config drive to each provisioned
	// host's disk file.
	for name, state := range hostStates {
		if strings.Contains(state, "/provisioned/") {
			expectProvisionedDisk(t, filepath.Join(disks, name, "sda.img"))
		}
	}
	// Every Machine is Running with a Node of the target cluster whose
	// providerID names its host.
	nodes := map[string]string{}
	for _, line := range strings.Fields(kc(targetKubeconfig, "get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name}={.spec.providerID} {end}`)) {
		name, id, _ := strings.Cut(line, "=")
		nodes[name] = id
	}
	if len(machines) != 3 {
		t.Errorf("Machines %v, want the control plane's and two workers", machines)
	}
	for _, m := range machines {
		name, rest, _ := strings.Cut(m, "=")
		parts := strings.Split(rest, "/")
		if len(parts) < 3 || parts[0] != "Running" || parts[1] == "" || !strings.HasPrefix(parts[2], "metal3:") {
			t.Errorf("Machine %s: %s, want Running with a nodeRef and a metal3:// providerID", name, rest)
			continue
		}
		if id, ok := nodes[parts[1]]; !ok || id != strings.Join(parts[2:], "/") {
			t.Errorf("Machine %s: its Node %s in the target cluster has providerID %q (present %v), want %q", name, parts[1], id, ok, strings.Join(parts[2:], "/"))
		}
	}
	if len(nodes) != 4 {
		t.Errorf("target cluster Nodes %v: want its own control-plane Node and the three hosts", nodes)
	}
	// The site's charts in the target cluster, on those Nodes.
	if out := kc(targetKubeconfig, "-n", "armada-site", "get", "act", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.state}/{.status.satisfied} {end}`); out != "api=deployed/true cache=deployed/true web=deployed/true web-admin=deployed/true " {
		t.Errorf("ArmadaCharts in the target cluster: %q", out)
	}
	if out := kc(targetKubeconfig, "-n", "demo", "get", "statefulset", "site-cache", "-o", "jsonpath={.status.readyReplicas}"); out != "3" {
		t.Errorf("the cache chart's StatefulSet in the target cluster: %q ready replicas, want 3", out)
	}
	// Promenade's core components took over the target cluster through its
	// Armada operator: every chart deployed and satisfied, each anchor on
	// the Nodes labelled for it (the control-plane machine's), HAProxy on
	// every Node.
	if m := regexp.MustCompile(`\[core-charts-target\] ArmadaManifest kube-system/promenade: every chart deployed and satisfied (\d+) ms after it was applied`).FindStringSubmatch(r.stderr); m == nil {
		t.Errorf("core-charts-target does not say when its charts were satisfied:\n%s", r.stderr)
	} else {
		t.Logf("core-charts-target: manifest applied to every chart satisfied in %s ms", m[1])
	}
	if out := kc(targetKubeconfig, "-n", "kube-system", "get", "act", "-o", `jsonpath={range .items[*]}{.metadata.name}={.status.state}/{.status.satisfied} {end}`); out !=
		"apiserver=deployed/true calico=deployed/true calico-etcd=deployed/true controller-manager=deployed/true coredns=deployed/true etcd=deployed/true haproxy=deployed/true kube-proxy=deployed/true promenade=deployed/true scheduler=deployed/true " {
		t.Errorf("Promenade's ArmadaCharts in the target cluster: %q", out)
	}
	cpNode := strings.TrimSpace(kc(targetKubeconfig, "get", "nodes", "-l", "kubernetes-etcd=enabled", "-o", "jsonpath={.items[*].metadata.name}"))
	if cpNode == "" || strings.Contains(cpNode, " ") {
		t.Errorf("target Nodes labelled kubernetes-etcd=enabled: %q, want the control-plane machine's", cpNode)
	}
	for _, a := range []string{"etcd", "calico-etcd", "apiserver", "controller-manager", "scheduler", "haproxy"} {
		want := "1 1 " + cpNode
		if a == "haproxy" {
			want = fmt.Sprintf("%d %d", len(nodes), len(nodes))
		}
		got := kc(targetKubeconfig, "-n", "kube-system", "get", "daemonset", a+"-anchor", "-o", "jsonpath={.status.desiredNumberScheduled} {.status.numberReady}")
		if a != "haproxy" {
			got += " " + kc(targetKubeconfig, "-n", "kube-system", "get", "pods", "-l", "application=promenade,component="+a+"-anchor", "-o", "jsonpath={.items[*].spec.nodeName}")
		}
		if got != want {
			t.Errorf("anchor DaemonSet %s-anchor in the target cluster: %q, want %q (desired, ready, nodes)", a, got, want)
		}
	}
	// kube-proxy and Calico's node agent on every Node, Calico's
	// controllers on the control-plane machine's.
	for _, ds := range []string{"kube-proxy", "calico-node"} {
		want := fmt.Sprintf("%d %d", len(nodes), len(nodes))
		if got := kc(targetKubeconfig, "-n", "kube-system", "get", "daemonset", ds, "-o", "jsonpath={.status.desiredNumberScheduled} {.status.numberReady}"); got != want {
			t.Errorf("DaemonSet %s in the target cluster: %q, want %q (desired, ready)", ds, got, want)
		}
	}
	if got := kc(targetKubeconfig, "-n", "kube-system", "get", "deployment", "calico-kube-controllers", "-o", "jsonpath={.status.readyReplicas}"); got != "1" {
		t.Errorf("Deployment calico-kube-controllers in the target cluster: %q ready replicas, want 1", got)
	}
	coreGen := kc(targetKubeconfig, "-n", "kube-system", "get", "armadamanifest", "promenade", "-o", "jsonpath={.metadata.generation}")
	// SIP picked the tenant cluster's hosts among them: three control-plane
	// hosts, one per rack, two workers and a standby; its load balancers
	// run.
	out, err = exec.CommandContext(t.Context(), kubectl, "--kubeconfig", targetKubeconfig, "-n", "metal3", "get", "bmh", "-o",
		`jsonpath={range .items[*]}{.metadata.name}={.metadata.labels.sip\.airshipit\.org/cluster-name}/{.metadata.labels.sip\.airshipit\.org/node-type}/{.metadata.labels.sip\.airshipit\.org/standby} {end}`).CombinedOutput()
	if want := "node01=tenant-1/ControlPlane/ node02=tenant-1/ControlPlane/ node03=tenant-1/ControlPlane/ node04=tenant-1/Worker/ node05=tenant-1/Worker/ node06=tenant-1/Worker/true "; err != nil || string(out) != want {
		t.Fatalf("SIP labels after plan run: %q %v\nwant %q", out, err, want)
	}
	// The SIPCluster moved with its hosts; sip-operator there kept SIP's
	// choice and runs its load balancers.
	eventually(t, time.Minute, "the SIPCluster Ready in the target cluster with its four services (two load balancers, jump host, OIDC)", func() (string, bool) {
		out := kc(targetKubeconfig, "-n", "tenant-1", "get", "sipcluster", "tenant-1", "-o",
			`jsonpath={.status.conditions[?(@.type=="Ready")].reason} {.status.servicesSummary}`)
		return out, out == "ReconciliationSucceeded 4/4"
	})
	ps := airship("phase", "status", "hosts-power-ephemeral", "-o", "json")
	var power executor.Status
	if err := json.Unmarshal([]byte(ps.stdout), &power); ps.code != 0 || err != nil {
		t.Fatalf("phase status hosts-power-ephemeral: code %d (%v)\n%s%s", ps.code, err, ps.stdout, ps.stderr)
	}
	// The hosts are the target cluster's business now.
	if len(power.Objects) != 1 || power.Objects[0].ID != "Namespace metal3" || !power.Objects[0].Ready || power.Objects[0].Message != `moved to cluster "target-cluster"` {
		t.Errorf("phase status hosts-power-ephemeral: %+v, want the namespace reported moved", power.Objects)
	}

	// The whole plan again converges with no change: nothing created or
	// configured, no host or machine touched, nothing moved again; the
	// ephemeral phases leave the moved namespaces alone.
	r = airship("plan", "run", "deploy-local")
	if r.code != 0 {
		t.Fatalf("second plan run: code %d, ending:\n%s\nwhole output:\n%s\n%s", r.code, r.lastErr(), r.stdout, r.stderr)
	}
	if changed := regexp.MustCompile(`\b[1-9][0-9]* (created|configured)`).FindAllString(r.stderr, -1); len(changed) > 0 {
		t.Errorf("second plan run changed objects (%v):\n%s", changed, r.stderr)
	}
	for _, want := range []string{
		"[site-pki] wrote 78 documents", "0 generated, 39 reused",
		`[hosts-ephemeral] 18 objects left alone: namespace "metal3" to cluster "target-cluster"`,
		`[controlplane-ephemeral] 5 objects left alone`,
		`[clusterctl-move] namespace "metal3" of "ephemeral-cluster" was moved to "target-cluster" already`,
		`[clusterctl-move] namespace "tenant-1" of "ephemeral-cluster" was moved to "target-cluster" already`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("second plan run does not say %q:\n%s", want, r.stderr)
		}
	}
	if out := kc(kubeconfig, "get", "clusters,machines,bmh,sipclusters", "-A", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Errorf("the second run put objects back on the ephemeral cluster:\n%s", out)
	}
	// The same documents and PKI give the same core-charts manifest: its
	// generation did not move, so no anchor rolled.
	if gen := kc(targetKubeconfig, "-n", "kube-system", "get", "armadamanifest", "promenade", "-o", "jsonpath={.metadata.generation}"); gen != coreGen {
		t.Errorf("the second run changed Promenade's ArmadaManifest: generation %s, was %s", gen, coreGen)
	}

	// Enabling the groups and charts is the operator's own state (an
	// annotation), not a change to what the phase applied (target_state:
	// uninitialized): right after the run the phase is clean, and a second
	// run changes nothing.
	as := airship("phase", "status", "armada-ephemeral", "-o", "json")
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
	r = airship("phase", "run", "armada-ephemeral")
	if want := fmt.Sprintf("0 created, 0 configured, %d unchanged", len(armada.Objects)); r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("second run of armada-ephemeral should change nothing (%s): code %d\n%s", want, r.code, r.stderr)
	}

	r = airship("phase", "run", "workload-ephemeral")
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
	r = airship("phase", "run", "workload-ephemeral", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stderr, "Widget.example.airshipit.org/airship-demo/hello-widget: pruned") {
		t.Fatalf("dry run: code %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	get := func() (string, error) {
		out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", kubeconfig, "-n", "airship-demo", "get", "widgets", "-o", "name").CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if w, err := get(); err != nil || w != "widget.example.airshipit.org/hello-widget" {
		t.Fatalf("dry run changed the cluster: %q %v", w, err)
	}
	r = airship("phase", "run", "workload-ephemeral")
	if r.code != 0 || !strings.Contains(r.stderr, "1 objects pruned") {
		t.Fatalf("run after dropping the Widget: code %d\n%s", r.code, r.stderr)
	}
	if w, err := get(); err != nil || w != "" {
		t.Fatalf("Widget not pruned: %q %v", w, err)
	}

	// Both clusters of the ClusterMap answer.
	cs := airship("cluster", "status", "-o", "json")
	var clusters []struct {
		Name      string `json:"name"`
		Reachable bool   `json:"reachable"`
	}
	if err := json.Unmarshal([]byte(cs.stdout), &clusters); cs.code != 0 || err != nil {
		t.Fatalf("cluster status: code %d (%v)\n%s%s", cs.code, err, cs.stdout, cs.stderr)
	}
	if len(clusters) != 2 || !clusters[0].Reachable || !clusters[1].Reachable {
		t.Errorf("cluster status %+v, want ephemeral-cluster and target-cluster reachable", clusters)
	}

	st := airship("plan", "status", "deploy-local", "-o", "json")
	if st.code != 0 || !strings.Contains(st.stdout, `"phase": "workload-ephemeral"`) || !strings.Contains(st.stdout, `"ready": 3`) {
		t.Fatalf("plan status: code %d\n%s%s", st.code, st.stdout, st.stderr)
	}
}
