package builder

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// etcdCluster is a real etcd cluster on loopback with client and peer TLS,
// as the Kubernetes etcd runs (--client-cert-auth, --peer-client-cert-auth),
// each member with a certificate from one CA for both client and server use,
// as the site's catalog issues them.
type etcdCluster struct {
	bin     string
	dir     string
	ca      *pki.KeyPair
	members map[string]*etcdMember
	client  *http.Client
}

type etcdMember struct {
	name, clientURL, peerURL string
	args                     []string
	log                      string
	cmd                      *exec.Cmd
	exited                   chan struct{}
}

func startEtcd(t *testing.T, names ...string) *etcdCluster {
	t.Helper()
	bin := testtool.Path(t, "etcd", local.DefaultBinDir())
	ca, err := pki.NewCA("kubernetes-etcd", 0, pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	c := &etcdCluster{bin: bin, dir: t.TempDir(), ca: ca, members: map[string]*etcdMember{}}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	clientPair := c.issue(t, "test-client")
	clientCert, err := tls.LoadX509KeyPair(clientPair[0], clientPair[1])
	if err != nil {
		t.Fatal(err)
	}
	c.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{clientCert}, MinVersion: tls.VersionTLS12},
	}}
	var initial []string
	for _, n := range names {
		m := &etcdMember{name: n, clientURL: "https://" + testenv.FreeAddr(t), peerURL: "https://" + testenv.FreeAddr(t)}
		c.members[n] = m
		initial = append(initial, n+"="+m.peerURL)
	}
	for _, n := range names {
		m := c.members[n]
		cert := c.issue(t, n)
		caFile := filepath.Join(c.dir, "etcd-ca.pem")
		m.log = filepath.Join(c.dir, n+".log")
		m.args = []string{
			"--name=" + n, "--data-dir=" + filepath.Join(c.dir, n+".data"),
			"--listen-client-urls=" + m.clientURL, "--advertise-client-urls=" + m.clientURL,
			"--listen-peer-urls=" + m.peerURL, "--initial-advertise-peer-urls=" + m.peerURL,
			"--initial-cluster=" + strings.Join(initial, ","), "--initial-cluster-state=new",
			"--initial-cluster-token=kubernetes-etcd",
			"--client-cert-auth", "--trusted-ca-file=" + caFile, "--cert-file=" + cert[0], "--key-file=" + cert[1],
			"--peer-client-cert-auth", "--peer-trusted-ca-file=" + caFile, "--peer-cert-file=" + cert[0], "--peer-key-file=" + cert[1],
		}
		c.start(t, n)
	}
	for _, n := range names {
		c.waitHealthy(t, n)
	}
	return c
}

// issue writes a certificate of the cluster's CA for 127.0.0.1, with server
// and client usage, and returns its certificate and key files.
func (c *etcdCluster) issue(t *testing.T, name string) [2]string {
	t.Helper()
	kp, err := c.ca.Issue(pki.Request{CommonName: name, Hosts: []string{"127.0.0.1", "localhost"}, Server: true, Client: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := kp.WriteFiles(c.dir, name); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "etcd-ca.pem"), c.ca.CertPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return [2]string{filepath.Join(c.dir, name+".crt"), filepath.Join(c.dir, name+".key")}
}

// installCredentials lays down, under a sandbox root, the files the etcd
// anchor (or genesis.sh) writes for node's member: the etcd CA and the
// member certificate.
func (c *etcdCluster) installCredentials(t *testing.T, root, node string) {
	t.Helper()
	dir := root + EtcdPKIDir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{"etcd-ca.pem": "etcd-ca.pem", node + ".crt": "server.pem", node + ".key": "server-key.pem"} {
		b, err := os.ReadFile(filepath.Join(c.dir, src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func (c *etcdCluster) start(t *testing.T, name string) {
	t.Helper()
	m := c.members[name]
	m.cmd = exec.Command(c.bin, m.args...) //nolint:noctx // stopped by the cleanup below, which waits for it
	m.exited = make(chan struct{})
	logf, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close() //nolint:errcheck // the child holds its own descriptor
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd, exited := m.cmd, m.exited
	go func() {
		_ = cmd.Wait() // a removed member exits by itself
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
}

// stop kills a member and waits until it is gone.
func (c *etcdCluster) stop(t *testing.T, name string) {
	t.Helper()
	m := c.members[name]
	_ = m.cmd.Process.Kill()
	<-m.exited
}

func (c *etcdCluster) waitHealthy(t *testing.T, name string) {
	t.Helper()
	m := c.members[name]
	deadline := time.Now().Add(30 * time.Second)
	for {
		body, err := c.call(t.Context(), m.clientURL, "/health", "")
		if err == nil && strings.Contains(body, `"health":"true"`) {
			return
		}
		select {
		case <-m.exited:
			log, _ := os.ReadFile(m.log)
			t.Fatalf("etcd member %s exited:\n%s", name, log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(m.log)
			t.Fatalf("etcd member %s not healthy after 30s (%v, %s):\n%s", name, err, body, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *etcdCluster) call(ctx context.Context, url, path, body string) (string, error) {
	method, rd := http.MethodGet, io.Reader(nil)
	if body != "" {
		method, rd = http.MethodPost, strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url+path, rd)
	if err != nil {
		return "", err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close() //nolint:errcheck
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("%s%s: %s", url, path, resp.Status)
	}
	return string(b), nil
}

// memberNames is the cluster's member list (linearizable), asked of the
// first member that answers.
func (c *etcdCluster) memberNames(t *testing.T, via ...string) []string {
	t.Helper()
	var errs []string
	for _, n := range via {
		body, err := c.call(t.Context(), c.members[n].clientURL, "/v3/cluster/member/list", `{"linearizable":true}`)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		var list struct {
			Members []struct {
				Name string `json:"name"`
			} `json:"members"`
		}
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("member list %s: %v", body, err)
		}
		var names []string
		for _, m := range list.Members {
			names = append(names, m.Name)
		}
		sort.Strings(names)
		return names
	}
	t.Fatalf("no member answered the member list: %v", errs)
	return nil
}

func (c *etcdCluster) endpoints(names ...string) string {
	var out []string
	for _, n := range names {
		out = append(out, c.members[n].clientURL)
	}
	return strings.Join(out, ",")
}

// etcdSandbox is a sandbox for node whose curl is the real one for the
// calls to etcd (the ones with --cacert) and whose kubectl knows the node
// until it is deleted; it holds the node's etcd credentials and data.
func etcdSandbox(t *testing.T, c *etcdCluster, node, ip string, endpoints string) *sandbox {
	t.Helper()
	realCurl := testtool.Path(t, "curl")
	sb := newSandbox(t, node, ip)
	c.installCredentials(t, sb.root, node)
	gone := filepath.Join(filepath.Dir(sb.root), "node-deleted")
	stubs := map[string]string{
		"curl": fmt.Sprintf(`case "$*" in *--cacert*) exec %q "$@" ;; *) echo ok ;; esac`, realCurl),
		"kubectl": `case "$*" in
  *"get node ` + node + ` --ignore-not-found -o name"*) [[ -f ` + gone + ` ]] || echo node/` + node + ` ;;
  *"get nodes -l kubernetes-apiserver=enabled -o name"*) printf 'node/n0\nnode/n1\n' ;;
  *"delete node ` + node + `"*) touch ` + gone + ` ;;
esac`,
	}
	for name, body := range stubs {
		script := fmt.Sprintf("#!/bin/bash\necho \"%s $*\" >>%q\n%s\n", name, sb.log, body)
		if err := os.WriteFile(filepath.Join(sb.bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"/var/lib/etcd/kubernetes-etcd/member", "/var/lib/etcd/auxiliary-etcd/member"} {
		if err := os.MkdirAll(sb.root+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// etcd refuses removals for a few seconds after a member reconnects,
	// which the script waits out: with a real sleep.
	realSleep := testtool.Path(t, "sleep")
	if err := os.WriteFile(filepath.Join(sb.bin, "sleep"), []byte(fmt.Sprintf("#!/bin/bash\nexec %q \"$@\"\n", realSleep)), 0o755); err != nil {
		t.Fatal(err)
	}
	sb.env = append(sb.env, "PROMENADE_ETCD_ENDPOINTS="+endpoints, "PROMENADE_POLL_INTERVAL=0.2")
	return sb
}

// refused runs script, which must fail saying want, before the node or any
// etcd member was touched.
func refused(t *testing.T, sb *sandbox, script, want string) {
	t.Helper()
	out, err := sb.runErr(script)
	if err == nil || !strings.Contains(out, want) {
		t.Fatalf("want a refusal %q, got %v:\n%s", want, err, out)
	}
	calls, err := os.ReadFile(sb.log)
	if err != nil {
		t.Fatal(err)
	}
	for _, unwanted := range []string{"drain", "delete node", "label node", "member/remove", "systemctl"} {
		if strings.Contains(string(calls), unwanted) {
			t.Errorf("the refused removal called %q:\n%s", unwanted, calls)
		}
	}
	if _, err := os.Stat(sb.root + "/var/lib/etcd/kubernetes-etcd/member"); err != nil {
		t.Errorf("the refused removal removed the member's data: %v", err)
	}
}

func writeExampleScripts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := WriteScripts(dir, buildExample(t, Options{})); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRemovalScriptRemovesTheEtcdMember runs remove-<node>.sh against a
// real three-member etcd cluster: it refuses while the cluster would lose
// quorum, removes the node's member (after the node is deleted, before the
// kubelet stops) and its data, and refuses to remove the last member.
func TestRemovalScriptRemovesTheEtcdMember(t *testing.T) {
	dir := writeExampleScripts(t)
	c := startEtcd(t, "n1", "n2", "n3")
	all := c.endpoints("n1", "n2", "n3")

	// n3 down: without n2, n1 and n3 would remain, one of them healthy.
	c.stop(t, "n3")
	sb2 := etcdSandbox(t, c, "n2", "192.168.77.12", all)
	refused(t, sb2, filepath.Join(dir, "remove-n2.sh"), "the Kubernetes etcd cluster would lose quorum: 2 voting members would remain, 1 of them healthy, and quorum needs 2")
	if got := c.memberNames(t, "n1", "n2"); !slices.Equal(got, []string{"n1", "n2", "n3"}) {
		t.Fatalf("members after the refusal: %v", got)
	}
	c.start(t, "n3")
	c.waitHealthy(t, "n3")

	calls := sb2.run(t, filepath.Join(dir, "remove-n2.sh"))
	inOrder(t, calls, "/v3/cluster/member/list", "drain n2", "delete node n2", "/v3/cluster/member/remove", "systemctl disable --now kubelet")
	if got := c.memberNames(t, "n1", "n3"); !slices.Equal(got, []string{"n1", "n3"}) {
		t.Errorf("members after removing n2: %v", got)
	}
	if _, err := os.Stat(sb2.root + "/var/lib/etcd/kubernetes-etcd"); err == nil {
		t.Error("n2's etcd data left behind")
	}

	sb3 := etcdSandbox(t, c, "n3", "192.168.77.13", all)
	sb3.run(t, filepath.Join(dir, "remove-n3.sh"))
	if got := c.memberNames(t, "n1"); !slices.Equal(got, []string{"n1"}) {
		t.Errorf("members after removing n3: %v", got)
	}

	sb1 := etcdSandbox(t, c, "n1", "192.168.77.11", all)
	refused(t, sb1, filepath.Join(dir, "remove-n1.sh"), "refusing to remove n1: its etcd member(s) are the last voting members of the Kubernetes etcd cluster (1 of 1)")
	if got := c.memberNames(t, "n1"); !slices.Equal(got, []string{"n1"}) {
		t.Errorf("members after the refused removal of the last: %v", got)
	}
}

// TestGenesisRemovalScriptRemovesBothMembers: remove-n0.sh refuses while
// the genesis node's members (its own and the auxiliary one) are the whole
// cluster, and while the rest would lose quorum; with two healthy members
// elsewhere it removes both of its members and their data.
func TestGenesisRemovalScriptRemovesBothMembers(t *testing.T) {
	dir := writeExampleScripts(t)
	script := filepath.Join(dir, "remove-n0.sh")

	t.Run("bootstrap cluster only", func(t *testing.T) {
		c := startEtcd(t, "n0", "auxiliary-0")
		sb := etcdSandbox(t, c, "n0", "192.168.77.10", c.endpoints("n0", "auxiliary-0"))
		refused(t, sb, script, "refusing to remove n0: its etcd member(s) are the last voting members of the Kubernetes etcd cluster (2 of 2)")
		if got := c.memberNames(t, "n0"); !slices.Equal(got, []string{"auxiliary-0", "n0"}) {
			t.Errorf("members after the refusal: %v", got)
		}
	})

	t.Run("two members elsewhere", func(t *testing.T) {
		c := startEtcd(t, "n0", "auxiliary-0", "n1", "n2")
		all := c.endpoints("n0", "auxiliary-0", "n1", "n2")
		sb := etcdSandbox(t, c, "n0", "192.168.77.10", all)
		c.stop(t, "n2")
		refused(t, sb, script, "2 voting members would remain, 1 of them healthy, and quorum needs 2")
		c.start(t, "n2")
		c.waitHealthy(t, "n2")

		calls := sb.run(t, script)
		inOrder(t, calls, "/v3/cluster/member/list", "get nodes -l kubernetes-apiserver=enabled", "drain n0", "delete node n0",
			"/v3/cluster/member/remove", "/v3/cluster/member/remove", "systemctl disable --now kubelet")
		if got := c.memberNames(t, "n1", "n2"); !slices.Equal(got, []string{"n1", "n2"}) {
			t.Errorf("members after removing the genesis node: %v", got)
		}
		for _, d := range []string{"/var/lib/etcd/kubernetes-etcd", "/var/lib/etcd/auxiliary-etcd", "/etc/kubernetes", "/etc/genesis/validate-bootstrap.sh"} {
			if _, err := os.Stat(sb.root + d); err == nil {
				t.Errorf("%s left behind", d)
			}
		}
	})
}
