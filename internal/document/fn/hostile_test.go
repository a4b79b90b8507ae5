package fn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// hostileCM is a document a transformer can act on.
const hostileCM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: victim\ndata:\n  a: b\n"

// touch is the command every hostile function would run: it creates the
// marker file, so a test proves nothing ran by the marker's absence once
// the (synchronous) build returned.
const touch = "exec: {path: /bin/sh, args: [-c, touch MARKER]}"

const noopFunctionForComponent = "apiVersion: airshipit.org/v1alpha1\nkind: ReplacementTransformer\nmetadata:\n  name: in-component\nreplacements: []\n"

// TestHostileKustomizations builds kustomizations whose plugin configs
// would run a program, each with a command that creates a marker file:
// every build must fail naming the config (kind/name) and its file, and
// the marker must not exist afterwards, whether the tree is built by
// Runner or by kustomize alone with KrustyOptions.
func TestHostileKustomizations(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		// root is the directory built, under the tree.
		root string
		want []string
		// plugin is a legacy exec plugin to install in the plugin home:
		// apiVersion/kind path.
		plugin string
		// fakes are programs installed on PATH that would create the
		// marker (helm, git).
		fakes []string
		// runnerOnly: kustomize alone is not expected to refuse (the
		// guard is Runner's).
		runnerOnly bool
	}{
		{
			name: "inline transformer with an exec function (issue 26 vector 1)",
			files: map[string]string{
				"site/cm.yaml": hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\ntransformers:\n" +
					`- '{apiVersion: v1, kind: ConfigMap, metadata: {name: fn, annotations: {config.kubernetes.io/function: "` + touch + `"}}}'` + "\n",
			},
			root: "site",
			want: []string{"ConfigMap/fn", "site/kustomization.yaml", "exec:/bin/sh", "exec functions are never run"},
		},
		{
			name: "escaped annotation key in a file a transformer directory pulls in with ../ (issue 26 vector 2)",
			files: map[string]string{
				"site/cm.yaml":                   hostileCM,
				"site/kustomization.yaml":        "resources: [cm.yaml]\ntransformers: [fns]\n",
				"site/fns/kustomization.yaml":    "resources: [../shared/fn.yaml]\n",
				"site/shared/fn.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: escaped\n  annotations:\n    \"config.kubernetes.io/func\\u0074ion\": \"" + touch + "\"\n",
				"site/shared/kustomization.yaml": "resources: [fn.yaml]\n",
			},
			root: "site",
			want: []string{"ConfigMap/escaped", "site/shared/fn.yaml", "exec:/bin/sh"},
		},
		{
			name: "legacy config.k8s.io/function annotation",
			files: map[string]string{
				"site/cm.yaml":            hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: example.com/v1\nkind: Legacy\nmetadata:\n  name: old\n  annotations:\n    config.k8s.io/function: |\n      " + touch + "\n",
			},
			root: "site",
			want: []string{"Legacy/old", "site/fn.yaml", "exec:/bin/sh"},
		},
		{
			name: "metadata.configFn",
			files: map[string]string{
				"site/cm.yaml":            hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: example.com/v1\nkind: Older\nmetadata:\n  name: older\n  configFn:\n    exec: {path: /bin/sh, args: [-c, touch MARKER]}\n",
			},
			root: "site",
			want: []string{"Older/older", "site/fn.yaml", "exec:/bin/sh"},
		},
		{
			name: "config.kubernetes.io/container annotation",
			files: map[string]string{
				"site/cm.yaml":            hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: example.com/v1\nkind: Boxed\nmetadata:\n  name: boxed\n  annotations:\n    config.kubernetes.io/container: example.com/touch:v1\n",
			},
			root: "site",
			want: []string{"Boxed/boxed", "site/fn.yaml", "example.com/touch:v1", "not supported"},
		},
		{
			name: "container function",
			files: map[string]string{
				"site/cm.yaml":            hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: example.com/v1\nkind: Setter\nmetadata:\n  name: setter\n  annotations:\n    config.kubernetes.io/function: |\n      container: {image: gcr.io/kpt-fn/apply-setters:v0.2, network: true}\n",
			},
			root: "site",
			want: []string{"Setter/setter", "site/fn.yaml", "gcr.io/kpt-fn/apply-setters:v0.2", "not supported"},
		},
		{
			name: "starlark function",
			files: map[string]string{
				"site/cm.yaml":            hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: example.com/v1\nkind: Star\nmetadata:\n  name: star\n  annotations:\n    config.kubernetes.io/function: |\n      starlark: {path: script.star}\n",
				"site/script.star":        "print('x')\n",
			},
			root: "site",
			want: []string{"Star/star", "site/fn.yaml", "function annotation"},
		},
		{
			name: "validator",
			files: map[string]string{
				"site/cm.yaml":            hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\nvalidators: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: example.com/v1\nkind: Check\nmetadata:\n  name: check\n  annotations:\n    config.kubernetes.io/function: \"" + touch + "\"\n",
			},
			root: "site",
			want: []string{"Check/check", "site/fn.yaml", "exec:/bin/sh"},
		},
		{
			name: "built-in kind in validators",
			files: map[string]string{
				"site/cm.yaml":            hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\nvalidators: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: airshipit.org/v1alpha1\nkind: ReplacementTransformer\nmetadata:\n  name: as-validator\nreplacements: []\n",
			},
			root: "site",
			want: []string{"ReplacementTransformer/as-validator", "site/fn.yaml", "not validators"},
		},
		{
			name: "generator",
			files: map[string]string{
				"site/kustomization.yaml": "generators: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: gen\n  annotations:\n    config.kubernetes.io/function: \"" + touch + "\"\n",
			},
			root: "site",
			want: []string{"Gen/gen", "site/fn.yaml", "exec:/bin/sh"},
		},
		{
			name: "built-in kind with an exec function",
			files: map[string]string{
				"site/cm.yaml":            hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: airshipit.org/v1alpha1\nkind: ReplacementTransformer\nmetadata:\n  name: exec-rt\n  annotations:\n    config.kubernetes.io/function: \"" + touch + "\"\nreplacements: []\n",
			},
			root: "site",
			want: []string{"ReplacementTransformer/exec-rt", "site/fn.yaml", "exec:/bin/sh"},
		},
		{
			name: "non-builtin kind without annotation (legacy exec plugin)",
			files: map[string]string{
				"site/cm.yaml":            hostileCM,
				"site/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [fn.yaml]\n",
				"site/fn.yaml":            "apiVersion: someteam.example.com/v1\nkind: Toucher\nmetadata:\n  name: plain\n",
			},
			root:   "site",
			plugin: "someteam.example.com/v1/toucher/Toucher",
			want:   []string{"Toucher/plain", "site/fn.yaml", "kustomize exec/Go plugin"},
		},
		{
			name: "helmCharts",
			files: map[string]string{
				"site/kustomization.yaml": "helmCharts:\n- name: chart\n  repo: https://charts.example.com\n  version: 1.0.0\n  releaseName: r\n",
			},
			root:  "site",
			fakes: []string{"helm"},
			want:  []string{"site/kustomization.yaml", "helmCharts", "helm program"},
		},
		{
			name: "HelmChartInflationGenerator config",
			files: map[string]string{
				"site/kustomization.yaml": "generators: [helm.yaml]\n",
				"site/helm.yaml":          "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: chart\nname: chart\nrepo: https://charts.example.com\nversion: 1.0.0\nreleaseName: r\n",
			},
			root:  "site",
			fakes: []string{"helm"},
			want:  []string{"HelmChartInflationGenerator/chart", "site/helm.yaml", "helm program"},
		},
		{
			name: "remote repository resource (kustomize clones it with git)",
			files: map[string]string{
				"site/kustomization.yaml": "resources:\n- https://github.com/example/site//base?ref=v1\n",
			},
			root:       "site",
			fakes:      []string{"git"},
			runnerOnly: true,
			want:       []string{"site/kustomization.yaml", "resources[0]", "is remote", "git"},
		},
		{
			name: "remote repository base, ssh form",
			files: map[string]string{
				"site/kustomization.yaml": "resources: [git@github.com:example/site.git//base]\n",
			},
			root:       "site",
			fakes:      []string{"git", "ssh"},
			runnerOnly: true,
			want:       []string{"site/kustomization.yaml", "is remote"},
		},
		{
			name: "function in a Component",
			files: map[string]string{
				"site/cm.yaml":                 hostileCM,
				"site/kustomization.yaml":      "resources: [cm.yaml]\ncomponents: [comp]\n",
				"site/comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ntransformers: [fn.yaml]\n",
				"site/comp/fn.yaml":            noopFunctionForComponent,
			},
			root:       "site",
			runnerOnly: true,
			want:       []string{"site/comp/kustomization.yaml", "Component"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "MARKER")
			files := map[string]string{}
			for name, content := range tc.files {
				files[name] = strings.ReplaceAll(content, "MARKER", marker)
			}
			writeTree(t, dir, files)
			script := "#!/bin/sh\ntouch " + marker + "\n"
			if tc.plugin != "" {
				home := filepath.Join(dir, "plugins")
				p := filepath.Join(home, tc.plugin)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
				t.Setenv("KUSTOMIZE_PLUGIN_HOME", home)
			}
			if len(tc.fakes) > 0 {
				bin := filepath.Join(dir, "bin")
				if err := os.MkdirAll(bin, 0o755); err != nil {
					t.Fatal(err)
				}
				for _, name := range tc.fakes {
					if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			}
			root := filepath.Join(dir, tc.root)
			// As the document layer builds: files shared across roots.
			opts := krusty.MakeDefaultOptions()
			opts.LoadRestrictions = types.LoadRestrictionsNone

			_, _, err := (&Runner{}).BuildSecrets(filesys.MakeFsOnDisk(), root, opts)
			if _, serr := os.Stat(marker); serr == nil {
				t.Fatal("the build ran the function: the marker file exists")
			}
			if err == nil {
				t.Fatal("the build succeeded")
			}
			t.Logf("error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not mention %q: %v", w, err)
				}
			}

			if tc.runnerOnly {
				return
			}
			// kustomize alone, with the project's options, refuses too.
			if _, err := krusty.MakeKustomizer(KrustyOptions(opts)).Run(filesys.MakeFsOnDisk(), root); err == nil {
				t.Error("kustomize with KrustyOptions built the tree")
			}
			if _, serr := os.Stat(marker); serr == nil {
				t.Fatal("kustomize with KrustyOptions ran the function: the marker file exists")
			}
		})
	}
}

// The options every build uses: builtin plugins only, exec and Helm off,
// whatever the caller passed.
func TestKrustyOptions(t *testing.T) {
	in := krusty.MakeDefaultOptions()
	in.PluginConfig.FnpLoadingOptions.EnableExec = true
	in.PluginConfig.HelmConfig.Enabled = true
	in.Reorder = krusty.ReorderOptionLegacy
	for _, tc := range []struct {
		name string
		in   *krusty.Options
	}{{"nil", nil}, {"permissive", in}} {
		t.Run(tc.name, func(t *testing.T) {
			o := KrustyOptions(tc.in)
			pc := o.PluginConfig
			if pc.PluginRestrictions.String() != "PluginRestrictionsBuiltinsOnly" || pc.FnpLoadingOptions.EnableExec ||
				pc.FnpLoadingOptions.Network || pc.HelmConfig.Enabled {
				t.Errorf("plugin config %+v allows more than builtins", pc)
			}
			if tc.in != nil && o.Reorder != tc.in.Reorder {
				t.Error("options other than the plugin config were not kept")
			}
		})
	}
	if !in.PluginConfig.FnpLoadingOptions.EnableExec {
		t.Error("KrustyOptions modified the options passed in")
	}
}

// A built-in function may still produce a config that is not built in (a
// Templater rendering an exec function into a transformer directory):
// refused the same way.
func TestHostileGeneratedConfig(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	writeTree(t, dir, map[string]string{
		"site/cm.yaml":                hostileCM,
		"site/kustomization.yaml":     "resources: [cm.yaml]\ntransformers: [gen]\n",
		"site/gen/kustomization.yaml": "generators: [templater.yaml]\n",
		"site/gen/templater.yaml":     "apiVersion: airshipit.org/v1alpha1\nkind: Templater\nmetadata:\n  name: t\ntemplate: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: rendered\n    annotations:\n      config.kubernetes.io/function: \"" + strings.ReplaceAll(touch, "MARKER", marker) + "\"\n",
	})
	_, err := (&Runner{}).Build(filesys.MakeFsOnDisk(), filepath.Join(dir, "site"), nil)
	var ue *UnsupportedFunctionError
	if !errors.As(err, &ue) || ue.Name != "rendered" {
		t.Fatalf("err = %v, want an *UnsupportedFunctionError for ConfigMap/rendered", err)
	}
	if _, serr := os.Stat(marker); serr == nil {
		t.Fatal("the generated function ran: the marker file exists")
	}
}
