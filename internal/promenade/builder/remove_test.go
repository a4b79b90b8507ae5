package builder

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/test/testtool"
)

// indexOf returns the line number of the first call containing want, or
// fails the test.
func indexOf(t *testing.T, calls []string, want string) int {
	t.Helper()
	for i, c := range calls {
		if strings.Contains(c, want) {
			return i
		}
	}
	t.Fatalf("no call %q in:\n%s", want, strings.Join(calls, "\n"))
	return -1
}

func TestRemovalScriptUndoesTheJoin(t *testing.T) {
	scripts := buildExample(t, Options{})
	dir := t.TempDir()
	if err := WriteScripts(dir, scripts); err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, "n2", "192.168.77.12")
	sb.run(t, filepath.Join(dir, "join-n2.sh"))
	for _, p := range []string{"/etc/kubernetes/kubelet/kubeconfig.yaml", "/opt/kubernetes/bin/kubelet", "/var/lib/promenade/join-complete"} {
		if _, err := os.Stat(sb.root + p); err != nil {
			t.Fatalf("the join did not lay down %s: %v", p, err)
		}
	}
	// kubectl now knows the node until it is deleted.
	gone := filepath.Join(filepath.Dir(sb.root), "node-deleted")
	stub := "#!/bin/bash\necho \"kubectl $*\" >>" + sb.log + "\n" +
		`case "$*" in
  *"get node n2 --ignore-not-found -o name"*) [[ -f ` + gone + ` ]] || echo node/n2 ;;
  *"delete node n2"*) touch ` + gone + ` ;;
esac
`
	if err := os.WriteFile(filepath.Join(sb.bin, "kubectl"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sb.root+"/etc/hosts", []byte("127.0.0.1 localhost\n# BEGIN promenade\n1.2.3.4 x\n# END promenade\n10.0.0.1 mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	calls := strings.Split(strings.TrimSpace(sb.run(t, filepath.Join(dir, "remove-n2.sh"))), "\n")
	drain := indexOf(t, calls, "drain n2 --ignore-daemonsets --delete-emptydir-data")
	unlabel := indexOf(t, calls, "label node n2 kubernetes-apiserver- kubernetes-controller-manager- kubernetes-etcd- kubernetes-scheduler- node-role.kubernetes.io/master- ucp-control-plane-")
	del := indexOf(t, calls, "delete node n2 --ignore-not-found")
	kubelet := indexOf(t, calls, "systemctl disable --now kubelet")
	runtime := indexOf(t, calls, "systemctl disable --now containerd")
	if !(drain < unlabel && unlabel < del && del < kubelet && kubelet < runtime) {
		t.Errorf("steps out of order (drain %d, unlabel %d, delete %d, kubelet %d, runtime %d):\n%s", drain, unlabel, del, kubelet, runtime, strings.Join(calls, "\n"))
	}
	if !strings.Contains(calls[drain], "--kubeconfig ") || !strings.Contains(calls[drain], "/kubeconfig.yaml") {
		t.Errorf("kubectl without the embedded kubeconfig: %s", calls[drain])
	}
	for _, p := range []string{"/etc/kubernetes", "/opt/kubernetes/bin/kubelet", "/var/lib/promenade", "/etc/promenade/hosts", "/etc/containerd/config.toml"} {
		if _, err := os.Stat(sb.root + p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	hosts, err := os.ReadFile(sb.root + "/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	if string(hosts) != "127.0.0.1 localhost\n10.0.0.1 mine\n" {
		t.Errorf("/etc/hosts after removal:\n%s", hosts)
	}

	// Again: the node is gone, so nothing is drained or deleted, and the
	// local cleanup succeeds on what is already clean.
	again := sb.run(t, filepath.Join(dir, "remove-n2.sh"))
	for _, unwanted := range []string{"drain", "delete node", "label node"} {
		if strings.Contains(again, unwanted) {
			t.Errorf("second run called %q:\n%s", unwanted, again)
		}
	}
	if !strings.Contains(again, "systemctl daemon-reload") {
		t.Errorf("second run skipped the local cleanup:\n%s", again)
	}
}

func TestRemovalScriptRefusesWrongHost(t *testing.T) {
	testtool.Path(t, "bash")
	scripts := buildExample(t, Options{})
	dir := t.TempDir()
	if err := WriteScripts(dir, scripts); err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, "n1", "192.168.77.11")
	if err := os.MkdirAll(sb.root+"/etc/kubernetes", 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := sb.runErr(filepath.Join(dir, "remove-n2.sh"))
	if err == nil || !strings.Contains(out, "hostname is n1, but this script is for n2") {
		t.Fatalf("got %v:\n%s", err, out)
	}
	calls, _ := os.ReadFile(sb.log)
	if strings.Contains(string(calls), "kubectl") || strings.Contains(string(calls), "systemctl") {
		t.Errorf("the script acted on the wrong host:\n%s", calls)
	}
	if _, err := os.Stat(sb.root + "/etc/kubernetes"); err != nil {
		t.Errorf("the wrong host's files were removed: %v", err)
	}
}

func TestRemovalScriptStopsWhenTheAPIIsUnreachable(t *testing.T) {
	testtool.Path(t, "bash")
	scripts := buildExample(t, Options{})
	dir := t.TempDir()
	if err := WriteScripts(dir, scripts); err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, "n2", "192.168.77.12")
	stub := "#!/bin/bash\necho \"kubectl $*\" >>" + sb.log + "\necho 'connection refused' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(sb.bin, "kubectl"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sb.root+"/etc/kubernetes", 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := sb.runErr(filepath.Join(dir, "remove-n2.sh"))
	if err == nil {
		t.Fatalf("the script went on without the API server:\n%s", out)
	}
	calls, _ := os.ReadFile(sb.log)
	if strings.Contains(string(calls), "systemctl") {
		t.Errorf("the node was cleaned up although it is still in the cluster:\n%s", calls)
	}
	if _, err := os.Stat(sb.root + "/etc/kubernetes"); err != nil {
		t.Errorf("files removed although the node is still in the cluster: %v", err)
	}
}

// TestRemovalScriptsKnowTheEtcdMembers: a node labelled
// kubernetes-etcd=enabled gets the etcd member removal, naming its member
// (hostname and peer URL); the genesis script names the auxiliary member too.
func TestRemovalScriptsKnowTheEtcdMembers(t *testing.T) {
	b, err := New(exampleSet(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range b.Nodes() {
		s, err := b.RemovalScript(n)
		if err != nil {
			t.Fatal(err)
		}
		member := slices.Contains(labelsOf(n.Labels), "kubernetes-etcd=enabled")
		own := "ETCD_OWN=('" + n.Hostname + " https://" + n.IP + ":2380')"
		if strings.Contains(string(s), own) != member || strings.Contains(string(s), "etcd_remove\n") != member {
			t.Errorf("%s: etcd member %v, but the script's etcd removal is not %q:\n%s", n.Hostname, member, own, s)
		}
	}
	g, err := b.GenesisRemovalScript()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(g), "ETCD_OWN=('n0 https://192.168.77.10:2380' 'auxiliary-0 https://192.168.77.10:22380')") {
		t.Errorf("remove-n0.sh does not name both genesis members:\n%s", g)
	}
}

// TestGenesisRemovalScriptNeedsAnotherAPIServer: remove-n0.sh refuses,
// before draining, while no other node is labelled kubernetes-apiserver.
func TestGenesisRemovalScriptNeedsAnotherAPIServer(t *testing.T) {
	dir := writeExampleScripts(t)
	sb := newSandbox(t, "n0", "192.168.77.10")
	stub := "#!/bin/bash\necho \"kubectl $*\" >>" + sb.log + "\n" + `case "$*" in
  *"get node n0 --ignore-not-found -o name"*) echo node/n0 ;;
  *"get nodes -l kubernetes-apiserver=enabled -o name"*) echo node/n0 ;;
esac
`
	if err := os.WriteFile(filepath.Join(sb.bin, "kubectl"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := sb.runErr(filepath.Join(dir, "remove-n0.sh"))
	if err == nil || !strings.Contains(out, "refusing to remove the genesis node n0: no other node is labelled kubernetes-apiserver=enabled") {
		t.Fatalf("got %v:\n%s", err, out)
	}
	calls, _ := os.ReadFile(sb.log)
	for _, unwanted := range []string{"drain", "systemctl"} {
		if strings.Contains(string(calls), unwanted) {
			t.Errorf("the refused removal called %q:\n%s", unwanted, calls)
		}
	}
}
