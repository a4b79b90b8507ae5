package local

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/process"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

func TestVersionsMatchBuildScript(t *testing.T) {
	f, err := os.Open("../../../hack/testbin/versions.env")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // only read: closing cannot lose data
	got := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			got[k] = v
		}
	}
	want := map[string]string{"KUBERNETES_VERSION": KubernetesVersion, "ETCD_VERSION": EtcdVersion, "KWOK_VERSION": KwokVersion}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("versions.env %s=%q, Go constant says %q", k, got[k], v)
		}
	}
	if !strings.Contains(DefaultBinDir(), KubernetesVersion) && os.Getenv("AIRSHIP_TESTBIN_DIR") == "" && os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Errorf("DefaultBinDir %q does not name the Kubernetes version", DefaultBinDir())
	}
}

func TestChoosePorts(t *testing.T) {
	busy, err := new(net.ListenConfig).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = busy.Close() })
	busyPort := busy.Addr().(*net.TCPAddr).Port

	t.Run("requested port in use is an error naming it", func(t *testing.T) {
		_, err := choosePorts(busyPort, nil, 0)
		if err == nil || !strings.Contains(err.Error(), strconv.Itoa(busyPort)) || !strings.Contains(err.Error(), "--port") {
			t.Fatalf("got %v, want an error naming port %d and --port", err, busyPort)
		}
	})
	t.Run("all ports distinct and free", func(t *testing.T) {
		ports, err := choosePorts(0, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]string{}
		for _, name := range portNames {
			p := ports[name]
			if p == 0 {
				t.Errorf("no port for %s", name)
			}
			if other, dup := seen[p]; dup {
				t.Errorf("%s and %s share port %d", name, other, p)
			}
			seen[p] = name
		}
	})
	t.Run("previous free ports are kept, busy ones replaced", func(t *testing.T) {
		free, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		prev := &State{Ports: map[string]int{APIServer: free, Etcd + "-client": busyPort}}
		ports, err := choosePorts(0, prev, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ports[APIServer] != free {
			t.Errorf("apiserver port %d, want previous %d", ports[APIServer], free)
		}
		if ports["etcd-client"] == busyPort {
			t.Errorf("kept busy port %d", busyPort)
		}
	})
}

func TestComponentArgsStayOnLoopbackWithTLS(t *testing.T) {
	ports, err := choosePorts(0, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := paths{root: t.TempDir()}
	opts := Options{}
	opts.setDefaults()
	for _, c := range Components {
		args := componentArgs(c, p, ports, opts)
		if len(args) == 0 {
			t.Fatalf("%s: no args", c)
		}
		for _, a := range args {
			name, val, _ := strings.Cut(a, "=")
			switch {
			case name == "--bind-address" || name == "--advertise-address" || name == "--node-ip":
				if val != "127.0.0.1" {
					t.Errorf("%s: %s", c, a)
				}
			case strings.HasPrefix(name, "--listen-") || strings.HasSuffix(name, "-urls") || name == "--etcd-servers" || name == "--initial-cluster":
				if !strings.Contains(val, "127.0.0.1:") {
					t.Errorf("%s: %s not on loopback", c, a)
				}
				// Only the metrics listener carries no credentials and may be plain HTTP.
				if name != "--listen-metrics-urls" && !strings.Contains(val, "https://") {
					t.Errorf("%s: %s without TLS", c, a)
				}
			case name == "--server-address":
				if !strings.HasPrefix(val, "127.0.0.1:") {
					t.Errorf("%s: %s", c, a)
				}
			}
		}
	}
}

// TestSetDefaultsKeepsNodes: Nodes is taken as given, zero included, so
// `cluster local up --nodes 0` starts a cluster without kwok Nodes; the
// default of 3 belongs to the --nodes flag.
func TestSetDefaultsKeepsNodes(t *testing.T) {
	for _, n := range []int{0, 1, 5} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			o := Options{Nodes: n}
			o.setDefaults()
			if o.Nodes != n {
				t.Errorf("Nodes %d after setDefaults, want %d", o.Nodes, n)
			}
			if o.Timeout != 2*time.Minute || o.StateDir == "" || o.BinDir == "" || o.Progress == nil {
				t.Errorf("other defaults not set: %+v", o)
			}
		})
	}
}

func TestUpWithoutBinariesFailsCleanly(t *testing.T) {
	state := t.TempDir()
	_, err := Up(context.Background(), Options{StateDir: state, BinDir: filepath.Join(t.TempDir(), "none")})
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"kube-apiserver", "make testbin"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "state.json")); !os.IsNotExist(err) {
		t.Errorf("state.json left behind: %v", err)
	}
}

func TestStatusAndDownWithStaleRecords(t *testing.T) {
	sleep := testtool.Path(t, "sleep")
	state := t.TempDir()
	p := paths{root: state}
	if _, err := ensurePKI(p.pki(), nil); err != nil {
		t.Fatal(err)
	}
	s, err := process.Start(process.Spec{Component: Etcd, Binary: sleep, Args: []string{"60"}, Log: p.log(Etcd)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Record.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := writeState(p.state(), &State{Kubeconfig: filepath.Join(state, "missing"), Processes: []ProcessRecord{s.Record}}); err != nil {
		t.Fatal(err)
	}

	st, err := GetStatus(context.Background(), state)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Running || st.Healthy || len(st.Components) != 1 || st.Components[0].Status != StatusExited {
		t.Fatalf("status = %+v, want running=true healthy=false and etcd Exited", st)
	}

	res, err := Down(DownOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stale) != 1 || len(res.Stopped) != 0 {
		t.Fatalf("down = %+v, want one stale record and nothing stopped", res)
	}
	if _, err := os.Stat(p.state()); !os.IsNotExist(err) {
		t.Error("state.json not removed")
	}
	if _, err := os.Stat(p.pki()); err != nil {
		t.Error("down without --purge removed the PKI")
	}
	if _, err := Down(DownOptions{StateDir: state, Purge: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Error("down --purge left the state directory")
	}
}

func TestPKIReusedUntilIncomplete(t *testing.T) {
	dir := t.TempDir()
	if reused, err := ensurePKI(dir, nil); err != nil || reused {
		t.Fatalf("first ensurePKI: reused=%v err=%v", reused, err)
	}
	for _, f := range []string{"ca.key", "admin.key", "sa.key"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	if reused, err := ensurePKI(dir, nil); err != nil || !reused {
		t.Fatalf("second ensurePKI: reused=%v err=%v", reused, err)
	}
	if err := os.Remove(filepath.Join(dir, "scheduler.crt")); err != nil {
		t.Fatal(err)
	}
	if reused, err := ensurePKI(dir, nil); err != nil || reused {
		t.Fatalf("after removing a certificate: reused=%v err=%v", reused, err)
	}
}

// A given cluster CA (a site's PKI) signs the cluster's certificates; the
// PKI is reused while it is that CA's and issued anew for another.
func TestPKIWithGivenCA(t *testing.T) {
	dir, src := t.TempDir(), t.TempDir()
	siteCA, err := pki.NewCA("kubernetes", 365*24*time.Hour, pki.RSA2048)
	if err != nil {
		t.Fatal(err)
	}
	if err := siteCA.WriteFiles(src, "site-ca"); err != nil {
		t.Fatal(err)
	}
	ca, err := LoadCA(filepath.Join(src, "site-ca.crt"), filepath.Join(src, "site-ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	if reused, err := ensurePKI(dir, ca); err != nil || reused {
		t.Fatalf("first ensurePKI: reused=%v err=%v", reused, err)
	}
	apiserver, err := pki.Load(dir, "apiserver")
	if err != nil {
		t.Fatal(err)
	}
	if err := apiserver.Cert.CheckSignatureFrom(siteCA.Cert); err != nil {
		t.Errorf("the API server certificate is not signed by the given CA: %v", err)
	}
	if got, err := pki.Load(dir, "ca"); err != nil || !got.Cert.Equal(siteCA.Cert) {
		t.Errorf("ca.crt is not the given CA (%v)", err)
	}
	if reused, err := ensurePKI(dir, ca); err != nil || !reused {
		t.Fatalf("same CA again: reused=%v err=%v", reused, err)
	}
	other, err := pki.NewCA("other", 365*24*time.Hour, pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	if reused, err := ensurePKI(dir, other); err != nil || reused {
		t.Fatalf("another CA: reused=%v err=%v, want a new PKI", reused, err)
	}
	if apiserver, err = pki.Load(dir, "apiserver"); err != nil || apiserver.Cert.CheckSignatureFrom(other.Cert) != nil {
		t.Errorf("after another CA the API server certificate is not signed by it (%v)", err)
	}

	// Bad CAs are refused, naming the file.
	leafKP, err := siteCA.Issue(pki.Request{CommonName: "leaf", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := leafKP.WriteFiles(src, "leaf"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cert, key, want string }{
		{"leaf.crt", "leaf.key", "leaf.crt is not a CA certificate"},
		{"site-ca.crt", "leaf.key", "site-ca.crt with key"},
		{"missing.crt", "site-ca.key", "reading the CA certificate"},
	} {
		if _, err := LoadCA(filepath.Join(src, tc.cert), filepath.Join(src, tc.key)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadCA(%s, %s) = %v, want an error with %q", tc.cert, tc.key, err, tc.want)
		}
	}
}

// TestUpWithoutNodes: Nodes 0 (`cluster local up --nodes 0`) starts every
// component, kwok included, creates no Node, and the cluster is healthy:
// status expects the zero Nodes it recorded.
func TestUpWithoutNodes(t *testing.T) {
	bin := DefaultBinDir()
	if missing := MissingBinaries(bin); len(missing) > 0 {
		testtool.Missing(t, "%s missing from %s; %s", strings.Join(missing, ", "), bin, BuildHint)
	}
	state := filepath.Join(t.TempDir(), "state")
	t.Cleanup(func() {
		if _, err := Down(DownOptions{StateDir: state, Purge: true}); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	ctx := context.Background()
	res, err := Up(ctx, Options{StateDir: state, BinDir: bin, Nodes: 0, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Nodes != 0 || len(res.State.Processes) != len(Components) {
		t.Fatalf("state: %d nodes and %d processes, want 0 and %d", res.State.Nodes, len(res.State.Processes), len(Components))
	}
	cs, err := clientset(res.State.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 0 {
		t.Fatalf("nodes: %d (err %v), want none", len(nodes.Items), err)
	}
	st, err := GetStatus(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Healthy || st.Nodes != 0 || st.NodesReady != 0 || len(st.Components) != len(Components) {
		t.Fatalf("status %+v, want healthy, all components, no nodes", st)
	}
}
