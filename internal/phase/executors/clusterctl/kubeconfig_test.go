package clusterctl

import (
	"context"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/cluster/kubeconfig"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

const siteKubeConfig = `apiVersion: airshipit.org/v1alpha1
kind: KubeConfig
metadata: {name: kc}
config:
  clusters:
  - {name: e, cluster: {server: "https://ephemeral.invalid"}}
  - {name: t, cluster: {server: "https://target.invalid"}}
  users: [{name: admin, user: {token: secret}}]
  contexts:
  - {name: ephemeral-cluster, context: {cluster: e, user: admin}}
  - {name: target-cluster, context: {cluster: t, user: admin}}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: move}
action: move
`

// TestKubeconfigForClusterctl: the private kubeconfig clusterctl reads
// holds the phase's cluster only, or with siteWideKubeconfig every cluster
// that resolves (workload01, not deployed yet, left out); 0600 either way.
func TestKubeconfigForClusterctl(t *testing.T) {
	b, err := document.FromYAML("phases.yaml", []byte(siteKubeConfig))
	if err != nil {
		t.Fatal(err)
	}
	cm := &v1.ClusterMap{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Map: map[string]*v1.Cluster{
		"ephemeral-cluster": {},
		"target-cluster":    {Parent: "ephemeral-cluster"},
		"workload01": {Parent: "target-cluster", Sources: []v1.KubeconfigSource{
			{Type: v1.KubeconfigSourceTypeFilesystem, FileSystem: v1.KubeconfigSourceFilesystem{Path: "/nonexistent/kubeconfig"}},
		}},
	}}
	r := &kubeconfig.Resolver{ClusterMap: cm, PhaseBundle: b}
	exDoc, err := b.SelectOne(document.Selector{Kind: "Clusterctl"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		siteWide bool
		want     string
	}{{false, "target-cluster"}, {true, "ephemeral-cluster,target-cluster"}} {
		ex, err := New(executor.Config{
			PhaseName: "move", ClusterName: "target-cluster", ExecutorDoc: exDoc, ClusterMap: cm,
			Phase:      &v1.Phase{Config: v1.PhaseConfig{SiteWideKubeconfig: tt.siteWide}},
			Kubeconfig: r.Get,
		})
		if err != nil {
			t.Fatal(err)
		}
		path, err := ex.(*Executor).writeKubeconfig(context.Background(), t.TempDir(), "target-cluster")
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("kubeconfig for clusterctl: %v, mode %v", err, st.Mode().Perm())
		}
		cfg, err := clientcmd.LoadFromFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, n := range []string{"ephemeral-cluster", "target-cluster", "workload01"} {
			if cfg.Contexts[n] != nil {
				names = append(names, n)
			}
		}
		if got := strings.Join(names, ","); got != tt.want || len(cfg.Contexts) != len(names) || cfg.CurrentContext != "target-cluster" {
			t.Errorf("siteWide %v: contexts %v current %q, want %s", tt.siteWide, cfg.Contexts, cfg.CurrentContext, tt.want)
		}
		if cfg.Clusters["target-cluster"].Server != "https://target.invalid" {
			t.Errorf("target-cluster server %s", cfg.Clusters["target-cluster"].Server)
		}
	}
}
