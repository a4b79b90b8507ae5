package docset

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/document"
)

// The example site's control-plane machine carries the Genesis document's
// labels on its kubelet (function/k8scontrol fills them in from the
// document); site/local/controlplane is the phase that renders it.
const (
	exampleSite      = "../../../examples/site"
	controlPlanePath = "site/local/controlplane"
	uuidLabel        = "metal3.io/uuid={{ ds.meta_data.uuid }}"
)

// kubeletLabels is the Genesis document's labels a kubelet may give itself
// (--node-labels refuses the kubernetes.io and k8s.io namespaces), in the
// document's order: static, then dynamic.
func kubeletLabels(g v1.Genesis) []string {
	var out []string
	for _, l := range append(append([]string(nil), g.Labels.Static...), g.Labels.Dynamic...) {
		key, _, _ := strings.Cut(l, "=")
		if strings.Contains(key, "kubernetes.io") || strings.Contains(key, "k8s.io") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func genesisOf(t *testing.T, file string) v1.Genesis {
	t.Helper()
	set, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var g v1.Genesis
	if err := set.One(v1.SchemaGenesis, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// nodeLabels renders the control-plane phase of the site at root and
// returns the KubeadmConfig's kubelet node-labels, failing when the build
// also puts out the local-config documents the labels come through.
func nodeLabels(t *testing.T, root string) string {
	t.Helper()
	b, err := document.Build(filepath.Join(root, controlPlanePath), document.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var value []string
	for _, d := range b.Documents() {
		if d.Kind() == "ConfigMap" && (d.Name() == "promenade-genesis" || d.Name() == "genesis-node-labels") {
			t.Errorf("%s, a local-config document, is in the phase's output", d.ID())
		}
		if d.Kind() != "KubeadmConfig" {
			continue
		}
		var kc struct {
			Spec struct {
				InitConfiguration struct {
					NodeRegistration struct {
						KubeletExtraArgs []struct{ Name, Value string } `json:"kubeletExtraArgs"`
					} `json:"nodeRegistration"`
				} `json:"initConfiguration"`
			} `json:"spec"`
		}
		if err := d.Decode(&kc); err != nil {
			t.Fatal(err)
		}
		for _, a := range kc.Spec.InitConfiguration.NodeRegistration.KubeletExtraArgs {
			if a.Name == "node-labels" {
				value = append(value, a.Value)
			}
		}
	}
	if len(value) != 1 {
		t.Fatalf("%s: want one KubeadmConfig with one node-labels argument, got %q", controlPlanePath, value)
	}
	return value[0]
}

// TestControlPlaneLabelsComeFromGenesis: the example control-plane
// machine's kubelet labels are its UID and the Genesis document's labels,
// and no file of the site types a Genesis label again.
func TestControlPlaneLabelsComeFromGenesis(t *testing.T) {
	g := genesisOf(t, filepath.Join(exampleSite, "promenade", "Genesis.yaml"))
	want := strings.Join(append([]string{uuidLabel}, kubeletLabels(g)...), ",")
	if got := nodeLabels(t, exampleSite); got != want {
		t.Errorf("the control-plane KubeadmConfig's node-labels disagree with the Genesis document:\n got %s\nwant %s", got, want)
	}

	// Only the Promenade documents name the labels (the join nodes'
	// KubernetesNode documents carry the same ones).
	err := filepath.WalkDir(exampleSite, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(path) == filepath.Join(exampleSite, "promenade") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, l := range kubeletLabels(g) {
			if strings.Contains(string(data), l) {
				t.Errorf("%s types the Genesis label %s again: derive it from the Genesis document", path, l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestControlPlaneLabelsFollowGenesis: a label added to (and one removed
// from) a copy of the Genesis document shows in (and goes from) the
// rendered KubeadmConfig, and a Genesis document without labels fails the
// build naming it.
func TestControlPlaneLabelsFollowGenesis(t *testing.T) {
	root := t.TempDir()
	copyTree(t, filepath.Join(exampleSite, "function", "k8scontrol"), filepath.Join(root, "function", "k8scontrol"))
	copyTree(t, filepath.Join(exampleSite, controlPlanePath), filepath.Join(root, controlPlanePath))
	genesis := filepath.Join(root, "promenade", "Genesis.yaml")
	copyTree(t, filepath.Join(exampleSite, "promenade", "Genesis.yaml"), genesis)

	data, err := os.ReadFile(genesis)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), "      - kubernetes-scheduler=enabled\n", "      - rack=r7\n", 1)
	if changed == string(data) {
		t.Fatal("Genesis.yaml: no kubernetes-scheduler=enabled label to change")
	}
	if err := os.WriteFile(genesis, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(nodeLabels(t, root), ",")
	if !slices.Contains(got, "rack=r7") || slices.Contains(got, "kubernetes-scheduler=enabled") {
		t.Errorf("node-labels do not follow the changed Genesis document: %v", got)
	}
	if want := kubeletLabels(genesisOf(t, genesis)); !slices.Equal(got[1:], want) {
		t.Errorf("node-labels %v, want the UID and %v", got, want)
	}

	noLabels := strings.Replace(changed, "  labels:\n", "  unused:\n", 1)
	if err := os.WriteFile(genesis, []byte(noLabels), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = document.Build(filepath.Join(root, controlPlanePath), document.BuildOptions{})
	if err == nil || !strings.Contains(err.Error(), "data.labels has no label a kubelet may give itself") {
		t.Errorf("a Genesis document without labels: got %v", err)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
