package phase

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/config"
	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/document/fn"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/phase/executors"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

func exampleSite(t *testing.T) *Site {
	t.Helper()
	cfg, err := config.Load("../../examples/site/airship-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	executors.Register()
	s, err := Load(cfg, "", document.BuildOptions{Functions: &fn.Runner{}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExampleSite(t *testing.T) {
	s := exampleSite(t)
	ctx := context.Background()
	phases, err := s.Phases()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range phases {
		names = append(names, p.Name()+"@"+p.ClusterName())
	}
	want := "armada-ephemeral@ephemeral-cluster,clusterctl-init-ephemeral@ephemeral-cluster,clusterctl-init-target@target-cluster," +
		"clusterctl-move@target-cluster,clusterctl-move-sip@target-cluster,controlplane-ephemeral@ephemeral-cluster,core-charts-target@target-cluster," +
		"hosts-ephemeral@ephemeral-cluster,hosts-power-ephemeral@ephemeral-cluster,initinfra-ephemeral@ephemeral-cluster," +
		"initinfra-target@target-cluster,sip-ephemeral@ephemeral-cluster,sip-target@target-cluster,site-pki@ephemeral-cluster,workers-ephemeral@ephemeral-cluster," +
		"workload-ephemeral@ephemeral-cluster,workload-target@target-cluster"
	if got := strings.Join(names, ","); got != want {
		t.Fatalf("phases = %s\nwant %s", got, want)
	}
	// clusterctl-init-ephemeral builds Cluster API's components from the
	// link `make testbin` writes into the site.
	if _, err := os.Stat("../../examples/site/function/capi/upstream/core/config/default"); err != nil {
		testtool.Missing(t, "the example site's link to Cluster API's components is missing (%v); `make testbin` writes it", err)
	}
	plan, err := s.Plan("deploy-local")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckPlan(ctx, plan); err != nil {
		t.Fatalf("example plan invalid: %v", err)
	}
	for _, p := range phases {
		if err := s.ValidateDocuments(ctx, p); err != nil {
			t.Errorf("phase %s invalid: %v", p.Name(), err)
		}
	}
	wl, err := s.Phase("workload-ephemeral")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := s.Executor(wl)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := ex.Render(ctx, &out, executor.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kind: Deployment") || strings.Contains(out.String(), "VariableCatalogue") {
		t.Errorf("executor render must hold the Deployment and not the deploy-k8s=false catalogue:\n%s", out.String())
	}
	for _, want := range []string{"image: registry.invalid/hello:1.0", "replicas: 3", "index.html: <h1>Hello from the local site</h1>"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("site values not applied by the ReplacementTransformer and Templater: no %q in\n%s", want, out.String())
		}
	}
}

// site writes a small site into a temporary directory; edit changes files
// before it is loaded.
func site(t *testing.T, edit func(files map[string]string)) (*Site, error) {
	t.Helper()
	files := map[string]string{
		"repo/metadata.yaml":             "phase:\n  path: phases\n  docEntryPointPrefix: entries\n",
		"repo/phases/kustomization.yaml": "resources: [phases.yaml, executors.yaml, map.yaml, plan.yaml]\n",
		"repo/phases/phases.yaml": `apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: a, clusterName: c1}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: KubernetesApply, name: apply}
  documentEntryPoint: a
---
apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: b, clusterName: c1}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: KubernetesApply, name: apply}
  documentEntryPoint: b
`,
		"repo/phases/executors.yaml":        "apiVersion: airshipit.org/v1alpha1\nkind: KubernetesApply\nmetadata: {name: apply}\nconfig: {waitOptions: {timeout: 10}}\n",
		"repo/phases/map.yaml":              "apiVersion: airshipit.org/v1alpha1\nkind: ClusterMap\nmetadata: {name: m}\nmap:\n  c1: {}\n",
		"repo/phases/plan.yaml":             "apiVersion: airshipit.org/v1alpha1\nkind: PhasePlan\nmetadata: {name: p}\nphases: [{name: a}, {name: b}]\n",
		"repo/entries/a/kustomization.yaml": "resources: [cm.yaml]\n",
		"repo/entries/a/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"repo/entries/b/kustomization.yaml": "resources: [cm.yaml]\n",
		"repo/entries/b/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
	}
	if edit != nil {
		edit(files)
	}
	return loadFiles(t, files, document.BuildOptions{})
}

// loadFiles writes a site (repository "repo") into a temporary directory
// and loads it.
func loadFiles(t *testing.T, files map[string]string, build document.BuildOptions) (*Site, error) {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := config.NewSite("test", &v1.Manifest{
		PhaseRepositoryName: "r", TargetPath: dir, MetadataPath: "metadata.yaml",
		Repositories: map[string]*v1.Repository{"r": {URL: "/anywhere/repo"}},
	}, dir)
	executors.Register()
	return LoadSite(s, build)
}

func TestCheckPlanProblems(t *testing.T) {
	tests := []struct {
		name string
		edit func(map[string]string)
		want []string
	}{
		{"valid", nil, nil},
		{"plan names a missing phase", func(f map[string]string) {
			f["repo/phases/plan.yaml"] = strings.Replace(f["repo/phases/plan.yaml"], "{name: b}", "{name: nope}", 1)
		}, []string{`plan PhasePlan/p (plan.yaml): phases[1]: phase "nope"`, "Phase/a (phases.yaml)"}},
		{"executorRef to nothing", func(f map[string]string) {
			f["repo/phases/phases.yaml"] = strings.Replace(f["repo/phases/phases.yaml"], "name: apply}", "name: gone}", 1)
		}, []string{"Phase/a (phases.yaml): config.executorRef", "kind=KubernetesApply name=gone", "KubernetesApply/apply (executors.yaml)"}},
		{"cluster missing from the map", func(f map[string]string) {
			f["repo/phases/phases.yaml"] = strings.Replace(f["repo/phases/phases.yaml"], "name: b, clusterName: c1", "name: b, clusterName: c9", 1)
		}, []string{`metadata.clusterName "c9" is not in ClusterMap m (clusters: c1)`}},
		{"phase repeated in a plan with dependsOn", func(f map[string]string) {
			f["repo/phases/plan.yaml"] = strings.Replace(f["repo/phases/plan.yaml"], "{name: b}", "{name: b, dependsOn: [a]}, {name: a}", 1)
		}, []string{`phases[2] repeats phase "a" (first at phases[0]); a plan with dependsOn names each phase once`}},
		{"dependsOn cycle", func(f map[string]string) {
			f["repo/phases/plan.yaml"] = strings.Replace(f["repo/phases/plan.yaml"], "phases: [{name: a}, {name: b}]", "phases: [{name: a, dependsOn: [b]}, {name: b, dependsOn: [a]}]", 1)
		}, []string{"dependsOn forms a cycle: a -> b -> a"}},
		{"dependsOn unknown", func(f map[string]string) {
			f["repo/phases/plan.yaml"] = strings.Replace(f["repo/phases/plan.yaml"], "{name: b}", "{name: b, dependsOn: [z]}", 1)
		}, []string{`phases[1] (b).dependsOn names "z"`}},
		{"missing entry point", func(f map[string]string) {
			delete(f, "repo/entries/b/kustomization.yaml")
			delete(f, "repo/entries/b/cm.yaml")
		}, []string{`phase "b" config.documentEntryPoint`, "does not exist"}},
		{"unknown executor kind", func(f map[string]string) {
			f["repo/phases/executors.yaml"] += "---\napiVersion: airshipit.org/v1alpha1\nkind: BootConfiguration\nmetadata: {name: bc}\n"
			f["repo/phases/phases.yaml"] = strings.Replace(f["repo/phases/phases.yaml"], "kind: KubernetesApply, name: apply}\n  documentEntryPoint: b", "kind: BootConfiguration, name: bc}\n  documentEntryPoint: b", 1)
		}, []string{"BootConfiguration/bc (executors.yaml), whose kind no executor handles"}},
		{"executor config typo", func(f map[string]string) {
			f["repo/phases/executors.yaml"] = "apiVersion: airshipit.org/v1alpha1\nkind: KubernetesApply\nmetadata: {name: apply}\nconfig: {waitOptions: {timout: 10}}\n"
		}, []string{`unknown field "config.waitOptions.timout"`}},
		{"cluster map field misspelt", func(f map[string]string) {
			f["repo/phases/map.yaml"] = "apiVersion: airshipit.org/v1alpha1\nkind: ClusterMap\nmetadata: {name: m}\nmap:\n  c1: {dynamicKubeconf: true}\n"
		}, []string{`ClusterMap/m (map.yaml): unknown field "map.c1.dynamicKubeconf"`}},
		{"dynamicKubeConf without a parent", func(f map[string]string) {
			f["repo/phases/map.yaml"] = "apiVersion: airshipit.org/v1alpha1\nkind: ClusterMap\nmetadata: {name: m}\nmap:\n  c1: {dynamicKubeConf: true}\n"
		}, []string{"ClusterMap/m: map.c1.dynamicKubeConf reads the kubeconfig Secret from the parent cluster, but map.c1 has no parent"}},
		{"clusterAPI timeout not a duration", func(f map[string]string) {
			f["repo/phases/map.yaml"] = "apiVersion: airshipit.org/v1alpha1\nkind: ClusterMap\nmetadata: {name: m}\n" +
				"map:\n  c0: {}\n  c1: {parent: c0, kubeconfigSources: [{type: clusterAPI, clusterAPI: {timeout: soon}}]}\n"
		}, []string{`ClusterMap/m: map.c1.kubeconfigSources[0].clusterAPI.timeout "soon" is not a duration`}},
		{"bad inventory policy", func(f map[string]string) {
			f["repo/phases/executors.yaml"] = "apiVersion: airshipit.org/v1alpha1\nkind: KubernetesApply\nmetadata: {name: apply}\nconfig: {inventoryPolicy: steal}\n"
		}, []string{`config.inventoryPolicy "steal"`}},
		{"empty plan", func(f map[string]string) {
			f["repo/phases/plan.yaml"] = "apiVersion: airshipit.org/v1alpha1\nkind: PhasePlan\nmetadata: {name: p}\n"
		}, []string{"phases is empty"}},
		{"cluster map parent missing", func(f map[string]string) {
			f["repo/phases/map.yaml"] = "apiVersion: airshipit.org/v1alpha1\nkind: ClusterMap\nmetadata: {name: m}\nmap:\n  c1: {parent: c0}\n"
		}, []string{`map.c1.parent "c0" is not in the map`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := site(t, tt.edit)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := s.Plan("p")
			if err != nil {
				t.Fatal(err)
			}
			err = s.CheckPlan(context.Background(), plan)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("valid plan rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestOrder(t *testing.T) {
	steps := func(spec ...string) []v1.PhaseStep {
		var out []v1.PhaseStep
		for _, s := range spec {
			name, deps, _ := strings.Cut(s, ":")
			st := v1.PhaseStep{Name: name}
			if deps != "" {
				st.DependsOn = strings.Split(deps, ",")
			}
			out = append(out, st)
		}
		return out
	}
	tests := []struct {
		name  string
		steps []v1.PhaseStep
		want  string
		err   string
	}{
		{"no dependsOn runs in order", steps("a", "b", "c"), "[a] [b] [c]", ""},
		{"no dependsOn runs a repeated phase again", steps("a", "b", "a"), "[a] [b] [a]", ""},
		{"a repeated phase with dependsOn", steps("a", "b:a", "a"), "", `phases[2] repeats phase "a"`},
		{"diamond", steps("a", "b:a", "c:a", "d:b,c"), "[a] [b c] [d]", ""},
		{"independent steps in one wave", steps("a", "b", "c:a"), "[a b] [c]", ""},
		{"self", steps("a:a"), "", "depends on itself"},
		{"cycle of three", steps("a:c", "b:a", "c:b"), "", "cycle: a -> c -> b -> a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waves, err := Order(tt.steps)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, w := range waves {
				parts = append(parts, "["+strings.Join(w, " ")+"]")
			}
			if got := strings.Join(parts, " "); got != tt.want {
				t.Errorf("waves %s, want %s", got, tt.want)
			}
		})
	}
}

func TestTree(t *testing.T) {
	tr, err := Tree("../../examples/site/site/local/workload", "../../examples")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tr.Print(&out)
	want := `site/site/local/workload [Kustomization]
├── site/type/local/workload [Kustomization]
│   ├── site/function/hello [Kustomization]
│   │   ├── site/function/hello/deployment.yaml [Resource]
│   │   ├── site/function/hello/widget.yaml [Resource]
│   │   └── hello-settings [ConfigMapGenerator]
│   └── site/function/hello-config [Kustomization]
│       └── site/function/hello-config/pages.yaml [Generator]
├── site/site/local/workload/catalogue.yaml [Resource]
└── site/site/local/workload/replacements [Transformer]
    └── site/site/local/workload/replacements/hello.yaml [Resource]
`
	if !strings.HasPrefix(out.String(), strings.Split(want, "\n")[0]) {
		t.Fatalf("tree:\n%s", out.String())
	}
	if out.String() != want {
		t.Errorf("tree:\n%s\nwant:\n%s", out.String(), want)
	}
	if _, err := Tree(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "no kustomization") {
		t.Errorf("tree of a directory without kustomization: %v", err)
	}
}
