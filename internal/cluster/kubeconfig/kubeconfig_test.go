package kubeconfig_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// kubeconfigDoc wraps a kubeconfig in a KubeConfig document of the phase bundle.
func kubeconfigDoc(t *testing.T, name string, raw []byte) string {
	t.Helper()
	var kc map[string]any
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		t.Fatal(err)
	}
	doc, err := yaml.Marshal(map[string]any{
		"apiVersion": "airshipit.org/v1alpha1", "kind": "KubeConfig",
		"metadata": map[string]any{"name": name}, "config": kc,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

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

	// The workload clusters' kubeconfigs live in the parent, as Cluster API keeps them.
	for _, name := range []string{"wl", "dyn"} {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-kubeconfig", Namespace: "default"},
			Data:       map[string][]byte{"value": raw},
		}
		if err := env.Client.Create(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	// A KubeConfig document in the phase bundle, its one context renamed
	// after the cluster that lists no sources.
	named := loaded.DeepCopy()
	named.Contexts = map[string]*clientcmdapi.Context{"plain": loaded.Contexts[ctxName]}
	plainRaw, err := clientcmd.Write(*named)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := document.FromYAML("kubeconfig.yaml", []byte(kubeconfigDoc(t, "site", raw)+"---\n"+kubeconfigDoc(t, "plain", plainRaw)))
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
			{Type: v1.KubeconfigSourceTypeClusterAPI, ClusterAPI: v1.KubeconfigSourceClusterAPI{NamespacedName: v1.NamespacedName{Name: "wl", Namespace: "default"}, Timeout: "10s"}},
		}},
		"fromBundle": {Sources: []v1.KubeconfigSource{
			{Type: v1.KubeconfigSourceTypeBundle, Bundle: v1.KubeconfigSourceBundle{Context: ctxName}},
		}},
		// No sources: the context named after the cluster in the KubeConfig document.
		"plain": {},
		// dynamicKubeConf: the dyn-kubeconfig Secret of the parent.
		"dyn": {Parent: "plain", DynamicKubeConfig: true},
		"broken": {Parent: "mgmt", Sources: []v1.KubeconfigSource{
			{Type: v1.KubeconfigSourceTypeFilesystem, FileSystem: v1.KubeconfigSourceFilesystem{Path: missing}},
			{Type: v1.KubeconfigSourceTypeBundle, Bundle: v1.KubeconfigSourceBundle{Context: "other"}},
			{Type: v1.KubeconfigSourceTypeClusterAPI, ClusterAPI: v1.KubeconfigSourceClusterAPI{NamespacedName: v1.NamespacedName{Name: "gone"}}},
		}},
		"orphan":       {},
		"dynamicGone":  {Parent: "mgmt", DynamicKubeConfig: true},
		"dynamicFirst": {Parent: "mgmt", DynamicKubeConfig: true, Sources: []v1.KubeconfigSource{{Type: v1.KubeconfigSourceTypeBundle}}},
	}}
	r := &kubeconfig.Resolver{ClusterMap: cm, PhaseBundle: bundle}

	for _, cluster := range []string{"mgmt", "wl", "fromBundle", "plain", "dyn"} {
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
			if cfg.CurrentContext != cluster || cfg.Contexts[cluster] == nil || len(cfg.Contexts) != 1 {
				t.Errorf("context not named after the cluster: %+v", cfg.Contexts)
			}
		})
	}

	errTests := []struct {
		cluster string
		want    []string
	}{
		{"broken", []string{
			`cluster "broken": no kubeconfig source worked`,
			"kubeconfigSources[0] (filesystem): reading " + missing,
			`kubeconfigSources[1] (bundle): KubeConfig/site (kubeconfig.yaml) has no context "other"`,
			`kubeconfigSources[2] (clusterAPI): reading Secret default/gone-kubeconfig in parent "mgmt"`,
		}},
		// The KubeConfig document serves each cluster by name only: a
		// document's single context never stands in for another cluster.
		{"orphan", []string{
			`cluster "orphan": the phase bundle's KubeConfig document (no kubeconfigSources listed): ` +
				`KubeConfig/site (kubeconfig.yaml) has no context "orphan" (contexts: ` + ctxName + `); KubeConfig/plain (kubeconfig.yaml) has no context "orphan" (contexts: plain)`,
		}},
		{"dynamicGone", []string{`cluster "dynamicGone": dynamicKubeConf: reading Secret default/dynamicGone-kubeconfig in parent "mgmt"`}},
		{"dynamicFirst", []string{
			`kubeconfigSources[0] (bundle): KubeConfig/site (kubeconfig.yaml) has no context "dynamicFirst"`,
			`dynamicKubeConf: reading Secret default/dynamicFirst-kubeconfig in parent "mgmt"`,
		}},
		{"nope", []string{"clusters: broken, dyn, dynamicFirst, dynamicGone, fromBundle, mgmt, orphan, plain, wl"}},
	}
	for _, tt := range errTests {
		_, err := r.Config(ctx, tt.cluster)
		if err == nil {
			t.Fatalf("%s: want an error", tt.cluster)
		}
		for _, want := range tt.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error lacks %q:\n%v", tt.cluster, want, err)
			}
		}
	}

	merged, err := r.Merged(ctx, "mgmt", "wl")
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Contexts) != 2 || merged.Contexts["wl"] == nil {
		t.Fatalf("merged contexts %v", merged.Contexts)
	}

	// A site-wide kubeconfig holds every cluster that resolves; the ones
	// that do not (not deployed yet) are left out, and the phase's own is current.
	site, err := r.Get(ctx, kubeconfig.Request{Cluster: "dyn", SiteWide: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := contextNames(site); got != "dyn,fromBundle,mgmt,plain,wl" || site.CurrentContext != "dyn" {
		t.Errorf("site-wide contexts %s current %q", got, site.CurrentContext)
	}
	if _, err := r.Get(ctx, kubeconfig.Request{Cluster: "orphan", SiteWide: true}); err == nil || !strings.Contains(err.Error(), `cluster "orphan"`) {
		t.Errorf("site-wide with the phase's own cluster unresolved: %v", err)
	}

	// --kubeconfig wins; a file with a single context serves any cluster name.
	over := &kubeconfig.Resolver{ClusterMap: cm, Override: env.Kubeconfig}
	if _, err := over.RESTConfig(ctx, "broken"); err != nil {
		t.Fatalf("override: %v", err)
	}
}

func contextNames(cfg *clientcmdapi.Config) string {
	var names []string
	for n := range cfg.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// writeKubeconfig writes a kubeconfig with one context per name, each
// pointing at https://<name>.invalid.
func writeKubeconfig(t *testing.T, path string, names ...string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for _, n := range names {
		cfg.Clusters[n+"-c"] = &clientcmdapi.Cluster{Server: "https://" + n + "." + filepath.Base(path) + ".invalid"}
		cfg.AuthInfos[n+"-u"] = &clientcmdapi.AuthInfo{Token: "t"}
		cfg.Contexts[n] = &clientcmdapi.Context{Cluster: n + "-c", AuthInfo: n + "-u"}
	}
	if err := kubeconfig.Write(path, cfg); err != nil {
		t.Fatal(err)
	}
}

// TestUserAndExecutorKubeconfigs: --kubeconfig, then $KUBECONFIG (a list,
// merged as kubectl merges it), then an executor's own file (~ expanded),
// then the ClusterMap; a file's only context serves a cluster not named in it.
func TestUserAndExecutorKubeconfigs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	a, b, flag := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "flag")
	writeKubeconfig(t, a, "ephemeral-cluster", "shared")
	writeKubeconfig(t, b, "target-cluster", "shared")
	writeKubeconfig(t, flag, "only")
	writeKubeconfig(t, filepath.Join(home, ".kube", "exec"), "exec-ctx")
	mapped := filepath.Join(dir, "mapped")
	writeKubeconfig(t, mapped, "ephemeral-cluster")
	cm := &v1.ClusterMap{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Map: map[string]*v1.Cluster{
		"ephemeral-cluster": {Sources: []v1.KubeconfigSource{{Type: v1.KubeconfigSourceTypeFilesystem, FileSystem: v1.KubeconfigSourceFilesystem{Path: mapped}}}},
	}}
	env := a + string(filepath.ListSeparator) + filepath.Join(dir, "missing") + string(filepath.ListSeparator) + b

	tests := []struct {
		name     string
		override string
		env      string
		req      kubeconfig.Request
		server   string
		err      string
	}{
		{"ClusterMap source", "", "", kubeconfig.Request{Cluster: "ephemeral-cluster"}, "https://ephemeral-cluster.mapped.invalid", ""},
		{"$KUBECONFIG first file", "", env, kubeconfig.Request{Cluster: "ephemeral-cluster"}, "https://ephemeral-cluster.a.invalid", ""},
		{"$KUBECONFIG later file", "", env, kubeconfig.Request{Cluster: "target-cluster"}, "https://target-cluster.b.invalid", ""},
		{"$KUBECONFIG first file wins a shared name", "", env, kubeconfig.Request{Cluster: "x", Context: "shared"}, "https://shared.a.invalid", ""},
		{"$KUBECONFIG names the files in errors", "", env, kubeconfig.Request{Cluster: "workload01"},
			"", `cluster "workload01": $KUBECONFIG (` + env + `) has no context "workload01" (contexts: ephemeral-cluster, shared, target-cluster)`},
		{"--kubeconfig wins over $KUBECONFIG, its only context for any cluster", flag, env, kubeconfig.Request{Cluster: "target-cluster"}, "https://only.flag.invalid", ""},
		{"--kubeconfig wins over the executor's file", flag, "", kubeconfig.Request{Cluster: "c", File: "~/.kube/exec"}, "https://only.flag.invalid", ""},
		{"executor's file, ~ expanded, its only context", "", "", kubeconfig.Request{Cluster: "c", File: "~/.kube/exec"}, "https://exec-ctx.exec.invalid", ""},
		{"executor's file and context", "", "", kubeconfig.Request{Cluster: "c", File: a, Context: "shared"}, "https://shared.a.invalid", ""},
		{"executor's file, context missing", "", "", kubeconfig.Request{Cluster: "c", File: a, Context: "nope"}, "", `has no context "nope" (contexts: ephemeral-cluster, shared)`},
		{"a named context is never replaced by the only one", flag, "", kubeconfig.Request{Cluster: "c", Context: "nope"}, "", `--kubeconfig ` + flag + ` has no context "nope" (contexts: only)`},
		{"context without a file", "", "", kubeconfig.Request{Cluster: "ephemeral-cluster", Context: "other"}, "", `context "other" applies to a kubeconfig file`},
		{"missing --kubeconfig", filepath.Join(dir, "gone"), "", kubeconfig.Request{Cluster: "c"}, "", "--kubeconfig: reading " + filepath.Join(dir, "gone")},
		{"site-wide with an executor's file", "", "", kubeconfig.Request{Cluster: "c", File: a, SiteWide: true}, "", "exclude each other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &kubeconfig.Resolver{ClusterMap: cm, Override: tt.override, Env: tt.env}
			cfg, err := r.Get(context.Background(), tt.req)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.CurrentContext != tt.req.Cluster || len(cfg.Contexts) != 1 {
				t.Errorf("contexts %v current %q, want one named %q", cfg.Contexts, cfg.CurrentContext, tt.req.Cluster)
			}
			if got := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server; got != tt.server {
				t.Errorf("server %s, want %s", got, tt.server)
			}
		})
	}
}

func TestParentCycle(t *testing.T) {
	cm := &v1.ClusterMap{Map: map[string]*v1.Cluster{
		"a": {Parent: "b", Sources: []v1.KubeconfigSource{{Type: v1.KubeconfigSourceTypeClusterAPI}}},
		"b": {Parent: "a", Sources: []v1.KubeconfigSource{{Type: v1.KubeconfigSourceTypeClusterAPI}}},
	}}
	_, err := (&kubeconfig.Resolver{ClusterMap: cm}).Config(context.Background(), "a")
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("got %v", err)
	}
}

// TestWrite: the one kubeconfig writer leaves a 0600 file, also where a
// looser one was, and no temporary file beside it.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: "https://c.invalid"}
	cfg.AuthInfos["c"] = &clientcmdapi.AuthInfo{Token: "secret"}
	cfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "c"}
	cfg.CurrentContext = "c"
	if err := kubeconfig.Write(path, cfg); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", st.Mode().Perm(), err)
	}
	back, err := clientcmd.LoadFromFile(path)
	if err != nil || back.Clusters["c"].Server != "https://c.invalid" || back.CurrentContext != "c" {
		t.Fatalf("read back %+v, %v", back, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left beside the kubeconfig: %v", entries)
	}
}
