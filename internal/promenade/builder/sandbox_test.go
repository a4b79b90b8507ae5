package builder

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/test/testtool"
)

// sandbox runs a node script as an unprivileged user: PROMENADE_ROOT
// redirects every write into a directory, and stub commands on PATH stand
// in for systemctl, apt-get, kubectl, curl and the host queries. Every stub
// call is logged.
type sandbox struct {
	root, bin, log string
	// armadaStarted is touched by the stub armada-operator: the stub
	// kubectl reports the ArmadaManifest and charts Ready once it exists,
	// unless env sets STUB_ARMADA_NEVER_READY=1.
	armadaStarted string
	env           []string
	// ctx is the test's: a script still running when it ends is killed.
	ctx context.Context
}

func newSandbox(t *testing.T, hostname, ip string) *sandbox {
	t.Helper()
	dir := t.TempDir()
	s := &sandbox{ctx: t.Context(), root: filepath.Join(dir, "root"), bin: filepath.Join(dir, "bin"), log: filepath.Join(dir, "calls.log"),
		armadaStarted: filepath.Join(dir, "armada-started")}
	// The scripts run under bash with tar and sha256sum; the stubs sleep.
	testtool.Path(t, "bash")
	testtool.Path(t, "tar")
	testtool.Path(t, "sha256sum")
	realSleep := testtool.Path(t, "sleep")
	for _, d := range []string{s.root + "/etc", s.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(s.root+"/etc/hosts", []byte("127.0.0.1 localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A tarball standing in for the Kubernetes node binaries.
	tgz := filepath.Join(dir, "node.tar.gz")
	writeTarball(t, tgz, map[string]string{
		"kubernetes/node/bin/kubelet": "#!/bin/sh\necho kubelet\n",
		"kubernetes/node/bin/kubectl": "#!/bin/sh\necho kubectl\n",
	})
	// The bootstrap Armada: logs its start and its stop (on SIGTERM) and
	// runs until stopped.
	armadaTgz := filepath.Join(dir, "armada.tar.gz")
	writeTarball(t, armadaTgz, map[string]string{"armada-operator": fmt.Sprintf(`#!/bin/bash
echo "armada-operator $*" >>%q
touch %q
trap 'echo "armada-operator stopped" >>%q; exit 0' TERM
while :; do %q 0.05 & wait $!; done
`, s.log, s.armadaStarted, s.log, realSleep)})

	stubs := map[string]string{
		"id":        `echo 0`,
		"hostname":  `echo ` + hostname,
		"ip":        `echo "2: eth0    inet ` + ip + `/24 brd 192.168.77.255 scope global eth0"`,
		"swapon":    `true`,
		"systemctl": `true`,
		"apt-get":   `true`,
		"curl":      `case "$*" in *dl.k8s.io*) cat ` + tgz + ` ;; *armada-operator.tar.gz*) cat ` + armadaTgz + ` ;; *) echo ok ;; esac`,
		"kubectl": `case "$*" in
  *armadamanifest*|*armadachart*)
    if [[ -z "${STUB_ARMADA_NEVER_READY:-}" && -f ` + s.armadaStarted + ` ]]; then echo True; else echo False; fi ;;
  *phase*) echo Running ;;
  *jsonpath*) echo True ;;
  *) echo ok ;;
esac`,
		"sleep": `true`,
	}
	// Once genesis.sh has launched the bootstrap Armada (its pid file is
	// there), a kubectl call waits until the background stub has logged its
	// start: as a real operator process exists before anyone polls it, and
	// so the call log's order is the script's order.
	pre := map[string]string{"kubectl": fmt.Sprintf(`if [[ -f "${PROMENADE_ROOT}/var/lib/promenade/armada-operator.pid" ]]; then
  for _ in $(seq 200); do [[ -f %q ]] && break; %q 0.01; done
fi`, s.armadaStarted, realSleep)}
	for name, body := range stubs {
		script := fmt.Sprintf("#!/bin/bash\n%s\necho \"%s $*\" >>%q\n%s\n", pre[name], name, s.log, body)
		if err := os.WriteFile(filepath.Join(s.bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// runErr runs a script in the sandbox with an empty call log and returns
// its output.
func (s *sandbox) runErr(script string) (string, error) {
	if err := os.WriteFile(s.log, nil, 0o644); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(s.ctx, "bash", script)
	cmd.Env = append(os.Environ(), "PROMENADE_ROOT="+s.root, "PATH="+s.bin+":"+os.Getenv("PATH"), "PROMENADE_POLL_INTERVAL=0")
	cmd.Env = append(cmd.Env, s.env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (s *sandbox) run(t *testing.T, script string) string {
	t.Helper()
	out, err := s.runErr(script)
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	calls, err := os.ReadFile(s.log)
	if err != nil {
		t.Fatal(err)
	}
	return string(calls)
}

func TestScriptsAreIdempotent(t *testing.T) {
	scripts := buildExample(t, Options{})
	dir := t.TempDir()
	if err := WriteScripts(dir, scripts); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ script, host, ip string }{
		{"genesis.sh", "n0", "192.168.77.10"},
		{"join-n2.sh", "n2", "192.168.77.12"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			sb := newSandbox(t, tc.host, tc.ip)
			first := sb.run(t, filepath.Join(dir, tc.script))
			hosts1, _ := os.ReadFile(sb.root + "/etc/hosts")
			second := sb.run(t, filepath.Join(dir, tc.script))
			hosts2, _ := os.ReadFile(sb.root + "/etc/hosts")

			for _, want := range []string{"apt-get install", "systemctl restart containerd", "systemctl restart kubelet", "kubectl --kubeconfig " + sb.root + "/etc/kubernetes/admin/kubeconfig.yaml label node " + tc.host + " --overwrite"} {
				if !strings.Contains(first, want) {
					t.Errorf("first run did not call %q:\n%s", want, first)
				}
			}
			// The second run changes nothing: no restarts, no downloads.
			for _, unwanted := range []string{"systemctl restart", "dl.k8s.io"} {
				if strings.Contains(second, unwanted) && !(tc.script != "genesis.sh" && unwanted == "dl.k8s.io") {
					t.Errorf("second run called %q:\n%s", unwanted, second)
				}
			}
			if !strings.Contains(second, "label node "+tc.host) {
				t.Error("second run did not re-apply labels")
			}
			if string(hosts1) != string(hosts2) || strings.Count(string(hosts2), "# BEGIN promenade") != 1 {
				t.Errorf("/etc/hosts changed on the second run:\n%s", hosts2)
			}
			if !strings.Contains(string(hosts2), "192.168.77.1 registry") || !strings.HasPrefix(string(hosts2), "127.0.0.1 localhost\n") {
				t.Errorf("/etc/hosts:\n%s", hosts2)
			}
			if _, err := os.Stat(sb.root + "/opt/kubernetes/bin/kubelet"); err != nil {
				t.Error("kubelet binary not installed")
			}
			if tc.script == "genesis.sh" {
				if _, err := os.Stat(sb.root + ManifestDir + "/kube-apiserver.yaml"); err != nil {
					t.Error("apiserver static pod not laid down")
				}
			} else {
				for _, gone := range []string{"/etc/kubernetes/admin", "/usr/local/bin/kubectl"} {
					if _, err := os.Stat(sb.root + gone); err == nil {
						t.Errorf("%s left behind without --leave-kubectl", gone)
					}
				}
			}
			if fi, err := os.Stat(sb.root + "/etc/kubernetes/kubelet/pki/kubelet-key.pem"); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("kubelet key: %v %v", fi, err)
			}
		})
	}
}

func TestScriptRefusesWrongHost(t *testing.T) {
	testtool.Path(t, "bash")
	scripts := buildExample(t, Options{})
	dir := t.TempDir()
	if err := WriteScripts(dir, scripts); err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, "n5", "192.168.77.10")
	cmd := exec.CommandContext(t.Context(), "bash", filepath.Join(dir, "genesis.sh"))
	cmd.Env = append(os.Environ(), "PROMENADE_ROOT="+sb.root, "PATH="+sb.bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "hostname is n5, but this script is for n0") {
		t.Fatalf("got %v:\n%s", err, out)
	}
	if _, err := os.Stat(sb.root + "/etc/kubernetes"); err == nil {
		t.Error("files laid down before host validation passed")
	}
}

// writeTarball writes a gzip tarball of executable files.
func writeTarball(t *testing.T, file string, members map[string]string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		body := members[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
}
