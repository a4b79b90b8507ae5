//go:build e2e

package e2e

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/localironic"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// demoAddrs are the demo's fixed addresses: the emulated BMCs, the target
// cluster's API server, the two Ironics' APIs and image servers (the
// target one's on the real node's bridge).
var demoAddrs = []string{"127.0.0.1:8000", "127.0.0.1:16443", "127.0.0.1:6385", local.NodeGateway + ":6386", "127.0.0.1:6180", local.NodeGateway + ":6181"}

// answers reports whether something accepts TCP connections at addr, one
// of demoAddrs. An address on the nodes' bridge is this host's only while
// the bridge exists: without it a connection would leave the host.
func answers(t *testing.T, addr string) bool {
	t.Helper()
	if strings.HasPrefix(addr, local.NodeGateway+":") {
		if _, err := net.InterfaceByName(local.NodeBridge); err != nil {
			return false
		}
	}
	c, err := (&net.Dialer{Timeout: time.Second}).DialContext(t.Context(), "tcp", addr)
	if err != nil {
		return false
	}
	_ = c.Close() // only probed
	return true
}

// TestDemoAndDemoDown runs the README's demo as `make demo` does after its
// set-up and build steps (hack/demo.sh from the repository root, with a
// fresh HOME and TMPDIR), runs the commands it prints, checks that the
// target cluster's hosts were provisioned through Ironic (each one's disk
// file holds the site's image and a config drive with its user-data) and
// left alone by the pivot, and then runs `make demo-down`'s script: every
// process gone, the two Ironics included, the directories the demo wrote
// removed, and nothing else. It uses the demo's fixed addresses
// (demoAddrs).
func TestDemoAndDemoDown(t *testing.T) {
	requireBinaries(t)
	for _, bin := range []string{localironic.DefaultIronicBinary, localironic.DefaultDBSyncBinary} {
		if _, err := os.Stat(bin); err != nil {
			testtool.Missing(t, "Ironic is not installed (%s is missing): run `bash hack/setup.sh` as root", bin)
		}
	}
	// The target cluster's real node (root, and the host's one real-node
	// cluster while the demo runs).
	if os.Geteuid() != 0 {
		testtool.Missing(t, "the demo's real node needs root")
	}
	if missing := local.MissingNodeBinaries(local.DefaultBinDir()); len(missing) > 0 {
		testtool.Missing(t, "%s missing from %s; %s", strings.Join(missing, ", "), local.DefaultBinDir(), local.BuildHint)
	}
	unlock, err := local.LockRealNodeHost(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range demoAddrs {
		if answers(t, addr) {
			t.Fatalf("%s is in use; the demo needs it (is a demo running? make demo-down stops it)", addr)
		}
	}
	home, tmp := t.TempDir(), t.TempDir()
	// The Go caches stay the user's: a fresh HOME must not rebuild everything.
	var goEnv []string
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.CommandContext(t.Context(), "go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		goEnv = append(goEnv, v+"="+strings.TrimSpace(string(out)))
	}
	env := append(goEnv, "HOME="+home, "TMPDIR="+tmp, "AIRSHIP_TESTBIN_DIR="+local.DefaultBinDir(), "AIRSHIPCONFIG=", "KUBECONFIG=", "AIRSHIP_LOCAL_STATE_DIR=")
	// What the demo must leave alone.
	keep := []string{filepath.Join(home, ".airship", "config"), filepath.Join(tmp, "other", "file")}
	for _, k := range keep {
		if err := os.MkdirAll(filepath.Dir(k), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(k, []byte("mine\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// shell runs a script from the repository root; stdout carries its
	// whole output.
	shell := func(script string) result {
		t.Helper()
		return runIn(t, root, env, "bash", "-c", "exec 2>&1\n"+script)
	}
	t.Cleanup(func() {
		if r := shell("bash hack/demo-down.sh"); r.code != 0 {
			t.Errorf("demo-down at cleanup: %s", r.stdout)
		}
	})
	if r := shell("make build images"); r.code != 0 {
		t.Fatalf("make build images: %s", r.stdout)
	}
	demo := shell("bash hack/demo.sh")
	if demo.code != 0 {
		t.Fatalf("demo: exit %d\n%s", demo.code, demo.stdout)
	}
	planPhases := []string{"site-pki", "initinfra-ephemeral", "workload-ephemeral", "armada-ephemeral", "clusterctl-init-ephemeral", "hosts-ephemeral",
		"hosts-power-ephemeral", "sip-ephemeral", "controlplane-ephemeral", "workers-ephemeral", "core-charts-target", "initinfra-target", "clusterctl-init-target",
		"clusterctl-move", "clusterctl-move-sip", "sip-target", "workload-target"}
	for _, p := range planPhases {
		if !regexp.MustCompile(`(?m)^` + p + ` +succeeded`).MatchString(demo.stdout) {
			t.Errorf("the demo's summary lacks %s succeeded", p)
		}
	}
	// The commands the demo prints, as printed.
	var printed []string
	for _, line := range strings.Split(demo.stdout[strings.Index(demo.stdout, "Look at them with:"):], "\n")[1:] {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		printed = append(printed, strings.TrimSpace(line))
	}
	if len(printed) != 9 {
		t.Fatalf("the demo printed %d lines of commands to look with, want 9:\n%s", len(printed), demo.stdout)
	}
	looked := shell(strings.Join(printed, "\n"))
	if looked.code != 0 {
		t.Fatalf("the printed commands failed (exit %d):\n%s\n%s", looked.code, strings.Join(printed, "\n"), looked.stdout)
	}
	// Among them the plan again, nothing changed since: the initinfra
	// phases send none of their objects.
	for _, p := range []string{"initinfra-ephemeral", "initinfra-target"} {
		if !regexp.MustCompile(`\[` + p + `\] applying 0 objects \(\d+ more unchanged since the last apply, not sent\)`).MatchString(looked.stdout) {
			t.Errorf("the plan run again sent objects of %s:\n%s", p, looked.stdout)
		}
	}
	// After the pivot the target cluster holds its machines, hosts and
	// SIPCluster.
	for _, want := range []string{"workload-target", "machine.cluster.x-k8s.io/tenant-1-cp-0", "baremetalhost.metal3.io/node01",
		"sipcluster.airship.airshipit.org/tenant-1", "armadachart.armada.airshipit.org/web",
		// Promenade's core components, from core-charts-target.
		"armadachart.armada.airshipit.org/etcd", "armadachart.armada.airshipit.org/coredns",
		"armadachart.armada.airshipit.org/kube-proxy", "armadachart.armada.airshipit.org/calico",
		// The real node's pods.
		"armada-system   armada-operator-", "loadbalancer-controlplane-tenant-1-0-"} {
		if !strings.Contains(looked.stdout, want) {
			t.Errorf("the printed commands' output lacks %q:\n%s", want, looked.stdout)
		}
	}

	logs := filepath.Join(tmp, "airship-demo")
	provisioned := provisionedHosts(t, shell, filepath.Join(home, ".airship", "local-target", "kubeconfig"))
	// The demo says it checked the pivot, one line per provisioned host.
	for host, consumer := range provisioned {
		line := regexp.MustCompile(`(?m)^` + host + ` \(` + regexp.QuoteMeta(consumer) + `\): target Ironic node metal3~` + host + ` active, power on; booted its disk once, nothing sent to it since$`)
		if !line.MatchString(demo.stdout) {
			t.Errorf("the demo does not report %s (%s) adopted by the target Ironic and untouched", host, consumer)
		}
	}
	expectUntouchedSinceBoot(t, filepath.Join(logs, "redfish-emulator.log"), provisioned)
	// The target cluster's operators and its SIPCluster's control-plane
	// load balancer ran as real pods on its real node, and did the work
	// above: the charts, the adoption, the SIPCluster.
	expectRealNodePods(t, shell, filepath.Join(home, ".airship", "local-target", "kubeconfig"))
	expectV1beta2(t, shell, filepath.Join(home, ".airship", "local-target", "kubeconfig"), len(provisioned))
	if !strings.Contains(demo.stdout, "airship-node-1") || !regexp.MustCompile(`(?m)^armada-system +armada-operator-\S+ +1/1 +Running +0 `).MatchString(demo.stdout) {
		t.Errorf("the demo does not show the operators' pods on the real node:\n%s", demo.stdout)
	}
	for host := range provisioned {
		expectProvisionedDisk(t, filepath.Join(logs, "disks", host, "sda.img"))
	}
	// The site's dashboard, which the demo started before its plan: every
	// phase in the state the plan left it, every page in a browser, and
	// actions refused there, taken through one with --allow-actions.
	dash := dashboardURL(t, demo.stdout)
	expectPlanOnDashboard(t, dash, planPhases)
	expectDashboardLive(t, root, append(slices.Clone(env), "AIRSHIPCONFIG="+filepath.Join(root, "examples", "site", "airship-config.yaml"),
		"AIRSHIP_PHASE_STATE_DIR="+filepath.Join(logs, "phase-state"), "PROMENADE_OUTPUT_DIR="+filepath.Join(logs, "promenade"),
		"AIRSHIP_RENDER_CACHE_DIR="+filepath.Join(logs, "render-cache")), dash)
	// The Ironics' processes, to be gone after demo-down.
	var ironicPIDs []int
	for _, dir := range []string{"ironic", "ironic-target"} {
		st, err := localironic.GetStatus(filepath.Join(logs, dir))
		if err != nil || !st.Running {
			t.Fatalf("the demo's Ironic in %s is not running: %+v %v", dir, st, err)
		}
		for _, p := range st.Processes {
			ironicPIDs = append(ironicPIDs, p.PID)
		}
	}

	// The site goes on reconciling after the demo returned: a provisioned
	// host powered off behind the operators' back is powered on again
	// (spec.online), by the target cluster through its Ironic.
	for host, consumer := range provisioned {
		if consumer == "tenant-1-cp-0" {
			expectPoweredOnAgain(t, host)
			expectLoadBalancerFollows(t, shell, filepath.Join(home, ".airship", "local-target", "kubeconfig"), host)
		}
	}

	down := shell("bash hack/demo-down.sh")
	if down.code != 0 {
		t.Fatalf("demo-down: exit %d\n%s", down.code, down.stdout)
	}
	for _, gone := range []string{filepath.Join(home, ".airship", "local"), filepath.Join(home, ".airship", "local-target"), filepath.Join(tmp, "airship-demo")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still there after demo-down (%v)", gone, err)
		}
	}
	for _, k := range keep {
		if data, err := os.ReadFile(k); err != nil || string(data) != "mine\n" {
			t.Errorf("demo-down touched %s: %q %v", k, data, err)
		}
	}
	// ironic local down and cluster local down return once the processes
	// exited.
	for _, pid := range ironicPIDs {
		if !processGone(pid) {
			t.Errorf("Ironic's process %d still runs after demo-down", pid)
		}
	}
	for _, addr := range append(slices.Clone(demoAddrs), strings.TrimSuffix(strings.TrimPrefix(dash, "http://"), "/")) {
		if answers(t, addr) {
			t.Errorf("%s still answers after demo-down", addr)
		}
	}
	if _, err := net.InterfaceByName(local.NodeBridge); err == nil {
		t.Errorf("the real node's bridge %s is still there after demo-down", local.NodeBridge)
	}
}

// expectPoweredOnAgain forces the demo's emulated host off through its BMC
// (examples/site/function/hosts/emulator.yaml: 127.0.0.1:8000, its
// example credentials) and waits for metal3-operator to power it on again.
func expectPoweredOnAgain(t *testing.T, host string) {
	t.Helper()
	system := "http://127.0.0.1:8000/redfish/v1/Systems/" + host
	// Ironic reads the power off within its 10 s sync, metal3-operator
	// within its 10 s poll, then has Ironic power the host on.
	call := func(method, url, body string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("admin", "example-bmc-password")
		req.Header.Set("Content-Type", "application/json")
		resp, err := testenv.HTTPClient().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer func() { _ = resp.Body.Close() }()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(data)
	}
	if code, body := call(http.MethodPost, system+"/Actions/ComputerSystem.Reset", `{"ResetType": "ForceOff"}`); code/100 != 2 {
		t.Fatalf("forcing %s off after the demo: HTTP %d %s (is the emulator still running?)", host, code, body)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, body := call(http.MethodGet, system, "")
		if strings.Contains(body, `"PowerState":"On"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not powered on again within 2 minutes of the demo's end: %s", host, body)
		}
		time.Sleep(time.Second)
	}
}

// realNodePods are the pods the demo runs on the target cluster's real
// node, by namespace and the label that picks each: the three operators
// from charts/airship-operators and the tenant cluster's control-plane
// load balancer (sip-target), with the image each must run.
var realNodePods = []struct{ namespace, selector, image string }{
	{"armada-system", "app.kubernetes.io/name=armada-operator", "localhost/airship/armada-operator@sha256:"},
	{"metal3-system", "app.kubernetes.io/name=metal3-operator", "localhost/airship/metal3-operator@sha256:"},
	{"sip-system", "app.kubernetes.io/name=sip-operator", "localhost/airship/sip-operator@sha256:"},
	{"tenant-1", "sip.airshipit.org/service=loadbalancer-controlplane-tenant-1-0", "localhost/airship/haproxy:latest"},
}

// expectRealNodePods checks the target cluster's real node after the
// demo: Ready and tainted, running exactly realNodePods (no site chart's
// pod, no Promenade anchor), each Running and ready with no restart, in
// its own network namespace, as the kubelet enforced the chart's security
// settings (non-root, read-only root); the operators never refused by the
// API server (their RBAC is enough); and the load balancer's HAProxy
// accepting connections on its node port at the node's address.
func expectRealNodePods(t *testing.T, shell func(string) result, kubeconfig string) {
	t.Helper()
	node := local.RealNodeName(0)
	kubectl := "KUBECONFIG=" + kubeconfig + " kubectl "
	r := shell(kubectl + "get node " + node + " -o json")
	var n corev1.Node
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &n) != nil {
		t.Fatalf("the target cluster's real node %s: %s", node, r.stdout)
	}
	ready := false
	for _, c := range n.Status.Conditions {
		ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
	}
	if !ready || len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != local.RealNodeLabel || n.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("real node %s: ready %v, taints %+v: want Ready, tainted %s NoSchedule", node, ready, n.Spec.Taints, local.RealNodeLabel)
	}
	r = shell(kubectl + "get pods -A -o json --field-selector spec.nodeName=" + node)
	var pods corev1.PodList
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &pods) != nil {
		t.Fatalf("the real node's pods: %s", r.stdout)
	}
	var nodeIP string
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	found := map[int]bool{}
	for _, p := range pods.Items {
		i := slices.IndexFunc(realNodePods, func(w struct{ namespace, selector, image string }) bool {
			k, v, _ := strings.Cut(w.selector, "=")
			return p.Namespace == w.namespace && p.Labels[k] == v
		})
		if i < 0 {
			t.Errorf("pod %s/%s runs on the real node; only the operators and the control-plane load balancer may", p.Namespace, p.Name)
			continue
		}
		if found[i] {
			t.Errorf("a second pod %s/%s of %s on the real node", p.Namespace, p.Name, realNodePods[i].selector)
		}
		found[i] = true
		sc := p.Spec.SecurityContext
		switch {
		case p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1:
			t.Errorf("pod %s/%s: %s, %d containers", p.Namespace, p.Name, p.Status.Phase, len(p.Status.ContainerStatuses))
		case !p.Status.ContainerStatuses[0].Ready || p.Status.ContainerStatuses[0].RestartCount != 0:
			t.Errorf("pod %s/%s: ready %v, %d restarts: want ready and none", p.Namespace, p.Name, p.Status.ContainerStatuses[0].Ready, p.Status.ContainerStatuses[0].RestartCount)
		case !strings.HasPrefix(p.Spec.Containers[0].Image, realNodePods[i].image):
			t.Errorf("pod %s/%s runs %s, want %s", p.Namespace, p.Name, p.Spec.Containers[0].Image, realNodePods[i].image)
		case p.Spec.HostNetwork || p.Status.PodIP == "" || p.Status.PodIP == p.Status.HostIP:
			t.Errorf("pod %s/%s: hostNetwork %v, IP %s (node %s): want its own network namespace", p.Namespace, p.Name, p.Spec.HostNetwork, p.Status.PodIP, p.Status.HostIP)
		case realNodePods[i].namespace != "tenant-1" && (sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot):
			t.Errorf("pod %s/%s is not runAsNonRoot", p.Namespace, p.Name)
		}
		for _, c := range p.Spec.Containers {
			if realNodePods[i].namespace != "tenant-1" && (c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem) {
				t.Errorf("pod %s/%s container %s: root filesystem not read-only", p.Namespace, p.Name, c.Name)
			}
		}
		// The user the runtime ran the container's process as: never root.
		for _, cs := range p.Status.ContainerStatuses {
			if cs.User == nil || cs.User.Linux == nil || cs.User.Linux.UID == 0 {
				t.Errorf("pod %s/%s container %s: runs as %+v, want a user other than root", p.Namespace, p.Name, cs.Name, cs.User)
			}
		}
		if realNodePods[i].namespace != "tenant-1" {
			logs := shell(kubectl + "-n " + p.Namespace + " logs " + p.Name)
			if strings.Contains(logs.stdout, "forbidden") {
				t.Errorf("pod %s/%s was refused by the API server (the RBAC of config/ is not enough):\n%s", p.Namespace, p.Name, logs.stdout)
			}
		}
	}
	for i, w := range realNodePods {
		if !found[i] {
			t.Errorf("no pod %s in %s on the real node", w.selector, w.namespace)
		}
	}
	// The tenant cluster's control-plane load balancer (node port 30443 in
	// examples/site/function/tenant-cluster) answers on the real node.
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(t.Context(), "tcp", net.JoinHostPort(nodeIP, "30443"))
	if err != nil {
		t.Errorf("the control-plane load balancer's node port on %s: %v", nodeIP, err)
		return
	}
	_ = c.Close() // only probed
}

// expectLoadBalancerFollows changes the site after the demo: the target
// cluster's control-plane host is powered off until further notice (a
// reboot.metal3.io/<key> annotation, which the metal3-operator pod carries
// out through the target Ironic; spec.online is Cluster API's), and SIP's
// HAProxy, a pod on the real node, marks its backend down; back online, the
// backend is up again and the target cluster answers through the load
// balancer (the emulator forwards a booted control-plane host's API server
// port to the target cluster's API server).
func expectLoadBalancerFollows(t *testing.T, shell func(string) result, kubeconfig, host string) {
	t.Helper()
	kubectl := "KUBECONFIG=" + kubeconfig + " kubectl "
	lbLog := func() string {
		return shell(kubectl + "-n tenant-1 logs deploy/loadbalancer-controlplane-tenant-1-0").stdout
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s within 3 minutes; the load balancer's log:\n%s", what, lbLog())
			}
			time.Sleep(2 * time.Second)
		}
	}
	down := "Server kube-apiserver/" + host + " is DOWN"
	up := "Server kube-apiserver/" + host + " is UP"
	downs, ups := strings.Count(lbLog(), down), strings.Count(lbLog(), up)
	annotate := func(arg string) {
		t.Helper()
		if r := shell(kubectl + "-n metal3 annotate bmh " + host + " " + arg); r.code != 0 {
			t.Fatalf("kubectl annotate bmh %s %s: %s", host, arg, r.stdout)
		}
	}
	annotate("reboot.metal3.io/e2e=")
	waitFor("HAProxy did not take "+host+" out of rotation once it was powered off", func() bool { return strings.Count(lbLog(), down) > downs })
	annotate("reboot.metal3.io/e2e-")
	waitFor("HAProxy did not take "+host+" back once it was powered on", func() bool { return strings.Count(lbLog(), up) > ups })
	ip := shell(kubectl + `get node airship-node-1 -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}'`).stdout
	r := shell(kubectl + "--server https://" + strings.TrimSpace(ip) + ":30443 --tls-server-name kubernetes --request-timeout 10s get nodes " + local.RealNodeName(0))
	if r.code != 0 || !strings.Contains(r.stdout, local.RealNodeName(0)) {
		t.Errorf("the target cluster through the load balancer after %s came back: %s", host, r.stdout)
	}
}

// expectV1beta2: the target cluster's Metal3Machines read as v1beta2,
// converted by its metal3-operator pod's webhook (the API server calls it
// through its Service), one per provisioned host; and kubectl's default
// version of the kind is v1beta2.
func expectV1beta2(t *testing.T, shell func(string) result, kubeconfig string, want int) {
	t.Helper()
	kubectl := "KUBECONFIG=" + kubeconfig + " kubectl "
	r := shell(kubectl + `-n metal3 get metal3machines.v1beta2.infrastructure.cluster.x-k8s.io -o jsonpath='{range .items[*]}{.apiVersion}={.spec.providerID} {end}'`)
	if r.code != 0 || strings.Count(r.stdout, "infrastructure.cluster.x-k8s.io/v1beta2=metal3://") != want {
		t.Errorf("the target cluster's Metal3Machines as v1beta2: %s, want %d with their providerIDs", r.stdout, want)
	}
	r = shell(kubectl + `-n metal3 get metal3machines -o jsonpath='{.items[0].apiVersion}'`)
	if r.code != 0 || r.stdout != "infrastructure.cluster.x-k8s.io/v1beta2" {
		t.Errorf("kubectl's default version of Metal3Machine on the target cluster: %s, want v1beta2", r.stdout)
	}
}

// provisionedHosts lists the target cluster's provisioned BareMetalHosts
// with the Machine's name consuming each; the demo provisions three (the
// control plane's and two workers').
func provisionedHosts(t *testing.T, shell func(string) result, kubeconfig string) map[string]string {
	t.Helper()
	r := shell("KUBECONFIG=" + kubeconfig + ` kubectl -n metal3 get bmh -o jsonpath='{range .items[*]}{.metadata.name}={.spec.consumerRef.name}={.status.provisioning.state} {end}'`)
	if r.code != 0 {
		t.Fatalf("listing the target cluster's hosts: %s", r.stdout)
	}
	hosts := map[string]string{}
	for _, f := range strings.Fields(r.stdout) {
		parts := strings.Split(f, "=")
		if len(parts) == 3 && parts[1] != "" {
			if parts[2] != "provisioned" {
				t.Errorf("host %s, claimed by %s, is %s in the target cluster, want provisioned", parts[0], parts[1], parts[2])
			}
			hosts[parts[0]] = parts[1]
		}
	}
	if len(hosts) != 3 {
		t.Fatalf("claimed hosts in the target cluster: %v, want three (%s)", hosts, r.stdout)
	}
	return hosts
}

// expectUntouchedSinceBoot reads the emulator's log: each provisioned host
// was deployed by the ephemeral cluster's Ironic (its deploy ISO, on the
// image server at 6180), booted its disk exactly once, and got no power,
// boot override or media request after that boot; no media of the target
// cluster's Ironic (6181) ever reached it. A reprovision or a power cycle
// by either cluster after the deploy, the pivot included, fails here.
func expectUntouchedSinceBoot(t *testing.T, logFile string, hosts map[string]string) {
	t.Helper()
	data, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	touch := regexp.MustCompile(`^(power on|power off|media inserted|media ejected|boot override)`)
	for host := range hosts {
		prefix := "redfish-emulator: " + host + ": "
		var boots, deployISO int
		var since []string
		for _, line := range strings.Split(string(data), "\n") {
			rest, ok := strings.CutPrefix(line, prefix)
			switch {
			case !ok:
			case strings.HasPrefix(rest, "booted from Hdd"):
				boots++
			case strings.HasPrefix(rest, "media inserted: http://"+local.NodeGateway+":6181/"):
				t.Errorf("%s got the target Ironic's media: %s", host, line)
			case strings.HasPrefix(rest, "media inserted: http://127.0.0.1:6180/deploy.iso"):
				deployISO++
			case boots > 0 && touch.MatchString(rest):
				since = append(since, rest)
			}
		}
		if boots != 1 || len(since) > 0 || deployISO == 0 {
			t.Errorf("%s: booted its disk %d times (want 1), deploy ISO of the ephemeral Ironic inserted %d times (want some), requests after its boot: %q", host, boots, deployISO, since)
		}
	}
}

// expectProvisionedDisk checks a provisioned host's disk file: the site's
// image (hack/site-image: a GPT whose partition 1 starts with its text at
// sector 2048) and a config drive holding Cluster API's kubeadm user-data.
func expectProvisionedDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Errorf("the provisioned host's disk: %v", err)
		return
	}
	defer func() { _ = f.Close() }() // read only
	head := make([]byte, 2048*512+64)
	if _, err := f.ReadAt(head, 0); err != nil {
		t.Errorf("reading %s: %v", path, err)
		return
	}
	if string(head[512:520]) != "EFI PART" || !strings.HasPrefix(string(head[2048*512:]), "airship example site node image") {
		t.Errorf("%s does not hold the site's image (GPT header %q, partition 1 starting %q)", path, head[512:520], head[2048*512:2048*512+32])
	}
	d, err := configdrive.ReadFile(path)
	if err != nil {
		t.Errorf("%s holds no config drive: %v", path, err)
		return
	}
	if !strings.Contains(string(d.UserData), "kubeadm") {
		t.Errorf("the config drive of %s holds no kubeadm user-data (%d bytes)", path, len(d.UserData))
	}
}
