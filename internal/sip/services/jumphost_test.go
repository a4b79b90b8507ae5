package services

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/redfish/emulator"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// jumpHostConfigMaps are the jump hosts' ConfigMaps of every case.
func jumpHostConfigMaps(t *testing.T) map[string]*corev1.ConfigMap {
	t.Helper()
	out := map[string]*corev1.ConfigMap{}
	for _, c := range cases {
		for _, cm := range all[*corev1.ConfigMap](build(t, loadInputs(t, c)).Objects) {
			if _, ok := cm.Data[keyPower]; ok {
				out[c+"/"+cm.Name] = cm
			}
		}
	}
	if len(out) < 2 {
		t.Fatalf("only %d jump hosts rendered", len(out))
	}
	return out
}

// TestPowerScriptShellcheck checks every rendered power script; the last
// row is a flawed script, to show shellcheck fails on one.
func TestPowerScriptShellcheck(t *testing.T) {
	sc := testtool.Path(t, "shellcheck")
	type row struct {
		name, script string
		ok           bool
	}
	var rows []row
	for name, cm := range jumpHostConfigMaps(t) {
		rows = append(rows, row{name, cm.Data[keyPower], true})
	}
	rows = append(rows, row{"a flawed script fails", "#!/usr/bin/env bash\nrm -rf $1/*\n", false})
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), sc, "--shell=bash", "--severity=style", "-")
			cmd.Stdin = strings.NewReader(r.script)
			out, err := cmd.CombinedOutput()
			if (err == nil) != r.ok {
				t.Errorf("shellcheck: %v, want success %v:\n%s", err, r.ok, out)
			}
		})
	}
}

// TestSSHConfigResolvesEveryHost asks ssh itself (ssh -G) what each alias of
// the rendered configuration means: the host's address on nodeInterfaceId,
// the node user, and the node keys. A name that is no alias resolves to
// itself, showing the check can fail.
func TestSSHConfigResolvesEveryHost(t *testing.T) {
	sshBin := testtool.Path(t, "ssh")
	for _, c := range []string{"full", "multiple"} {
		t.Run(c, func(t *testing.T) {
			in := loadInputs(t, c)
			jh := in.Cluster.Spec.Services.JumpHost[0]
			cm := find[*corev1.ConfigMap](t, build(t, in).Objects, serviceName(TypeJumpHost, in.Cluster.Name, 0))
			path := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(path, []byte(cm.Data[keySSHConfig]), 0o600); err != nil {
				t.Fatal(err)
			}
			var keys []string
			if len(in.SSHKeys) > 0 {
				keys = privateKeyFiles(in.SSHKeys[0])
			}
			type row struct{ alias, hostname string }
			var rows []row
			for _, h := range in.Hosts {
				rows = append(rows, row{h.Name, h.IPs[jh.NodeInterface]})
			}
			rows = append(rows, row{"not-a-host", "not-a-host"})
			for _, r := range rows {
				out, err := exec.CommandContext(t.Context(), sshBin, "-G", "-F", path, r.alias).CombinedOutput()
				if err != nil {
					t.Fatalf("ssh -G %s: %v\n%s", r.alias, err, out)
				}
				got := sshOptions(string(out))
				if got["hostname"][0] != r.hostname {
					t.Errorf("%s: hostname %v, want %s", r.alias, got["hostname"], r.hostname)
				}
				if r.alias == "not-a-host" {
					continue
				}
				if got["user"][0] != nodeSSHUser {
					t.Errorf("%s: user %v", r.alias, got["user"])
				}
				// Without keys ssh falls back to its default files.
				var fromSecret []string
				for _, f := range got["identityfile"] {
					if strings.HasPrefix(f, sshKeysDir+"/") {
						fromSecret = append(fromSecret, strings.TrimPrefix(f, sshKeysDir+"/"))
					}
				}
				if strings.Join(fromSecret, " ") != strings.Join(keys, " ") {
					t.Errorf("%s: identity files %v, want %v in %s", r.alias, got["identityfile"], keys, sshKeysDir)
				}
			}
		})
	}
}

// sshOptions parses ssh -G output: option -> its values.
func sshOptions(out string) map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok {
			m[k] = append(m[k], v)
		}
	}
	return m
}

// powerEnv is a jump host's power command and BMC credential files, as the
// pod would mount them, written from Build's objects.
type powerEnv struct {
	dir, script, bmcDir, argLog string
	env                         []string
}

// newPowerEnv writes jump host 0's power script and BMC Secret into a
// directory, and puts on PATH a curl that logs its arguments before running
// the real one.
func newPowerEnv(t *testing.T, in Inputs) *powerEnv {
	t.Helper()
	curl := testtool.Path(t, "curl")
	bash := testtool.Path(t, "bash")
	b := build(t, in)
	name := serviceName(TypeJumpHost, in.Cluster.Name, 0)
	cm := find[*corev1.ConfigMap](t, b.Objects, name)
	secret := find[*corev1.Secret](t, b.Objects, bmcSecretName(name))
	e := &powerEnv{dir: t.TempDir()}
	e.script = filepath.Join(e.dir, "power")
	e.bmcDir = filepath.Join(e.dir, "bmc")
	e.argLog = filepath.Join(e.dir, "curl-args")
	bin := filepath.Join(e.dir, "bin")
	for _, d := range []string{e.bmcDir, bin} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(e.script, []byte(cm.Data[keyPower]), 0o755); err != nil {
		t.Fatal(err)
	}
	for k, v := range secret.Data {
		if err := os.WriteFile(filepath.Join(e.bmcDir, k), v, 0o400); err != nil {
			t.Fatal(err)
		}
	}
	wrapper := "#!" + bash + "\nprintf '%s\\n' \"$*\" >>" + shellQuote(e.argLog) + "\nexec " + shellQuote(curl) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "curl"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	// Only what the script needs: no proxy settings of the machine's.
	e.env = []string{"PATH=" + bin + ":/usr/bin:/bin", "SIP_BMC_DIR=" + e.bmcDir, "LC_ALL=C"}
	return e
}

func (e *powerEnv) run(t *testing.T, extraEnv []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "bash", append([]string{e.script}, args...)...)
	cmd.Env = append(append([]string{}, e.env...), extraEnv...)
	var o, s bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &s
	err = cmd.Run()
	return o.String(), s.String(), err
}

// startEmulator serves three hosts with credentials of their own over
// Redfish on loopback, and returns Inputs with a jump host whose hosts are
// its: node-a and node-b by their system's address, node-c by the service's
// address only (its system is found through the Systems collection, which
// lists only what its credentials open).
func startEmulator(t *testing.T, proxy bool) (*emulator.Server, Inputs) {
	t.Helper()
	hosts := []emulator.Host{
		{Name: "node-a", Username: "admin-a", Password: `pass "a" \ with $dollar`},
		{Name: "node-b", Username: "admin-b", Password: "pass-b"},
		{Name: "node-c", Username: "admin-c", Password: "pass-c"},
	}
	srv, err := emulator.New(emulator.Config{Username: "nobody", Password: "unused-default", Hosts: hosts}, emulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	base, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in := loadInputs(t, "minimal")
	in.Cluster.Spec.Services.LoadBalancerControlPlane = nil
	in.Cluster.Spec.Services.JumpHost = []sipv1.JumpHostService{{
		SIPClusterService:  sipv1.SIPClusterService{Image: "jump-host", NodeInterface: "oam-ipv4"},
		NodePort:           30022,
		BMC:                &sipv1.BMCOpts{Proxy: proxy},
		NodeSSHPrivateKeys: "keys",
	}}
	for i, h := range hosts {
		addr := srv.Address(h.Name)
		if h.Name == "node-c" {
			addr = "redfish+" + base
		}
		in.Hosts = append(in.Hosts, Host{
			Name: h.Name, Role: sipv1.RoleWorker, IPs: map[string]string{"oam-ipv4": "10.0.0." + strconv.Itoa(i+1)},
			BMCAddress: addr, BMCUsername: h.Username, BMCPassword: h.Password,
		})
	}
	return srv, in
}

// TestPowerScriptAgainstEmulator runs the rendered power command against
// the project's Redfish emulator and checks the hosts' power as the
// emulator records it.
func TestPowerScriptAgainstEmulator(t *testing.T) {
	srv, in := startEmulator(t, false)
	e := newPowerEnv(t, in)
	power := func(host string) bool {
		st, ok := srv.State(host)
		if !ok {
			t.Fatalf("no host %s", host)
		}
		return st.PowerOn
	}

	out, _, err := e.run(t, nil, "list")
	if err != nil || out != "node-a\nnode-b\nnode-c\n" {
		t.Fatalf("power list: %q, %v", out, err)
	}
	steps := []struct {
		host, verb string
		wantOut    string
		wantOn     bool
	}{
		{"node-a", "on", "node-a: On requested\n", true},
		{"node-a", "status", "node-a: On\n", true},
		{"node-a", "off", "node-a: ForceOff requested\n", false},
		{"node-a", "status", "node-a: Off\n", false},
		{"node-b", "on", "node-b: On requested\n", true},
		{"node-b", "reboot", "node-b: ForceRestart requested\n", true},
		{"node-c", "on", "node-c: On requested\n", true},
		{"node-c", "status", "node-c: On\n", true},
	}
	for _, s := range steps {
		out, stderr, err := e.run(t, nil, s.host, s.verb)
		if err != nil || out != s.wantOut {
			t.Fatalf("power %s %s: %q, %v; stderr %s", s.host, s.verb, out, err, stderr)
		}
		if power(s.host) != s.wantOn {
			t.Fatalf("after power %s %s the emulator has the host on=%v", s.host, s.verb, !s.wantOn)
		}
	}
	if st, _ := srv.State("node-b"); st.Resets != 2 {
		t.Errorf("node-b had %d resets, want 2 (on, reboot)", st.Resets)
	}

	failures := []struct {
		name    string
		args    []string
		prepare func()
		want    string
	}{
		{"unknown host", []string{"node-z", "on"}, nil, "unknown host node-z"},
		{"unknown verb", []string{"node-a", "explode"}, nil, "usage"},
		{"no arguments", nil, nil, "usage"},
		{"wrong password", []string{"node-b", "status"}, func() {
			p := filepath.Join(e.bmcDir, "node-b.password")
			_ = os.Chmod(p, 0o600)
			if err := os.WriteFile(p, []byte("wrong"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "node-b: GET"},
		{"credentials missing", []string{"node-c", "status"}, func() {
			if err := os.Remove(filepath.Join(e.bmcDir, "node-c.username")); err != nil {
				t.Fatal(err)
			}
		}, "node-c: no BMC username"},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			if f.prepare != nil {
				f.prepare()
			}
			_, stderr, err := e.run(t, nil, f.args...)
			if err == nil {
				t.Fatal("power succeeded")
			}
			if !strings.Contains(stderr, f.want) {
				t.Errorf("stderr %q does not contain %q", stderr, f.want)
			}
			for _, h := range in.Hosts {
				if strings.Contains(stderr, h.BMCPassword) {
					t.Errorf("stderr %q holds the password of %s", stderr, h.Name)
				}
			}
		})
	}

	// curl was called many times, never with a credential in its arguments.
	args, err := os.ReadFile(e.argLog)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(args, []byte("\n")) < len(steps) {
		t.Fatalf("curl logged only %d calls", bytes.Count(args, []byte("\n")))
	}
	for _, h := range in.Hosts {
		for _, secret := range []string{h.BMCPassword, "wrong"} {
			if bytes.Contains(args, []byte(secret)) {
				t.Errorf("curl's arguments hold the password %q:\n%s", secret, args)
			}
		}
	}
}

// TestPowerScriptProxy: with bmc.proxy false the command bypasses a proxy
// set in the environment; with bmc.proxy true it refuses to run without
// one and goes through the one set.
func TestPowerScriptProxy(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		proxied.Add(1)
		out := r.Clone(r.Context())
		out.RequestURI = ""
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer func() { _ = resp.Body.Close() }() // only read: closing cannot lose data
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	viaProxy := []string{"http_proxy=" + proxy.URL}

	tests := []struct {
		name        string
		bmcProxy    bool
		env         []string
		wantErr     string
		wantProxied int32
	}{
		{"direct, a proxy in the environment is bypassed", false, viaProxy, "", 0},
		{"through the proxy", true, viaProxy, "", 1},
		{"proxy wanted, none set", true, nil, "no proxy is set", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, in := startEmulator(t, tt.bmcProxy)
			e := newPowerEnv(t, in)
			before := proxied.Load()
			out, stderr, err := e.run(t, tt.env, "node-a", "status")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(stderr, tt.wantErr) {
					t.Fatalf("power: %v, stderr %q; want an error containing %q", err, stderr, tt.wantErr)
				}
			} else if err != nil || out != "node-a: Off\n" {
				t.Fatalf("power: %q, %v, stderr %q", out, err, stderr)
			}
			if got := proxied.Load() - before; got != tt.wantProxied {
				t.Errorf("%d requests went through the proxy, want %d", got, tt.wantProxied)
			}
		})
	}
}
