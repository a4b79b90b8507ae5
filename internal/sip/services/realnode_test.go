package services

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// The real node's bridge and node (internal/cluster/local): the test's API
// server stand-ins get two more addresses on the bridge, which pods reach
// directly.
const (
	realNodeBridge = "airship0"
	realNodeName   = "airship-node-1"
	realNodeIP     = "10.88.0.11"
)

// TestRealNodeLB runs SIP's control-plane load balancer as
// Build renders it (objects, configuration and production check timings
// unchanged; only the image is the one `make images` builds) on a real
// kubelet node, in front of two API server stand-ins on the host: HTTPS on
// 10.88.0.200:6443 and 10.88.0.201:6443, ready on /readyz, each answering
// its name. The objects are owned by a real SIPCluster, as SIP applies
// them. The pod must run as SIP asks (uid 99, no capabilities, read-only
// root: checked on the container's processes, not only in the spec),
// connections through the Service (its ClusterIP and its node port) must
// reach both servers, and once one stops and HAProxy's check marks it
// down, every connection must land on the other. (The name is short: the
// cluster's state, containerd's sockets among it, lives under the test's
// temporary directory, and a unix socket's path is at most 104 bytes.)
func TestRealNodeLB(t *testing.T) {
	start := time.Now()
	imagesDir := testenv.BuildImages(t, []string{"pause"}, true)
	haproxyImage := "localhost/airship/haproxy@" + imageDigest(t, imagesDir, "haproxy")
	t.Logf("images built in %s: %s", time.Since(start).Round(time.Second), haproxyImage)

	start = time.Now()
	state := testenv.RealNodeCluster(t, imagesDir)
	t.Logf("cluster with a real node up in %s (the wait for the host's lock included)", time.Since(start).Round(time.Second))

	hosts := []Host{
		{Name: "node01", Role: sipv1.RoleControlPlane, IPs: map[string]string{"oam-ipv4": "10.88.0.200"}},
		{Name: "node02", Role: sipv1.RoleControlPlane, IPs: map[string]string{"oam-ipv4": "10.88.0.201"}},
	}
	// Registered after the cluster's cleanup, so it runs before it: the
	// cluster's Down finds the bridge as it made it.
	for _, h := range hosts {
		addBridgeAddress(t, h.IPs["oam-ipv4"])
	}
	// A client of a load-balanced API server verifies the server's name,
	// not the address it dialled.
	const serverName = "api.tenant-c.test"
	cert, pool := selfSigned(t, serverName)
	backends, _ := startBackends(t, hosts, cert, apiServerPort)

	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", state.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, sipv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	cluster := createSIPCluster(ctx, t, c, haproxyImage)
	in := Inputs{Cluster: cluster, Hosts: hosts}
	objs := build(t, in).Objects
	name := serviceName(TypeLoadBalancerControlPlane, cluster.Name, 0)
	if cfg := find[*corev1.ConfigMap](t, objs, name).Data[haproxyConfigKey]; !strings.Contains(cfg, "server node01 10.88.0.200:6443") || !strings.Contains(cfg, "server node02 10.88.0.201:6443") {
		t.Fatalf("the configuration does not name both stand-ins:\n%s", cfg)
	}
	start = time.Now()
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	logs := func(ctx context.Context) string {
		pods, err := cs.CoreV1().Pods(cluster.Namespace).List(ctx, metav1.ListOptions{LabelSelector: ServiceLabel + "=" + name})
		if err != nil || len(pods.Items) == 0 {
			return fmt.Sprintf("(no pod: %v)", err)
		}
		out, err := cs.CoreV1().Pods(cluster.Namespace).GetLogs(pods.Items[0].Name, &corev1.PodLogOptions{Container: "haproxy"}).DoRaw(ctx)
		if err != nil {
			return fmt.Sprintf("(logs: %v)", err)
		}
		return string(out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			// The test's context is done by now.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			t.Logf("haproxy's log:\n%s", logs(ctx))
		}
	})

	pod := waitAvailable(ctx, t, c, cluster.Namespace, name)
	t.Logf("load balancer Available in %s; pod %s on %s at %s", time.Since(start).Round(time.Second), pod.Name, pod.Spec.NodeName, pod.Status.PodIP)
	if pod.Spec.NodeName != realNodeName || pod.Status.Phase != corev1.PodRunning {
		t.Fatalf("pod %s: node %q phase %s, want Running on %s", pod.Name, pod.Spec.NodeName, pod.Status.Phase, realNodeName)
	}
	st := pod.Status.ContainerStatuses
	if len(st) != 1 || !st[0].Ready || st[0].RestartCount != 0 || st[0].State.Running == nil {
		t.Fatalf("pod %s: container statuses %+v, want one running and ready, never restarted", pod.Name, st)
	}
	checkContainerProcesses(t, strings.TrimPrefix(st[0].ContainerID, "containerd://"))

	var svc corev1.Service
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, &svc); err != nil {
		t.Fatal(err)
	}
	tr := httplimit.NewTransport(httplimit.ClientOptions{Timeout: 5 * time.Second,
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12}})
	// One TCP connection per request: HAProxy balances connections.
	tr.DisableKeepAlives = true
	hc := &http.Client{Timeout: 5 * time.Second, Transport: httplimit.LimitResponses(tr, 1<<10)}
	ask := func(addr string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/", nil)
		if err != nil {
			return "", err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return "", err
		}
		defer func() { _ = resp.Body.Close() }() // only read: closing cannot lose data
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}

	// The host reaches the ClusterIP through kube-proxy's DNAT in the
	// OUTPUT chain, and the node port on the node's address, which is the
	// host's own: the two ways in SIP offers, both through the Service.
	entries := []struct{ name, addr string }{
		{"ClusterIP", net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(apiServerPort))},
		{"NodePort", net.JoinHostPort(realNodeIP, strconv.Itoa(int(svc.Spec.Ports[0].NodePort)))},
	}
	for _, e := range entries {
		t.Run(e.name, func(t *testing.T) {
			// kube-proxy writes the Service's rules once the endpoint is
			// ready; until then a connection may fail.
			var last error
			if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
				_, last = ask(e.addr)
				return last == nil, nil
			}); err != nil {
				t.Fatalf("no answer through %s %s: %v (last: %v)", e.name, e.addr, err, last)
			}
			seen := map[string]int{}
			for range 10 {
				got, err := ask(e.addr)
				if err != nil {
					t.Fatalf("a connection through %s %s failed with both servers up: %v", e.name, e.addr, err)
				}
				seen[got]++
			}
			if seen["node01"] == 0 || seen["node02"] == 0 || len(seen) != 2 {
				t.Errorf("10 connections through %s %s reached %v, want node01 and node02", e.name, e.addr, seen)
			}
		})
	}
	if t.Failed() {
		return
	}

	// Stop node01: its address refuses connections from now on.
	stopped := time.Now()
	if err := backends[0].srv.Close(); err != nil {
		t.Fatal(err)
	}
	var downAt int // the length of the log when it shows node01 down
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		l := logs(ctx)
		downAt = len(l)
		return strings.Contains(l, "kube-apiserver/node01 is DOWN"), nil
	}); err != nil {
		t.Fatalf("HAProxy did not log node01 down within a minute of its stop: %v", err)
	}
	t.Logf("HAProxy marked node01 down %s after it stopped", time.Since(stopped).Round(100*time.Millisecond))
	const n = 12
	for _, e := range entries {
		var got []string
		for range n {
			name, err := ask(e.addr)
			if err != nil {
				t.Fatalf("a connection through %s failed with node01 marked down: %v", e.name, err)
			}
			got = append(got, name)
		}
		if slices.ContainsFunc(got, func(s string) bool { return s != "node02" }) {
			t.Errorf("after node01 went down, %d connections through %s landed on %v, want node02 only", n, e.name, got)
		}
	}
	// Answered is not enough: "option redispatch" hides a refused
	// connection behind a retry on the other server. HAProxy's log of each
	// connection (option tcplog, written when it closes) names the server
	// and the retries: none may have tried node01 first.
	var sessions [][]string
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		l := logs(ctx)
		if len(l) < downAt {
			return false, fmt.Errorf("haproxy's log shrank: the container restarted")
		}
		sessions = tcpLogSessions(l[downAt:])
		return len(sessions) >= n*len(entries), nil
	}); err != nil {
		t.Fatalf("HAProxy logged %d connections after marking node01 down, want %d: %v", len(sessions), n*len(entries), err)
	}
	t.Logf("HAProxy logged %d connections after marking node01 down", len(sessions))
	for _, s := range sessions {
		if s[0] != "kube-apiserver/node02" || s[1] != "0" {
			t.Errorf("after node01 went down, a connection went to %s with %s retries, want node02 with none", s[0], s[1])
		}
	}
	if l := logs(ctx); strings.Contains(l, "node02 is DOWN") {
		t.Errorf("the healthy server was marked down:\n%s", l)
	}
	// Still the first container: no restart while its server went away.
	var after corev1.Pod
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), &after); err != nil {
		t.Fatal(err)
	}
	if st := after.Status.ContainerStatuses; len(st) != 1 || st[0].RestartCount != 0 || !st[0].Ready {
		t.Errorf("pod %s after the failover: %+v, want ready and never restarted", pod.Name, st)
	}
}

// tcpLogSessions are the backend/server and the retries (0, or +N when
// redispatched) of each connection log line of the kube-apiserver frontend
// in log. A line of option tcplog reads: client [date] frontend
// backend/server Tw/Tc/Tt bytes termination actconn/feconn/beconn/srvconn/retries
// srvqueue/backlogqueue.
func tcpLogSessions(log string) [][]string {
	var out [][]string
	for _, line := range strings.Split(log, "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || f[2] != "kube-apiserver" || !strings.HasPrefix(f[3], "kube-apiserver/") {
			continue
		}
		conns := strings.Split(f[7], "/")
		if len(conns) != 5 {
			continue
		}
		out = append(out, []string{f[3], conns[4]})
	}
	return out
}

// imageDigest is the digest of localhost/airship/<name> in the
// kustomization.yaml BuildImages wrote.
func imageDigest(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct{ Name, Digest string } `json:"images"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	for _, img := range k.Images {
		if img.Name == "localhost/airship/"+name && strings.HasPrefix(img.Digest, "sha256:") {
			return img.Digest
		}
	}
	t.Fatalf("%s/kustomization.yaml names no digest of %s:\n%s", dir, name, data)
	return ""
}

// addBridgeAddress gives the host ip on the real node's bridge until the
// test ends.
func addBridgeAddress(t *testing.T, ip string) {
	t.Helper()
	cidr := ip + "/32"
	if out, err := exec.CommandContext(t.Context(), "ip", "addr", "add", cidr, "dev", realNodeBridge).CombinedOutput(); err != nil {
		t.Fatalf("ip addr add %s dev %s: %v: %s", cidr, realNodeBridge, err, out)
	}
	t.Cleanup(func() {
		// t.Context() is done by now.
		if out, err := exec.Command("ip", "addr", "del", cidr, "dev", realNodeBridge).CombinedOutput(); err != nil { //nolint:noctx // a local netlink change that cannot hang
			t.Errorf("ip addr del %s dev %s: %v: %s", cidr, realNodeBridge, err, out)
		}
	})
}

// createSIPCluster installs SIP's CRD and creates the SIPCluster of
// testdata/minimal with image, so that the load balancer's objects have a
// real owner (the garbage collector would delete them otherwise).
func createSIPCluster(ctx context.Context, t *testing.T, c client.Client, image string) *sipv1.SIPCluster {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "sip", "crd", "bases", "airship.airshipit.org_sipclusters.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &crd); err != nil {
		t.Fatalf("creating CRD %s: %v", crd.Name, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(&crd), &crd); err != nil {
			return false, err
		}
		return slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
			return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		}), nil
	}); err != nil {
		t.Fatalf("CRD %s not established: %v", crd.Name, err)
	}

	tmpl := loadInputs(t, "minimal").Cluster
	cluster := &sipv1.SIPCluster{
		ObjectMeta: metav1.ObjectMeta{Name: tmpl.Name, Namespace: tmpl.Namespace},
		Spec:       *tmpl.Spec.DeepCopy(),
	}
	cluster.Spec.Nodes = map[sipv1.BMHRole]sipv1.NodeSet{sipv1.RoleControlPlane: {
		LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"airshipit.org/k8s-role": "control-plane"}},
	}}
	cluster.Spec.Services.LoadBalancerControlPlane[0].Image = image
	// An established CRD may take a moment to be served.
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = c.Create(ctx, cluster)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("creating SIPCluster %s/%s: %v (last: %v)", cluster.Namespace, cluster.Name, err, last)
	}
	return cluster
}

// waitAvailable waits for Deployment ns/name to be Available with its one
// pod ready, and returns the pod.
func waitAvailable(ctx context.Context, t *testing.T, c client.Client, ns, name string) *corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	var last string
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		var dep appsv1.Deployment
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &dep); err != nil {
			return false, err
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{ServiceLabel: name}); err != nil {
			return false, err
		}
		last = fmt.Sprintf("deployment %+v; %d pods", dep.Status.Conditions, len(pods.Items))
		for _, p := range pods.Items {
			last += fmt.Sprintf("; pod %s %s %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		}
		available := slices.ContainsFunc(dep.Status.Conditions, func(c appsv1.DeploymentCondition) bool {
			return c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue
		})
		if !available || len(pods.Items) != 1 {
			return false, nil
		}
		pod = pods.Items[0]
		return true, nil
	}); err != nil {
		t.Fatalf("deployment %s/%s not Available: %v (%s)", ns, name, err, last)
	}
	return &pod
}

// checkContainerProcesses checks, on the host, the processes of container
// id as SIP's security context asks: haproxy (master and worker) as uid and
// gid 99, without capabilities or a way to gain privileges, on a read-only
// root.
func checkContainerProcesses(t *testing.T, id string) {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, dir := range procs {
		cg, err := os.ReadFile(filepath.Join(dir, "cgroup"))
		if err != nil || !strings.Contains(string(cg), id) {
			continue // gone, or another container's
		}
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			continue
		}
		fields := statusFields(string(status))
		found++
		want := map[string]string{
			"Name": "haproxy", "Uid": "99 99 99 99", "Gid": "99 99 99 99",
			"CapEff": "0000000000000000", "CapPrm": "0000000000000000", "NoNewPrivs": "1",
		}
		for k, v := range want {
			if fields[k] != v {
				t.Errorf("%s of the container: %s %q, want %q", dir, k, fields[k], v)
			}
		}
		if opts := rootMountOptions(t, dir); !slices.Contains(strings.Split(opts, ","), "ro") {
			t.Errorf("%s of the container: its root is mounted %q, want read-only", dir, opts)
		}
	}
	// haproxy -W: a master and a worker.
	if found < 2 {
		t.Errorf("%d processes of container %s, want haproxy's master and worker", found, id)
	}
	t.Logf("%d haproxy processes of the container: uid/gid 99, no capabilities, no_new_privs, read-only root", found)
}

// statusFields are the fields of /proc/<pid>/status, whitespace folded.
func statusFields(status string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(status, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			out[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return out
}

// rootMountOptions are the per-mount options of "/" as process dir sees it.
func rootMountOptions(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "mountinfo"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // only read
	opts := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ...; the last
		// mount on "/" is the one seen.
		if f := strings.Fields(sc.Text()); len(f) > 5 && f[4] == "/" {
			opts = f[5]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return opts
}

// TestTCPLogSessions reads HAProxy's tcplog lines as TestRealNodeLB does:
// a redispatched connection (the first server refused it) shows +1
// retries, which a direct one does not.
func TestTCPLogSessions(t *testing.T) {
	log := strings.Join([]string{
		"[NOTICE]   (1) : New worker (8) forked",
		"Health check for server kube-apiserver/node01 failed, reason: Layer4 connection problem, info: \"Connection refused\", check duration: 0ms, status: 0/2 DOWN.",
		"Server kube-apiserver/node01 is DOWN. 1 active and 0 backup servers left. 0 sessions active, 0 requeued, 0 remaining in queue.",
		"10.88.0.1:48140 [27/Nov/2026:07:44:05.958] kube-apiserver kube-apiserver/node02 1/0/4 20863 -- 1/1/0/0/+1 0/0",
		"10.88.0.1:48150 [27/Nov/2026:07:44:05.971] kube-apiserver kube-apiserver/node02 1/0/5 20863 -- 1/1/0/0/0 0/0",
		"",
	}, "\n")
	want := [][]string{{"kube-apiserver/node02", "+1"}, {"kube-apiserver/node02", "0"}}
	if got := tcpLogSessions(log); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("tcpLogSessions = %q, want %q", got, want)
	}
}
