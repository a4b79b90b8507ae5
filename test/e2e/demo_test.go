//go:build e2e

package e2e

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestDemoAndDemoDown runs the README's demo as `make demo` does after its
// set-up and build steps (hack/demo.sh from the repository root, with a
// fresh HOME and TMPDIR), runs the commands it prints, and then
// `make demo-down`'s script: every process gone, the directories the demo
// wrote removed, and nothing else. It uses the demo's fixed addresses,
// 127.0.0.1:8000 (the emulated BMCs) and 127.0.0.1:16443 (the target
// cluster).
func TestDemoAndDemoDown(t *testing.T) {
	requireBinaries(t)
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"127.0.0.1:8000", "127.0.0.1:16443"} {
		if c, err := (&net.Dialer{Timeout: time.Second}).DialContext(t.Context(), "tcp", addr); err == nil {
			_ = c.Close() // only probed
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
	if r := shell("make build"); r.code != 0 {
		t.Fatalf("make build: %s", r.stdout)
	}
	demo := shell("bash hack/demo.sh")
	if demo.code != 0 {
		t.Fatalf("demo: exit %d\n%s", demo.code, demo.stdout)
	}
	for _, p := range []string{"site-pki", "initinfra-ephemeral", "workload-ephemeral", "armada-ephemeral", "clusterctl-init-ephemeral", "hosts-ephemeral",
		"hosts-power-ephemeral", "sip-ephemeral", "controlplane-ephemeral", "workers-ephemeral", "core-charts-target", "initinfra-target", "clusterctl-init-target",
		"clusterctl-move", "clusterctl-move-sip", "workload-target"} {
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
	if len(printed) != 5 {
		t.Fatalf("the demo printed %d commands to look with, want 5:\n%s", len(printed), demo.stdout)
	}
	looked := shell(strings.Join(printed, "\n"))
	if looked.code != 0 {
		t.Fatalf("the printed commands failed (exit %d):\n%s\n%s", looked.code, strings.Join(printed, "\n"), looked.stdout)
	}
	// After the pivot the target cluster holds its machines, hosts and
	// SIPCluster.
	for _, want := range []string{"workload-target", "machine.cluster.x-k8s.io/tenant-1-cp-0", "baremetalhost.metal3.io/node01",
		"sipcluster.airship.airshipit.org/tenant-1", "armadachart.armada.airshipit.org/web",
		// Promenade's core components, from core-charts-target.
		"armadachart.armada.airshipit.org/etcd", "armadachart.armada.airshipit.org/coredns"} {
		if !strings.Contains(looked.stdout, want) {
			t.Errorf("the printed commands' output lacks %q:\n%s", want, looked.stdout)
		}
	}

	// The site goes on reconciling after the demo returned: a host powered
	// off behind the operators' back is powered on again (spec.online).
	expectPoweredOnAgain(t, "node01")

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
	// cluster local down returns once the processes exited.
	for _, addr := range []string{"127.0.0.1:8000", "127.0.0.1:16443"} {
		if c, err := (&net.Dialer{Timeout: time.Second}).DialContext(t.Context(), "tcp", addr); err == nil {
			_ = c.Close() // only probed
			t.Errorf("%s still answers after demo-down", addr)
		}
	}
}

// expectPoweredOnAgain forces the demo's emulated host off through its BMC
// (examples/site/function/hosts/emulator.yaml: 127.0.0.1:8000, its
// example credentials) and waits for metal3-operator to power it on again.
func expectPoweredOnAgain(t *testing.T, host string) {
	t.Helper()
	system := "http://127.0.0.1:8000/redfish/v1/Systems/" + host
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
