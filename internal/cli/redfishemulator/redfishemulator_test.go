package redfishemulator

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/clitest"
	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

const password = "cli-Passw0rd-never-printed"

// lockedBuffer is written by the command while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code = cli.Run(context.Background(), NewCmd(streams), args, streams)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandLineErrors(t *testing.T) {
	creds := writeFile(t, "creds.yaml", "username: root\npassword: "+password+"\n")
	badCreds := writeFile(t, "bad.yaml", "user: root\n")
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		stdoutHas string
		stderrHas string
	}{
		{"help", []string{"--help"}, 0, "--target-kubeconfig", ""},
		{"unknown flag", []string{"--bogus"}, 2, "", "Usage:"},
		{"bad flag value", []string{"--hosts", "many"}, 2, "", `invalid argument "many"`},
		{"stray argument", []string{"extra"}, 1, "", "unknown command"},
		{"no hosts", []string{"--password", "x"}, 1, "", "no hosts: give --hosts N"},
		{"zero hosts", []string{"--hosts", "0", "--password", "x"}, 1, "", "--hosts 0: at least 1"},
		{"zero racks", []string{"--hosts", "2", "--racks", "0", "--password", "x"}, 1, "", "--racks 0"},
		{"config and hosts", []string{"--hosts", "2", "--config", "x.yaml"}, 1, "", "none of the others can be"},
		{"no password", []string{"--hosts", "2"}, 1, "", "no BMC password"},
		{"password and credentials file", []string{"--hosts", "2", "--password", "x", "--credentials-file", creds}, 1, "", "none of the others can be"},
		{"bad credentials file", []string{"--hosts", "2", "--credentials-file", badCreds}, 1, "", `bad.yaml: unknown field "user"`},
		{"missing credentials file", []string{"--hosts", "2", "--credentials-file", "/nonexistent/creds"}, 1, "", "--credentials-file"},
		{"missing config", []string{"--config", "/nonexistent/hosts.yaml", "--password", "x"}, 1, "", "/nonexistent/hosts.yaml"},
		{"beyond loopback without TLS", []string{"--hosts", "2", "--credentials-file", creds, "--listen", "0.0.0.0:0"}, 1, "", "not a loopback address"},
		{"password beyond loopback", []string{"--hosts", "2", "--password", password, "--listen", "0.0.0.0:0", "--tls-cert", "c", "--tls-key", "k"}, 1, "", "--password is refused"},
		{"cert without key", []string{"--hosts", "2", "--password", "x", "--tls-cert", "c"}, 1, "", "must all be set"},
		{"missing certificate", []string{"--hosts", "2", "--password", "x", "--tls-cert", "/nonexistent/c", "--tls-key", "/nonexistent/k"}, 1, "", "TLS certificate /nonexistent/c"},
		{"negative boot delay", []string{"--hosts", "2", "--password", "x", "--boot-delay", "-1s"}, 1, "", "--boot-delay -1s"},
		{"bad target kubeconfig", []string{"--hosts", "2", "--password", "x", "--target-kubeconfig", "/nonexistent/kubeconfig"}, 1, "", "--target-kubeconfig /nonexistent/kubeconfig"},
		{"bad host API allow", []string{"--hosts", "2", "--password", "x", "--host-api-allow", "10.0.0.0/33"}, 1, "", `--host-api-allow: "10.0.0.0/33" is no CIDR`},
		{"version", []string{"version"}, 0, Binary, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout, tc.stdoutHas) || !strings.Contains(stderr, tc.stderrHas) {
				t.Errorf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", tc.args, code, tc.code, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, password) {
				t.Errorf("the password is printed:\n%s%s", stdout, stderr)
			}
		})
	}
}

func TestExamples(t *testing.T) {
	clitest.CheckExamples(t, NewCmd(cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}))
}

var servingLine = regexp.MustCompile(`^redfish-emulator: serving (\d+) hosts at (https?://127\.0\.0\.1:\d+)\n$`)

// serve runs the command until the test ends and returns the base URL it
// printed, and its outputs.
func serve(t *testing.T, args ...string) (base string, stdout, stderr *lockedBuffer) {
	t.Helper()
	stdout, stderr = &lockedBuffer{}, &lockedBuffer{}
	streams := cli.IOStreams{In: strings.NewReader(""), Out: stdout, ErrOut: stderr}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- cli.Run(ctx, NewCmd(streams), args, streams) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d after interruption: %s", code, stderr)
		}
		if strings.Contains(stdout.String()+stderr.String(), password) {
			t.Errorf("the password is printed:\n%s%s", stdout, stderr)
		}
	})
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		select {
		case code := <-done:
			done <- code
			t.Fatalf("exited %d: %s", code, stderr)
		default:
		}
		return stdout.String() != "", nil
	})
	if err != nil {
		t.Fatalf("no serving line: %v; stderr %s", err, stderr)
	}
	m := servingLine.FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("stdout %q is not one serving line", stdout.String())
	}
	return m[2], stdout, stderr
}

func TestServe(t *testing.T) {
	dir := t.TempDir()
	creds := writeFile(t, "creds.yaml", "username: root\npassword: "+password+"\n")
	manifests := filepath.Join(dir, "out", "hosts.yaml")
	state := filepath.Join(dir, "state")
	base, stdout, stderr := serve(t, "--hosts", "3", "--racks", "2", "--listen", "127.0.0.1:0", "--credentials-file", creds,
		"--manifests", manifests, "--namespace", "metal3", "--state-dir", state)
	if fi, err := os.Stat(state); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("--state-dir %s: %v, %v", state, err, fi)
	}
	if !strings.Contains(stdout.String(), "serving 3 hosts") {
		t.Errorf("stdout %q", stdout)
	}
	c, err := gofish.Connect(gofish.ClientConfig{Endpoint: base, Username: "root", Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Logout()
	systems, err := c.Service.Systems()
	if err != nil || len(systems) != 3 {
		t.Fatalf("systems: %v, %d", err, len(systems))
	}
	fi, err := os.Stat(manifests)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("manifests mode %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(manifests)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"address: redfish-virtualmedia+" + base + "/redfish/v1/Systems/host-0002",
		"name: host-0001-bmc-secret", "namespace: metal3", "rack: rack-1", "kind: BareMetalHost",
		"password: " + base64.StdEncoding.EncodeToString([]byte(password)),
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if !strings.Contains(stderr.String(), "wrote the manifests of 3 hosts") {
		t.Errorf("stderr %q", stderr)
	}
}

func TestServeConfigFileAndTLS(t *testing.T) {
	cert, key := selfSigned(t)
	config := writeFile(t, "hosts.yaml", "username: u\npassword: "+password+"\nhosts:\n- name: alpha\n- name: beta\n  labels: {rack: r9}\n")
	base, _, _ := serve(t, "--config", config, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("base %s", base)
	}
	c, err := gofish.Connect(gofish.ClientConfig{Endpoint: base, Username: "u", Password: password, Insecure: true, BasicAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	systems, err := c.Service.Systems()
	if err != nil || len(systems) != 2 || systems[0].ID != "alpha" {
		t.Fatalf("systems: %v, %+v", err, systems)
	}
}

func TestServeTargetCluster(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	base, _, stderr := serve(t, "--hosts", "1", "--listen", "127.0.0.1:0", "--password", password, "--boot-delay", "0s", "--target-kubeconfig", env.Kubeconfig)
	c, err := gofish.Connect(gofish.ClientConfig{Endpoint: base, Username: DefaultUsername, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Logout()
	// A live ISO that is a config drive: the host registers its Node.
	iso, err := configdrive.Build(configdrive.Data{MetaData: []byte(`{"local-hostname": "booted-0", "providerid": "emu://0"}`)})
	if err != nil {
		t.Fatal(err)
	}
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(iso) }))
	t.Cleanup(images.Close)
	resp, err := c.Post("/redfish/v1/Managers/host-0000/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia",
		map[string]any{"Image": images.URL + "/x.iso"})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close() // only read: closing cannot lose data
	sys, err := schemas.GetComputerSystem(c, "/redfish/v1/Systems/host-0000")
	if err == nil {
		_, err = sys.Reset(schemas.OnResetType)
	}
	if err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{}
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return env.Client.Get(ctx, client.ObjectKey{Name: "booted-0"}, node) == nil, nil
	})
	if err != nil {
		t.Fatalf("no Node booted-0: %v; log %s", err, stderr)
	}
	if node.Spec.ProviderID != "emu://0" {
		t.Errorf("providerID %q", node.Spec.ProviderID)
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "redfish-emulator"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = writeFile(t, "tls.crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	keyFile = writeFile(t, "tls.key", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})))
	return certFile, keyFile
}

// TestBootDelay: the boot delay the flags and a hosts file make, and the
// help that describes it, with its default given once.
func TestBootDelay(t *testing.T) {
	withDelay := writeFile(t, "with.yaml", "username: u\npassword: x\nbootDelay: 2s\nhosts:\n- name: a\n")
	without := writeFile(t, "without.yaml", "username: u\npassword: x\nhosts:\n- name: a\n")
	tests := []struct {
		name string
		args []string
		want time.Duration
	}{
		{"generated hosts", []string{"--hosts", "1", "--password", "x"}, time.Second},
		{"generated hosts, flag", []string{"--hosts", "1", "--password", "x", "--boot-delay", "3s"}, 3 * time.Second},
		{"generated hosts, flag 0", []string{"--hosts", "1", "--password", "x", "--boot-delay", "0s"}, 0},
		{"file with bootDelay", []string{"--config", withDelay}, 2 * time.Second},
		{"file without bootDelay", []string{"--config", without}, 0},
		{"file with bootDelay, flag", []string{"--config", withDelay, "--boot-delay", "5s"}, 5 * time.Second},
		{"file without bootDelay, flag at its default", []string{"--config", without, "--boot-delay", "1s"}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got time.Duration
			streams := cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			cmd := newCmd(streams, func(o *Options, cmd *cobra.Command) error {
				cfg, err := o.config(cmd)
				got = cfg.BootDelay
				return err
			})
			if code := cli.Run(context.Background(), cmd, tt.args, streams); code != 0 {
				t.Fatalf("exit %d: %s", code, streams.ErrOut)
			}
			if got != tt.want {
				t.Errorf("boot delay %s, want %s", got, tt.want)
			}
		})
	}

	_, stdout, _ := run(t, "--help")
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, "--boot-delay duration") {
			line = l
		}
	}
	if strings.Count(line, "default") != 1 || !strings.Contains(line, "(default 1s)") || !strings.Contains(line, "the file's bootDelay, 0 when it has none") {
		t.Errorf("--boot-delay help: %q", line)
	}
}

// TestHostAPIFlags: what --host-api-servers and --host-api-allow make of
// the emulator's options.
func TestHostAPIFlags(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		servers bool
		allow   string
	}{
		{"defaults", nil, false, "[127.0.0.0/8 ::1/128 10.88.0.0/16]"},
		{"on", []string{"--host-api-servers"}, true, "[127.0.0.0/8 ::1/128 10.88.0.0/16]"},
		{"repeated", []string{"--host-api-servers", "--host-api-allow", "10.1.0.0/16", "--host-api-allow", "fd00::/8,192.168.1.7"}, true, "[10.1.0.0/16 fd00::/8 192.168.1.7/32]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got emulator.Options
			streams := cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			cmd := newCmd(streams, func(o *Options, _ *cobra.Command) error {
				var err error
				got, err = o.options(streams)
				return err
			})
			if code := cli.Run(context.Background(), cmd, append([]string{"--hosts", "1", "--password", "x"}, tt.args...), streams); code != 0 {
				t.Fatalf("exit %d: %s", code, streams.ErrOut)
			}
			if got.HostAPIServers != tt.servers || fmt.Sprint(got.HostAPIAllow) != tt.allow {
				t.Errorf("HostAPIServers %v, HostAPIAllow %v; want %v, %s", got.HostAPIServers, got.HostAPIAllow, tt.servers, tt.allow)
			}
		})
	}
	_, stdout, _ := run(t, "--help")
	if !strings.Contains(stdout, "--host-api-allow strings") || !strings.Contains(stdout, "(default [127.0.0.0/8,::1/128,10.88.0.0/16])") {
		t.Errorf("--help:\n%s", stdout)
	}
}
