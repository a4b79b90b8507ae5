package phase

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// seedClusterMap is the seed's ClusterMap, as written there.
const seedClusterMap = `apiVersion: airshipit.org/v1alpha1
kind: ClusterMap
metadata:
  labels:
    airshipit.org/deploy-k8s: "false"
  name: main-map
map:
  target-cluster:
    parent: ephemeral-cluster
    # dynamicKubeConf: false # default value
  ephemeral-cluster: {}
  workload01:
    parent: target-cluster
    dynamicKubeConf: true
`

// seedKubeConfig is the seed's KubeConfig example; the <...> values are
// filled from two running control planes.
const seedKubeConfig = `apiVersion: airshipit.org/v1alpha1
kind: KubeConfig
metadata:
  name: default
  labels:
    airshipit.org/deploy-k8s: "false"
config:
  apiVersion: v1
  clusters:
  - cluster:
      certificate-authority-data: <target-ca-data>
      server: <target-server>
    name: target-cluster
  - cluster:
      certificate-authority-data: <ephemeral-ca-data>
      server: <ephemeral-server>
    name: ephemeral-cluster
  contexts:
  - context:
      cluster: target-cluster
      user: target-cluster-admin
    name: target-cluster
  - context:
      cluster: ephemeral-cluster
      user: ephemeral-cluster-admin
    name: ephemeral-cluster
  current-context: ""
  kind: Config
  preferences: {}
  users:
  - name: ephemeral-cluster-admin
    user:
      client-certificate-data: <ephemeral-client-cert-data>
      client-key-data: <ephemeral-client-key-data>
  - name: target-cluster-admin
    user:
      client-certificate-data: <target-client-cert-data>
      client-key-data: <target-client-key-data>
`

const seedPhases = `apiVersion: airshipit.org/v1alpha1
kind: KubernetesApply
metadata: {name: apply, labels: {airshipit.org/deploy-k8s: "false"}}
config: {waitOptions: {timeout: 60}}
---
apiVersion: airshipit.org/v1alpha1
kind: KubernetesApply
metadata: {name: apply-target, labels: {airshipit.org/deploy-k8s: "false"}}
config: {context: target-cluster, waitOptions: {timeout: 60}}
---
apiVersion: airshipit.org/v1alpha1
kind: KubernetesApply
metadata: {name: apply-own, labels: {airshipit.org/deploy-k8s: "false"}}
config: {kubeconfig: ~/own.kubeconfig, waitOptions: {timeout: 60}}
`

func seedPhase(name, cluster, executorName, extra string) string {
	return "---\napiVersion: airshipit.org/v1alpha1\nkind: Phase\nmetadata: {name: " + name + ", clusterName: " + cluster + "}\n" +
		"config:\n  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: KubernetesApply, name: " + executorName + "}\n" +
		"  documentEntryPoint: " + name + "\n" + extra
}

// fillKubeConfig puts a running control plane's server, CA and admin
// credentials in the seed's placeholders for one cluster.
func fillKubeConfig(t *testing.T, doc, cluster string, env *testenv.Env) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	c, u := cfg.Clusters[kctx.Cluster], cfg.AuthInfos[kctx.AuthInfo]
	if len(u.ClientCertificateData) == 0 || len(c.CertificateAuthorityData) == 0 {
		t.Fatalf("test control plane's kubeconfig has no inline certificates")
	}
	b64 := base64.StdEncoding.EncodeToString
	return strings.NewReplacer(
		"<"+cluster+"-ca-data>", b64(c.CertificateAuthorityData),
		"<"+cluster+"-server>", c.Server,
		"<"+cluster+"-client-cert-data>", b64(u.ClientCertificateData),
		"<"+cluster+"-client-key-data>", b64(u.ClientKeyData),
	).Replace(doc)
}

// TestSeedClusterMapAndKubeConfig copies the seed's ClusterMap and
// KubeConfig documents into a site as written and runs phases against two
// control planes: ephemeral-cluster and target-cluster come from the
// KubeConfig document (the ClusterMap lists no kubeconfigSources),
// workload01 (dynamicKubeConf) from the workload01-kubeconfig Secret of its
// parent target-cluster. It also shows a siteWideKubeconfig phase reaching
// another cluster's context, an executor's own kubeconfig file (~ expanded,
// its only context), $KUBECONFIG and --kubeconfig, all through the one
// resolver.
func TestSeedClusterMapAndKubeConfig(t *testing.T) {
	ephemeral := testenv.StartAPI(t, testenv.Options{})
	target := testenv.StartAPI(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Cluster API keeps workload01's kubeconfig in its parent; here it
	// reaches the ephemeral control plane, so where objects land shows
	// which kubeconfig was used.
	raw, err := os.ReadFile(ephemeral.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "workload01-kubeconfig", Namespace: "default"}, Data: map[string][]byte{"value": raw}}
	if err := target.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	ownRaw, err := os.ReadFile(target.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "own.kubeconfig"), ownRaw, 0o600); err != nil {
		t.Fatal(err)
	}

	kubeConfig := fillKubeConfig(t, fillKubeConfig(t, seedKubeConfig, "ephemeral", ephemeral), "target", target)
	files := map[string]string{
		"repo/metadata.yaml":             "phase:\n  path: phases\n  docEntryPointPrefix: entries\n",
		"repo/phases/kustomization.yaml": "resources: [cluster-map.yaml, kubeconfig.yaml, phases.yaml]\n",
		"repo/phases/cluster-map.yaml":   seedClusterMap,
		"repo/phases/kubeconfig.yaml":    kubeConfig,
		"repo/phases/phases.yaml": seedPhases +
			seedPhase("ephemeral", "ephemeral-cluster", "apply", "") +
			seedPhase("target", "target-cluster", "apply", "") +
			seedPhase("workload", "workload01", "apply", "") +
			seedPhase("sitewide", "ephemeral-cluster", "apply-target", "  siteWideKubeconfig: true\n") +
			seedPhase("not-sitewide", "ephemeral-cluster", "apply-target", "") +
			seedPhase("own", "ephemeral-cluster", "apply-own", ""),
	}
	for _, name := range []string{"ephemeral", "target", "workload", "sitewide", "not-sitewide", "own"} {
		files["repo/entries/"+name+"/kustomization.yaml"] = "resources: [cm.yaml]\n"
		files["repo/entries/"+name+"/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: default}\ndata: {phase: " + name + "}\n"
	}
	load := func(override string) *Site {
		t.Helper()
		s, err := loadFiles(t, files, document.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.KubeconfigOverride = override
		return s
	}
	run := func(s *Site, name string) error {
		t.Helper()
		p, err := s.Phase(name)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := s.Executor(p)
		if err != nil {
			t.Fatal(err)
		}
		return ex.Run(ctx, executor.RunOptions{})
	}
	// where reports which control planes hold the phase's ConfigMap.
	where := func(name string) string {
		t.Helper()
		var on []string
		for _, e := range []struct {
			name string
			env  *testenv.Env
		}{{"ephemeral", ephemeral}, {"target", target}} {
			err := e.env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &corev1.ConfigMap{})
			if err == nil {
				on = append(on, e.name)
			} else if client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
		}
		return strings.Join(on, ",")
	}

	s := load("")
	for _, tt := range []struct{ phase, want string }{
		{"ephemeral", "ephemeral"},
		{"target", "target"},
		{"workload", "ephemeral"}, // the Secret read from target-cluster points at the ephemeral plane
		{"sitewide", "target"},    // config.context names another cluster of the site-wide kubeconfig
		{"own", "target"},         // the executor's ~/own.kubeconfig, its only context
	} {
		if err := run(s, tt.phase); err != nil {
			t.Fatalf("phase %s: %v", tt.phase, err)
		}
		if got := where(tt.phase); got != tt.want {
			t.Errorf("phase %s applied to %q, want %q", tt.phase, got, tt.want)
		}
	}
	err = run(s, "not-sitewide")
	if err == nil || !strings.Contains(err.Error(), `context "target-cluster" applies to a kubeconfig file`) {
		t.Errorf("config.context naming another cluster without siteWideKubeconfig: %v", err)
	}
	if got := where("not-sitewide"); got != "" {
		t.Errorf("refused phase applied to %q", got)
	}

	// $KUBECONFIG stands where --kubeconfig would: its only context serves
	// every cluster, over the ClusterMap's sources.
	t.Setenv("KUBECONFIG", filepath.Join(home, "missing")+string(filepath.ListSeparator)+target.Kubeconfig)
	if err := run(load(""), "ephemeral"); err != nil {
		t.Fatal(err)
	}
	if got := where("ephemeral"); got != "ephemeral,target" {
		t.Errorf("with $KUBECONFIG, phase ephemeral applied to %q, want both planes now", got)
	}
	// --kubeconfig wins over $KUBECONFIG and over the executor's own file.
	if err := run(load(ephemeral.Kubeconfig), "own"); err != nil {
		t.Fatal(err)
	}
	if got := where("own"); got != "ephemeral,target" {
		t.Errorf("with --kubeconfig, phase own applied to %q, want both planes now", got)
	}
}
