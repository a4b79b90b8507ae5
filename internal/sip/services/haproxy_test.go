package services

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// haproxyPath finds haproxy, which Debian installs in /usr/sbin (not on a
// user's PATH).
func haproxyPath(t testing.TB) string {
	t.Helper()
	return testtool.Path(t, "haproxy", "/usr/sbin")
}

// TestHAProxyConfigCheck runs haproxy -c on every configuration Build
// renders. The last row is a broken configuration, to show the check can
// fail.
func TestHAProxyConfigCheck(t *testing.T) {
	haproxy := haproxyPath(t)
	type row struct {
		name, cfg string
		ok        bool
	}
	var rows []row
	for _, c := range cases {
		for _, cm := range all[*corev1.ConfigMap](build(t, loadInputs(t, c)).Objects) {
			if cfg, ok := cm.Data[haproxyConfigKey]; ok {
				rows = append(rows, row{c + "/" + cm.Name, cfg, true})
			}
		}
	}
	if len(rows) < 5 {
		t.Fatalf("only %d configurations rendered", len(rows))
	}
	broken := strings.Replace(rows[0].cfg, "balance roundrobin", "balance sideways", 1)
	rows = append(rows, row{"a broken configuration fails", broken, false})
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "haproxy.cfg")
			if err := os.WriteFile(path, []byte(r.cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.CommandContext(t.Context(), haproxy, "-c", "-f", path).CombinedOutput()
			if (err == nil) != r.ok {
				t.Errorf("haproxy -c: %v, want success %v:\n%s\n%s", err, r.ok, out, r.cfg)
			}
		})
	}
}

// backend is an API server stand-in: HTTPS, ready on /readyz, and
// answering its own name on /.
type backend struct {
	name string
	srv  *http.Server
}

// startBackends serves each host on its IP and one port common to all
// (HAProxy reaches every server of a backend on the same port): want, or
// with want 0 one free on every address. Each is stopped when the test
// ends.
func startBackends(t *testing.T, hosts []Host, cert tls.Certificate, want int) ([]*backend, int) {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		var lns []net.Listener
		var lerr error
		port := want
		for _, h := range hosts {
			ln, err := new(net.ListenConfig).Listen(t.Context(), "tcp", net.JoinHostPort(h.IPs["oam-ipv4"], strconv.Itoa(port)))
			if err != nil {
				lerr = err
				break
			}
			lns = append(lns, ln)
			port = ln.Addr().(*net.TCPAddr).Port
		}
		if len(lns) < len(hosts) { // the port was taken on another address: try another
			for _, ln := range lns {
				_ = ln.Close()
			}
			if want != 0 {
				t.Fatalf("serving the backends on port %d: %v", want, lerr)
			}
			continue
		}
		var out []*backend
		for i, h := range hosts {
			name := h.Name
			mux := http.NewServeMux()
			mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
			mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) })
			srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
			go func() { _ = srv.ServeTLS(lns[i], "", "") }()
			t.Cleanup(func() { _ = srv.Close() })
			out = append(out, &backend{name: name, srv: srv})
		}
		return out, port
	}
	t.Fatal("no port free on every backend address")
	return nil, 0
}

// selfSigned is a server certificate for hosts, from the project's PKI.
func selfSigned(t *testing.T, hosts ...string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := pki.NewKey(pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := pki.Sign(pki.Spec{Subject: pkix.Name{CommonName: "api-server"}, Hosts: hosts, Server: true, Validity: time.Hour}, key, nil, pki.Env{})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(kp.Cert)
	return tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key}, pool
}

// syncBuffer collects a process's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHAProxyBalancesAndSkipsDeadBackend runs the control-plane load
// balancer for real on loopback: three active API servers on 127.0.0.2-4
// and a standby on 127.0.0.5, each answering its name. The configuration is
// Build's, with the frontend bound to a listener the test hands HAProxy
// (fd@3: no port race), the servers' test port and a short check interval.
// Connections reach every active server and never the standby; once one
// server stops and HAProxy logs it down, consecutive connections all land
// on the other two.
func TestHAProxyBalancesAndSkipsDeadBackend(t *testing.T) {
	haproxy := haproxyPath(t)
	cert, pool := selfSigned(t, "127.0.0.1")
	hosts := []Host{
		{Name: "node01", Role: sipv1.RoleControlPlane, IPs: map[string]string{"oam-ipv4": "127.0.0.2"}},
		{Name: "node02", Role: sipv1.RoleControlPlane, IPs: map[string]string{"oam-ipv4": "127.0.0.3"}},
		{Name: "node03", Role: sipv1.RoleControlPlane, IPs: map[string]string{"oam-ipv4": "127.0.0.4"}},
		{Name: "node04", Role: sipv1.RoleControlPlane, Standby: true, IPs: map[string]string{"oam-ipv4": "127.0.0.5"}},
	}
	backends, port := startBackends(t, hosts, cert, 0)

	in := loadInputs(t, "minimal")
	in.Hosts = hosts
	lb := in.Cluster.Spec.Services.LoadBalancerControlPlane[0]
	b := &builder{cluster: in.Cluster, hosts: sortedHosts(hosts)}
	name, cfg, err := b.controlPlaneConfig(field.NewPath("spec"), 0, lb)
	if err != nil {
		t.Fatal(err)
	}
	// What runs is what Build ships, but for the options.
	shipped := find[*corev1.ConfigMap](t, build(t, in).Objects, name).Data[haproxyConfigKey]
	if renderHAProxy(cfg, production) != shipped {
		t.Fatal("the live test's configuration is not Build's")
	}
	opts := haproxyOptions{
		bind:        func(int) string { return "fd@3" },
		backendPort: func(int) int { return port },
		inter:       "200ms",
		downinter:   "200ms",
		fall:        2,
		rise:        2,
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(renderHAProxy(cfg, opts)), 0o644); err != nil {
		t.Fatal(err)
	}

	front, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	frontFile, err := front.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	addr := front.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, haproxy, "-f", cfgPath, "-db")
	var output syncBuffer
	cmd.Stdout, cmd.Stderr = &output, &output
	cmd.ExtraFiles = []*os.File{frontFile}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		err := <-exited
		if t.Failed() {
			t.Logf("haproxy (%v) output:\n%s", err, output.String())
		}
	})
	// HAProxy holds the listening socket now; the test's copies go.
	_ = frontFile.Close()
	_ = front.Close()

	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, DisableKeepAlives: true},
	}
	// ask opens one connection through HAProxy and returns the name of the
	// server that answered.
	ask := func() (string, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+addr+"/", nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer func() { _ = resp.Body.Close() }() // only read: closing cannot lose data
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}
	// until polls cond, bounded; it fails the test when HAProxy exits or
	// time is up.
	until := func(what string, limit time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(limit)
		for !cond() {
			select {
			case err := <-exited:
				exited <- err
				t.Fatalf("haproxy exited (%v) while waiting for %s", err, what)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s", what, limit)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	until("HAProxy to answer", 10*time.Second, func() bool { _, err := ask(); return err == nil })
	seen := map[string]int{}
	for range 30 {
		got, err := ask()
		if err != nil {
			t.Fatalf("a connection through HAProxy failed with every server up: %v", err)
		}
		seen[got]++
	}
	for _, h := range []string{"node01", "node02", "node03"} {
		if seen[h] == 0 {
			t.Errorf("no connection reached %s: %v", h, seen)
		}
	}
	if len(seen) != 3 {
		t.Errorf("connections reached %v; only node01-03 are active", seen)
	}
	if strings.Contains(output.String(), "is DOWN") {
		t.Fatalf("a healthy server was marked down:\n%s", output.String())
	}

	// Stop node02: its address refuses connections from now on.
	if err := backends[1].srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
	until("HAProxy's checks to mark node02 down", 10*time.Second, func() bool {
		return strings.Contains(output.String(), "kube-apiserver/node02 is DOWN")
	})
	const n = 12
	var got []string
	for range n {
		name, err := ask()
		if err != nil {
			t.Fatalf("a connection failed with node02 marked down: %v", err)
		}
		got = append(got, name)
	}
	for _, name := range got {
		if name != "node01" && name != "node03" {
			t.Fatalf("after node02 went down, %d connections landed on %v", n, got)
		}
	}
	if !slices.Contains(got, "node01") || !slices.Contains(got, "node03") {
		t.Errorf("after node02 went down, %d connections landed on %v: want both node01 and node03", n, got)
	}
	if strings.Contains(output.String(), "node01 is DOWN") || strings.Contains(output.String(), "node03 is DOWN") {
		t.Errorf("a healthy server was marked down:\n%s", output.String())
	}
	// Stop HAProxy here: its exit is the test's own, and is checked.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
	case <-time.After(10 * time.Second):
		t.Fatal("haproxy did not stop on SIGTERM")
	}
}
