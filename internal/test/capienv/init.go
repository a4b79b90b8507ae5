package capienv

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/airshipit/airship-go/internal/config"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/phase/executors"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// InitOptions select the providers Init installs beside the core one.
type InitOptions struct {
	// Infrastructure maps an infrastructure provider's name to the
	// directory of its components kustomization (absolute, or relative to
	// the repository root), installed as version v0.1.0 unless
	// InfrastructureVersion says otherwise.
	Infrastructure map[string]string
	// InfrastructureVersion is the version every infrastructure provider
	// is installed as (default v0.1.0).
	InfrastructureVersion string
	// Timeout bounds the init (default 3 minutes).
	Timeout time.Duration
}

// ModuleDir is the directory of the sigs.k8s.io/cluster-api module the
// managers are built from (its config/ holds the providers' components);
// a test that cannot find it fails or skips as for a missing binary.
func ModuleDir(t testing.TB) string {
	t.Helper()
	dir, err := ModulePath()
	if err != nil {
		testtool.Missing(t, "%v", err)
	}
	return dir
}

// ModulePath is ModuleDir without a testing.TB, for TestMain. `go list`
// may have to download the module: it gets two minutes.
func ModulePath() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api").Output()
	if err != nil {
		return "", fmt.Errorf("cannot locate the cluster-api module with `go list`: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// CoreCRDs is the directory of Cluster API's core CRDs (Cluster, Machine,
// MachineDeployment, ...), for tests that play Cluster API themselves.
func CoreCRDs() (string, error) {
	dir, err := ModulePath()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "core", "config", "crd", "bases"), nil
}

// Init runs `clusterctl init` through the Clusterctl executor against env:
// the core, kubeadm bootstrap and kubeadm control-plane providers from the
// cluster-api module, plus opts.Infrastructure, from a site written to a
// temporary directory. Stub cert-manager CRDs are created first, so that
// clusterctl does not try to install cert-manager. Start then runs the
// managers.
func Init(t testing.TB, env *testenv.Env, opts InitOptions) {
	t.Helper()
	if opts.Timeout == 0 {
		opts.Timeout = 3 * time.Minute
	}
	if opts.InfrastructureVersion == "" {
		opts.InfrastructureVersion = "v0.1.0"
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	for _, crd := range CertManagerStubs() {
		if err := env.Client.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	raw, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := initSiteFiles(dir, ModuleDir(t), opts, env.Kubeconfig, raw.CurrentContext)
	if err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	executors.Register() // the Clusterctl executor runs the init
	site, err := phase.Load(cfg, "", document.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := site.Phase("init")
	if err != nil {
		t.Fatal(err)
	}
	if err := site.CheckPhase(ctx, p); err != nil {
		t.Fatalf("clusterctl init: %v", err)
	}
	ex, err := site.Executor(p)
	if err != nil {
		t.Fatalf("clusterctl init: %v", err)
	}
	if err := ex.Run(ctx, executor.RunOptions{Timeout: opts.Timeout}); err != nil {
		t.Fatalf("clusterctl init: %v", err)
	}
}

// initSiteFiles are the files, by path below dir, of a site whose one
// phase runs clusterctl init with the cluster-api module's providers (capi
// is its directory) and opts.Infrastructure, against the cluster of the
// kubeconfig's context.
func initSiteFiles(dir, capi string, opts InitOptions, kubeconfig, kubeContext string) (map[string]string, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	files := map[string]string{
		"config": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts: {c: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":             "phase: {path: phases}\n",
		"site/phases/kustomization.yaml": "resources: [phases.yaml]\n",
	}
	providers := []string{
		"- {name: cluster-api, type: CoreProvider, url: site/providers/capi, variable-substitution: true}",
		"- {name: kubeadm, type: BootstrapProvider, url: site/providers/cabpk, variable-substitution: true}",
		"- {name: kubeadm, type: ControlPlaneProvider, url: site/providers/kcp, variable-substitution: true}",
	}
	var linkErr error
	link := func(name, target string) {
		rel, err := filepath.Rel(filepath.Join(dir, "site", "providers", name), target)
		if err != nil {
			linkErr = errors.Join(linkErr, err)
		}
		files["site/providers/"+name+"/kustomization.yaml"] = "resources:\n- " + rel + "\n"
	}
	link("capi", filepath.Join(capi, "core", "config", "default"))
	link("cabpk", filepath.Join(capi, "bootstrap", "kubeadm", "config", "default"))
	link("kcp", filepath.Join(capi, "controlplane", "kubeadm", "config", "default"))
	var infra []string
	for _, name := range slices.Sorted(maps.Keys(opts.Infrastructure)) {
		target := opts.Infrastructure[name]
		if !filepath.IsAbs(target) {
			target = filepath.Join(root, target)
		}
		link("infra-"+name, target)
		providers = append(providers, fmt.Sprintf("- {name: %s, type: InfrastructureProvider, url: site/providers/infra-%s}", name, name))
		infra = append(infra, name+":"+opts.InfrastructureVersion)
	}
	files["site/phases/phases.yaml"] = fmt.Sprintf(`apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: init, clusterName: target}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: Clusterctl, name: init}
---
apiVersion: airshipit.org/v1alpha1
kind: Clusterctl
metadata: {name: init}
action: init
providers:
%s
init-options:
  core-provider: cluster-api:%s
  bootstrap-providers: [kubeadm:%s]
  control-plane-providers: [kubeadm:%s]
  infrastructure-providers: [%s]
---
apiVersion: airshipit.org/v1alpha1
kind: ClusterMap
metadata: {name: m}
map:
  target:
    kubeconfigSources:
    - type: filesystem
      filesystem: {path: %s, contextName: %s}
`, strings.Join(providers, "\n"), Version, Version, Version, strings.Join(infra, ", "), kubeconfig, kubeContext)
	return files, linkErr
}

// CertManagerStubs are schemaless cert-manager CRDs (issuers,
// certificates): enough for clusterctl init to find cert-manager's API and
// skip installing cert-manager, which cannot run here.
func CertManagerStubs() []*apiextensionsv1.CustomResourceDefinition {
	return []*apiextensionsv1.CustomResourceDefinition{stubCRD("issuers", "Issuer"), stubCRD("certificates", "Certificate")}
}

func stubCRD(plural, kind string) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".cert-manager.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "cert-manager.io", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}
