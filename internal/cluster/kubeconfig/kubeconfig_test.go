package kubeconfig

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func TestSourcesAgainstARealAPIServer(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	ctx := context.Background()
	raw, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	ctxName := loaded.CurrentContext

	// The workload cluster's kubeconfig lives in the parent, as Cluster API keeps it.
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "wl-kubeconfig", Namespace: "default"},
		Data:       map[string][]byte{"value": raw},
	}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	// A KubeConfig document in the phase bundle.
	var kc map[string]any
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		t.Fatal(err)
	}
	docYAML, err := yaml.Marshal(map[string]any{
		"apiVersion": "airshipit.org/v1alpha1", "kind": "KubeConfig",
		"metadata": map[string]any{"name": "site"}, "config": kc,
	})
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := document.FromYAML("kubeconfig.yaml", docYAML)
	if err != nil {
		t.Fatal(err)
	}

	missing := filepath.Join(t.TempDir(), "none")
	cm := &v1.ClusterMap{ObjectMeta: metav1.ObjectMeta{Name: "map"}, Map: map[string]*v1.Cluster{
		"mgmt": {Sources: []v1.KubeconfigSource{
			{Type: v1.KubeconfigSourceTypeFilesystem, FileSystem: v1.KubeconfigSourceFilesystem{Path: missing}},
			{Type: v1.KubeconfigSourceTypeFilesystem, FileSystem: v1.KubeconfigSourceFilesystem{Path: env.Kubeconfig, Context: ctxName}},
		}},
		"wl": {Parent: "mgmt", Sources: []v1.KubeconfigSource{
			{Type: v1.KubeconfigSourceTypeClusterAPI, ClusterAPI: v1.KubeconfigSourceClusterAPI{NamespacedName: v1.NamespacedName{Name: "wl", Namespace: "default"}}},
		}},
		"fromBundle": {Sources: []v1.KubeconfigSource{
			{Type: v1.KubeconfigSourceTypeBundle, Bundle: v1.KubeconfigSourceBundle{Context: ctxName}},
		}},
		"broken": {Parent: "mgmt", Sources: []v1.KubeconfigSource{
			{Type: v1.KubeconfigSourceTypeFilesystem, FileSystem: v1.KubeconfigSourceFilesystem{Path: missing}},
			{Type: v1.KubeconfigSourceTypeBundle, Bundle: v1.KubeconfigSourceBundle{Context: "other"}},
			{Type: v1.KubeconfigSourceTypeClusterAPI, ClusterAPI: v1.KubeconfigSourceClusterAPI{NamespacedName: v1.NamespacedName{Name: "gone"}}},
		}},
	}}
	r := &Resolver{ClusterMap: cm, PhaseBundle: bundle}

	for _, cluster := range []string{"mgmt", "wl", "fromBundle"} {
		t.Run(cluster, func(t *testing.T) {
			rc, err := r.RESTConfig(ctx, cluster)
			if err != nil {
				t.Fatal(err)
			}
			dc, err := discovery.NewDiscoveryClientForConfig(rc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dc.ServerVersion(); err != nil {
				t.Fatalf("cluster %s unreachable with its resolved kubeconfig: %v", cluster, err)
			}
			cfg, err := r.Config(ctx, cluster)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.CurrentContext != cluster || cfg.Contexts[cluster] == nil {
				t.Errorf("context not named after the cluster: %+v", cfg.Contexts)
			}
		})
	}

	_, err = r.Config(ctx, "broken")
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{
		`cluster "broken": no kubeconfig source worked`,
		"kubeconfigSources[0] (filesystem): reading " + missing,
		`kubeconfigSources[1] (bundle): KubeConfig/site (kubeconfig.yaml) has no context "other"`,
		`kubeconfigSources[2] (clusterAPI): reading Secret default/gone-kubeconfig in parent "mgmt"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := r.Config(ctx, "nope"); err == nil || !strings.Contains(err.Error(), "clusters: broken, fromBundle, mgmt, wl") {
		t.Errorf("unknown cluster: %v", err)
	}

	merged, err := r.Merged(ctx, "mgmt", "wl")
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Contexts) != 2 || merged.Contexts["wl"] == nil {
		t.Fatalf("merged contexts %v", merged.Contexts)
	}
	out := filepath.Join(t.TempDir(), "site.kubeconfig")
	if err := Write(out, merged); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("written kubeconfig: %v mode %v", err, st.Mode().Perm())
	}

	// --kubeconfig wins; a file with a single context serves any cluster name.
	over := &Resolver{ClusterMap: cm, Override: env.Kubeconfig}
	if _, err := over.RESTConfig(ctx, "broken"); err != nil {
		t.Fatalf("override: %v", err)
	}
}

func TestParentCycle(t *testing.T) {
	cm := &v1.ClusterMap{Map: map[string]*v1.Cluster{
		"a": {Parent: "b", Sources: []v1.KubeconfigSource{{Type: v1.KubeconfigSourceTypeClusterAPI}}},
		"b": {Parent: "a", Sources: []v1.KubeconfigSource{{Type: v1.KubeconfigSourceTypeClusterAPI}}},
	}}
	_, err := (&Resolver{ClusterMap: cm}).Config(context.Background(), "a")
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("got %v", err)
	}
}
