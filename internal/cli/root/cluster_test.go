package root

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestClusterCommands runs cluster list, get-kubeconfig and status against
// a site whose ClusterMap reaches one real API server three ways (a file,
// the bundle's KubeConfig document, and a cluster that is down).
func TestClusterCommands(t *testing.T) {
	// The resolver would take $KUBECONFIG over the ClusterMap's sources.
	t.Setenv("KUBECONFIG", "")
	env := testenv.StartAPI(t, testenv.Options{})
	dir := t.TempDir()

	// The bundle's KubeConfig document: the admin kubeconfig with its
	// context named after the cluster it serves.
	kc, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ctx := kc.Contexts[kc.CurrentContext]
	kc.Contexts = map[string]*clientcmdapi.Context{"target": ctx}
	kc.CurrentContext = "target"
	kcYAML, err := clientcmd.Write(*kc)
	if err != nil {
		t.Fatal(err)
	}
	var kcObj map[string]any
	if err := yaml.Unmarshal(kcYAML, &kcObj); err != nil {
		t.Fatal(err)
	}
	kubeConfigDoc, err := yaml.Marshal(map[string]any{
		"apiVersion": "airshipit.org/v1alpha1", "kind": "KubeConfig", "metadata": map[string]any{"name": "site"}, "config": kcObj,
	})
	if err != nil {
		t.Fatal(err)
	}
	down := filepath.Join(dir, "down.kubeconfig")
	if err := os.WriteFile(down, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: d, cluster: {server: 'https://127.0.0.1:1'}}]\n"+
		"users: [{name: d, user: {token: x}}]\ncontexts: [{name: down, context: {cluster: d, user: d}}]\ncurrent-context: down\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"airship-config.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: t\ncontexts: {t: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":             "phase: {path: phases}\n",
		"site/phases/kustomization.yaml": "resources: [clusters.yaml, kubeconfig.yaml]\n",
		"site/phases/kubeconfig.yaml":    string(kubeConfigDoc),
		"site/phases/clusters.yaml": `apiVersion: airshipit.org/v1alpha1
kind: ClusterMap
metadata: {name: m}
map:
  ephemeral:
    kubeconfigSources:
    - type: filesystem
      filesystem: {path: ` + env.Kubeconfig + `}
  target: {parent: ephemeral}
  workload: {parent: target, dynamicKubeConf: true}
  down:
    kubeconfigSources:
    - type: filesystem
      filesystem: {path: ` + down + `, contextName: down}
`,
	})
	args := func(a ...string) []string {
		return append([]string{"--airshipconf=" + filepath.Join(dir, "airship-config.yaml"), "--no-render-cache"}, a...)
	}

	t.Run("list", func(t *testing.T) {
		out, errOut, code := run(t, args("cluster", "list", "-o", "json")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var rows []struct {
			Name, Parent string
			Sources      []string `json:"kubeconfigSources"`
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		got := map[string]string{}
		for _, r := range rows {
			got[r.Name] = r.Parent + "|" + strings.Join(r.Sources, ",")
		}
		want := map[string]string{"down": "|filesystem", "ephemeral": "|filesystem", "target": "ephemeral|bundle", "workload": "target|clusterAPI"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("cluster %s: %q, want %q (all: %v)", k, got[k], v, got)
			}
		}
		table, errOut, code := run(t, args("cluster", "list")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		checkGolden(t, "cluster-list.txt", table)
	})

	t.Run("get-kubeconfig", func(t *testing.T) {
		file := filepath.Join(dir, "out", "site.kubeconfig")
		// A file already there with a loose mode is replaced, not reused.
		writeFiles(t, dir, map[string]string{"out/site.kubeconfig": "stale"})
		out, errOut, code := run(t, args("cluster", "get-kubeconfig", "ephemeral", "target", "--file", file)...)
		if code != 0 || !strings.Contains(out, "Wrote "+file) {
			t.Fatalf("exit %d: %s%s", code, out, errOut)
		}
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("kubeconfig file mode %v, want 0600", fi.Mode().Perm())
		}
		got, err := clientcmd.LoadFromFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Contexts) != 2 || got.Contexts["ephemeral"] == nil || got.Contexts["target"] == nil {
			t.Errorf("contexts %v, want ephemeral and target", got.Contexts)
		}
		// Both reach the same API server, with the admin's credentials,
		// one through a file and one through the bundle's KubeConfig.
		admin := kc.AuthInfos[ctx.AuthInfo]
		for _, c := range []string{"ephemeral", "target"} {
			if srv, want := got.Clusters[got.Contexts[c].Cluster].Server, kc.Clusters[ctx.Cluster].Server; srv != want {
				t.Errorf("context %s: server %s, want %s", c, srv, want)
			}
			ai := got.AuthInfos[got.Contexts[c].AuthInfo]
			if ai == nil || !bytes.Equal(ai.ClientCertificateData, admin.ClientCertificateData) || ai.Token != admin.Token {
				t.Errorf("context %s: credentials are not the admin's", c)
			}
		}

		// Printed: one context, current, and a kubeconfig that works.
		out, errOut, code = run(t, args("cluster", "get-kubeconfig", "target")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		printed, err := clientcmd.Load([]byte(out))
		if err != nil {
			t.Fatalf("stdout is not a kubeconfig: %v\n%s", err, out)
		}
		if printed.CurrentContext != "target" || len(printed.Contexts) != 1 {
			t.Errorf("printed kubeconfig: current %q, contexts %v; want only target", printed.CurrentContext, printed.Contexts)
		}
		rc, err := clientcmd.NewDefaultClientConfig(*printed, nil).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		dc, err := discovery.NewDiscoveryClientForConfig(rc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dc.ServerVersion(); err != nil {
			t.Errorf("the printed kubeconfig does not reach the API server: %v", err)
		}
		if _, errOut, code := run(t, args("cluster", "get-kubeconfig", "nope")...); code != 1 || !strings.Contains(errOut, `cluster "nope" is not in ClusterMap m`) {
			t.Errorf("unknown cluster: exit %d %s", code, errOut)
		}
	})

	t.Run("status", func(t *testing.T) {
		out, errOut, code := run(t, args("cluster", "status", "--timeout", "3s", "-o", "json")...)
		if code != 1 || !strings.Contains(errOut, "is not reachable") {
			t.Fatalf("exit %d with a cluster down, want 1\n%s%s", code, out, errOut)
		}
		var rows []struct {
			Name      string
			Reachable bool
			Version   string
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, r := range rows {
			switch r.Name {
			case "ephemeral", "target":
				if !r.Reachable || !strings.HasPrefix(r.Version, "v1.") {
					t.Errorf("%s: %+v", r.Name, r)
				}
			case "down", "workload":
				// workload's kubeconfig Secret does not exist on its parent.
				if r.Reachable {
					t.Errorf("%s reachable: %+v", r.Name, r)
				}
			}
		}
		if len(rows) != 4 {
			t.Errorf("%d rows, want 4", len(rows))
		}

		// The table: a row per cluster, in name order, unreachable ones
		// with the reason.
		table, _, code := run(t, args("cluster", "status", "--timeout", "3s")...)
		if code != 1 {
			t.Errorf("table: exit %d, want 1", code)
		}
		var firstCols []string
		for _, l := range strings.Split(strings.TrimSuffix(table, "\n"), "\n") {
			f := strings.Fields(l)
			if len(f) < 2 {
				t.Fatalf("table line %q", l)
			}
			firstCols = append(firstCols, f[0]+" "+f[1])
		}
		want := "NAME REACHABLE|down false|ephemeral true|target true|workload false"
		if got := strings.Join(firstCols, "|"); got != want {
			t.Errorf("table columns %q, want %q\n%s", got, want, table)
		}
		if !strings.Contains(table, "workload-kubeconfig") {
			t.Errorf("the workload row does not name the Secret it looked for:\n%s", table)
		}
	})

	t.Run("status all reachable", func(t *testing.T) {
		// --kubeconfig serves every cluster: all reachable, exit 0.
		out, errOut, code := run(t, args("cluster", "status", "--kubeconfig", env.Kubeconfig, "-o", "json")...)
		if code != 0 {
			t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
		}
		var rows []struct {
			Name      string
			Reachable bool
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(rows) != 4 {
			t.Errorf("%d rows, want 4", len(rows))
		}
		for _, r := range rows {
			if !r.Reachable {
				t.Errorf("%s unreachable through --kubeconfig", r.Name)
			}
		}
	})
}
