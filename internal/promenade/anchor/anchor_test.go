package anchor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/promenade/docset"
	"github.com/airshipit/airship-go/internal/promenade/promenadetest"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// exampleSet is the example site with freshly generated certificates.
func exampleSet(t *testing.T) *docset.Set { return promenadetest.ExampleSet(t) }

func TestObjects(t *testing.T) {
	objs, err := Objects(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 18 {
		t.Fatalf("%d objects, want ConfigMap, Secret and DaemonSet for 6 anchors", len(objs))
	}
	selectors := map[string]string{}
	for _, o := range objs {
		if ds, ok := o.(*appsv1.DaemonSet); ok {
			selectors[ds.Name] = fmt.Sprint(ds.Spec.Template.Spec.NodeSelector)
			// No anchor on a Node marked not Promenade's; any other
			// Node's labels do not keep it off.
			for node, want := range map[string]bool{"": true, v1.AnchorsLabel + "=enabled": true, v1.AnchorsLabel + "=" + v1.AnchorsDisabled: false} {
				set, err := labels.ConvertSelectorToLabelsMap(node)
				if err != nil {
					t.Fatal(err)
				}
				if got := nodeAffinityAdmits(t, &ds.Spec.Template.Spec, set); got != want {
					t.Errorf("%s on a Node labelled %q: %v, want %v", ds.Name, node, got, want)
				}
			}
		}
		if cm, ok := o.(*corev1.ConfigMap); ok && cm.Name == "calico-etcd-anchor" {
			tmpl := cm.Data["calico-etcd.yaml.tmpl"]
			for _, want := range []string{"--cert-file=/etc/kubernetes/calico-etcd/pki/server.pem", "--listen-client-urls=https://0.0.0.0:6666",
				"--initial-cluster=n0=https://192.168.77.10:6667", "--initial-cluster-token=calico-etcd", "path: /etc/kubernetes/calico-etcd/pki"} {
				if !strings.Contains(tmpl, want) {
					t.Errorf("calico-etcd manifest template lacks %q", want)
				}
			}
			if strings.Contains(tmpl, "/etc/kubernetes/etcd/pki") {
				t.Error("calico-etcd uses the Kubernetes etcd's certificates")
			}
		}
		if cm, ok := o.(*corev1.ConfigMap); ok && cm.Name == "etcd-anchor" {
			tmpl := cm.Data["kubernetes-etcd.yaml.tmpl"]
			for _, want := range []string{"--initial-cluster=${ETCD_INITIAL_CLUSTER}", "--initial-cluster-state=${ETCD_INITIAL_CLUSTER_STATE}", "--name=${NODE_NAME}"} {
				if !strings.Contains(tmpl, want) {
					t.Errorf("etcd manifest template lacks %q", want)
				}
			}
		}
	}
	want := map[string]string{
		"apiserver-anchor": "map[kubernetes-apiserver:enabled]", "controller-manager-anchor": "map[kubernetes-controller-manager:enabled]",
		"scheduler-anchor": "map[kubernetes-scheduler:enabled]", "etcd-anchor": "map[kubernetes-etcd:enabled]", "calico-etcd-anchor": "map[calico-etcd:enabled]", "haproxy-anchor": "map[]",
	}
	if fmt.Sprint(selectors) != fmt.Sprint(want) {
		t.Errorf("node selectors %v, want %v", selectors, want)
	}
	if _, err := YAML(objs); err != nil {
		t.Fatal(err)
	}
}

func TestAnchorScriptShellcheck(t *testing.T) {
	sc := testtool.Path(t, "shellcheck")
	if out, err := exec.CommandContext(t.Context(), sc, "-s", "sh", "anchor.sh").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// anchorRun runs one round of the anchor loop against a fake host root.
type anchorRig struct {
	host, cm, pki, bin string
}

func newRig(t *testing.T, files map[string]string, pkiFiles map[string]string, list string) *anchorRig {
	t.Helper()
	d := t.TempDir()
	r := &anchorRig{host: d + "/host", cm: d + "/cm", pki: d + "/pki", bin: d + "/bin"}
	for _, dir := range []string{r.host, r.cm, r.pki, r.bin} {
		os.MkdirAll(dir, 0o755) //nolint:errcheck
	}
	files["files"] = list
	for k, v := range files {
		os.WriteFile(filepath.Join(r.cm, k), []byte(v), 0o644) //nolint:errcheck
	}
	for k, v := range pkiFiles {
		os.WriteFile(filepath.Join(r.pki, k), []byte(v), 0o400) //nolint:errcheck
	}
	return r
}

func (r *anchorRig) run(t *testing.T, env ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "sh", "anchor.sh")
	cmd.Env = append(os.Environ(), append([]string{"HOST_ROOT=" + r.host, "ANCHOR_DIR=" + r.cm, "PKI_DIR=" + r.pki,
		"ANCHOR_ONCE=1", "READY_FILE=" + r.host + "/ready", "NODE_NAME=n1", "NODE_IP=10.0.0.11", "PATH=" + r.bin + ":" + os.Getenv("PATH")}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("anchor: %v\n%s", err, out)
	}
	return string(out)
}

func TestAnchorCopiesOnlyWhenChanged(t *testing.T) {
	r := newRig(t, map[string]string{"pod.yaml.tmpl": "ip: ${NODE_IP}\nname: ${NODE_NAME}\n"},
		map[string]string{"tls-key.pem": "KEY", "server-n1.pem": "N1", "server-n2.pem": "N2"},
		"pod.yaml.tmpl /etc/kubernetes/manifests/pod.yaml 0600\ntls-key.pem /etc/kubernetes/pki/tls-key.pem 0600\nserver-${NODE_NAME}.pem /etc/kubernetes/pki/server.pem 0644\n")
	out := r.run(t, "ANCHOR_NAME=apiserver")
	manifest := r.host + "/etc/kubernetes/manifests/pod.yaml"
	b, err := os.ReadFile(manifest)
	if err != nil || string(b) != "ip: 10.0.0.11\nname: n1\n" {
		t.Fatalf("manifest %q %v\n%s", b, err, out)
	}
	if b, _ := os.ReadFile(r.host + "/etc/kubernetes/pki/server.pem"); string(b) != "N1" {
		t.Errorf("per-node file %q", b)
	}
	fi, _ := os.Stat(r.host + "/etc/kubernetes/pki/tls-key.pem")
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v", fi.Mode().Perm())
	}
	if _, err := os.Stat(r.host + "/ready"); err != nil {
		t.Error("not marked ready")
	}
	before, _ := os.Stat(manifest)
	time.Sleep(10 * time.Millisecond)
	out = r.run(t, "ANCHOR_NAME=apiserver")
	if strings.Contains(out, "updated") {
		t.Errorf("second round rewrote unchanged files:\n%s", out)
	}
	after, _ := os.Stat(manifest)
	if !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		t.Error("unchanged manifest was rewritten")
	}
	os.WriteFile(r.cm+"/pod.yaml.tmpl", []byte("ip: ${NODE_IP}\nv: 2\n"), 0o644) //nolint:errcheck
	out = r.run(t, "ANCHOR_NAME=apiserver")
	if !strings.Contains(out, "updated "+manifest) || strings.Contains(out, "server.pem") {
		t.Errorf("changed manifest: only it should be updated:\n%s", out)
	}
}

func TestEtcdAnchorAddsLearner(t *testing.T) {
	r := newRig(t, map[string]string{"kubernetes-etcd.yaml.tmpl": "cluster: ${ETCD_INITIAL_CLUSTER}\nstate: ${ETCD_INITIAL_CLUSTER_STATE}\n"},
		map[string]string{}, "kubernetes-etcd.yaml.tmpl /etc/kubernetes/manifests/kubernetes-etcd.yaml 0600\n")
	log := filepath.Join(t.TempDir(), "etcdctl.log")
	state := filepath.Join(t.TempDir(), "added")
	stub := fmt.Sprintf(`#!/bin/sh
echo "$*" >>%[1]q
case "$*" in
*"member list"*)
  echo "8e9e05c52164694d, started, n0, https://10.0.0.10:2380, https://10.0.0.10:2379, false"
  if [ -f %[2]q ]; then echo "91bc3c398fb3c146, unstarted, , https://10.0.0.11:2380, , true"; fi ;;
*"member add"*)
  touch %[2]q
  echo "Member 91bc3c398fb3c146 added to cluster"
  echo 'ETCD_NAME="n1"'
  echo 'ETCD_INITIAL_CLUSTER="n0=https://10.0.0.10:2380,n1=https://10.0.0.11:2380"'
  echo 'ETCD_INITIAL_CLUSTER_STATE="existing"' ;;
*"member promote"*) exit 1 ;;
esac
`, log, state)
	os.WriteFile(r.bin+"/etcdctl", []byte(stub), 0o755) //nolint:errcheck
	env := []string{"ANCHOR_NAME=etcd", "ETCD_ENDPOINTS=https://10.0.0.10:2379", "ETCD_PEER_PORT=2380"}
	out := r.run(t, env...)
	b, _ := os.ReadFile(r.host + "/etc/kubernetes/manifests/kubernetes-etcd.yaml")
	if string(b) != "cluster: n0=https://10.0.0.10:2380,n1=https://10.0.0.11:2380\nstate: existing\n" {
		t.Fatalf("manifest %q\n%s", b, out)
	}
	calls, _ := os.ReadFile(log)
	if !strings.Contains(string(calls), "member add n1 --learner --peer-urls=https://10.0.0.11:2380") {
		t.Errorf("etcdctl calls:\n%s", calls)
	}
	if !strings.Contains(string(calls), "member promote 91bc3c398fb3c146") {
		t.Errorf("learner not promoted:\n%s", calls)
	}
	// Next round: the manifest exists, so the member is not added again.
	os.WriteFile(log, nil, 0o644) //nolint:errcheck
	r.run(t, env...)
	calls, _ = os.ReadFile(log)
	if strings.Contains(string(calls), "member add") {
		t.Errorf("member added twice:\n%s", calls)
	}
}

// TestAnchorsReadyInFullMode applies the anchors to a real API server with
// controllers, scheduler and kwok nodes, and waits for every DaemonSet to be
// Ready on the nodes its selector picks.
func TestAnchorsReadyInFullMode(t *testing.T) {
	objs, err := Objects(exampleSet(t))
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.StartFull(t, testenv.Options{Nodes: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := env.Client
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	// Two control-plane nodes and one worker.
	for i, n := range nodes.Items {
		if i == 2 {
			break
		}
		patch := client.MergeFrom(n.DeepCopy())
		for _, l := range []string{"kubernetes-apiserver", "kubernetes-controller-manager", "kubernetes-scheduler", "kubernetes-etcd"} {
			n.Labels[l] = "enabled"
		}
		if err := c.Patch(ctx, &n, patch); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
	want := map[string]int32{"apiserver-anchor": 2, "controller-manager-anchor": 2, "scheduler-anchor": 2, "etcd-anchor": 2, "haproxy-anchor": 3}
	for name, n := range want {
		var last string
		err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			var ds appsv1.DaemonSet
			if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, &ds); err != nil {
				return false, err
			}
			s := ds.Status
			last = fmt.Sprintf("desired=%d ready=%d updated=%d", s.DesiredNumberScheduled, s.NumberReady, s.UpdatedNumberScheduled)
			return s.ObservedGeneration == ds.Generation && s.DesiredNumberScheduled == n && s.NumberReady == n && s.UpdatedNumberScheduled == n, nil
		})
		if err != nil {
			t.Fatalf("DaemonSet %s not Ready on %d nodes: %v (%s)", name, n, err, last)
		}
	}
}

// TestAnchorRemovesWhenTold: with ANCHOR_REMOVE the anchor takes its files
// off the host (the static pod first) and leaves other files alone.
func TestAnchorRemovesWhenTold(t *testing.T) {
	r := newRig(t, map[string]string{"pod.yaml": "pod\n"}, map[string]string{"tls.pem": "CERT"},
		"# key path mode\npod.yaml /etc/kubernetes/manifests/pod.yaml 0600\ntls.pem /etc/kubernetes/pki/tls.pem 0644\n")
	r.run(t, "ANCHOR_NAME=apiserver")
	other := r.host + "/etc/kubernetes/pki/other.pem"
	os.WriteFile(other, []byte("x"), 0o644) //nolint:errcheck
	out := r.run(t, "ANCHOR_NAME=apiserver", "ANCHOR_REMOVE=1")
	if i, j := strings.Index(out, "removed /etc/kubernetes/manifests/pod.yaml"), strings.Index(out, "removed /etc/kubernetes/pki/tls.pem"); i < 0 || j < i {
		t.Errorf("want the manifest removed, then the certificate:\n%s", out)
	}
	for _, p := range []string{"/etc/kubernetes/manifests/pod.yaml", "/etc/kubernetes/pki/tls.pem"} {
		if _, err := os.Stat(r.host + p); !os.IsNotExist(err) {
			t.Errorf("%s still on the host (%v)", p, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file the anchor does not own was removed: %v", err)
	}
	if out := r.run(t, "ANCHOR_NAME=apiserver", "ANCHOR_REMOVE=1"); strings.Contains(out, "removed") {
		t.Errorf("second round removed again:\n%s", out)
	}
}

// nodeAffinityAdmits evaluates the pod's required node affinity (match
// expressions only, the kind the anchors use) against a Node's labels.
func nodeAffinityAdmits(t *testing.T, pod *corev1.PodSpec, node labels.Set) bool {
	t.Helper()
	if pod.Affinity == nil || pod.Affinity.NodeAffinity == nil || pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		sel := labels.NewSelector()
		for _, e := range term.MatchExpressions {
			op := map[corev1.NodeSelectorOperator]selection.Operator{corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
				corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist}[e.Operator]
			r, err := labels.NewRequirement(e.Key, op, e.Values)
			if err != nil {
				t.Fatal(err)
			}
			sel = sel.Add(*r)
		}
		if sel.Matches(node) {
			return true
		}
	}
	return false
}
