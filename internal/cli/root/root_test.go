package root

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/cli"
)

var update = flag.Bool("update", false, "rewrite golden files")

// checkGolden compares got with testdata/name (go test -update rewrites it).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if got != string(want) {
		t.Errorf("stdout differs from %s:\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

// run executes airshipctl in-process with injected streams.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

const exampleConfig = "--airshipconf=../../../examples/site/airship-config.yaml"

func TestPhaseAndPlanCommandsOnExampleSite(t *testing.T) {
	requireCAPILink(t)
	tests := []struct {
		name   string
		args   []string
		golden string
		code   int
		errHas string
	}{
		{name: "phase list", args: []string{"phase", "list"}, golden: "phase-list.txt"},
		{name: "phase list json", args: []string{"phase", "list", "-o", "json"}, golden: "phase-list.json"},
		{name: "phase list of cluster", args: []string{"phase", "list", "--cluster-name", "none"}, golden: "phase-list-empty.txt"},
		{name: "render phase deployments", args: []string{"phase", "render", "workload-ephemeral", "-k", "Deployment"}, golden: "render-workload-deployment.yaml"},
		{name: "render phase deployments as a JSON List", args: []string{"phase", "render", "workload-ephemeral", "-k", "Deployment", "-o", "json"}, golden: "render-workload-deployment.json"},
		{name: "render phase by label and apiversion", args: []string{"phase", "render", "workload-ephemeral", "-l", "app=hello", "-g", "apps/v1"}, golden: "render-workload-deployment.yaml"},
		{name: "render executor", args: []string{"phase", "render", "workload-ephemeral", "--source", "executor"}, golden: "render-workload-executor.yaml"},
		{name: "render config", args: []string{"phase", "render", "initinfra-ephemeral", "-s", "config"}, golden: "render-initinfra-config.yaml"},
		{name: "render phase bundle", args: []string{"phase", "render", "-s", "config", "-k", "ClusterMap"}, golden: "render-clustermap.yaml"},
		{name: "phase tree", args: []string{"phase", "tree", "initinfra-ephemeral"}, golden: "tree-initinfra.txt"},
		{name: "phase validate", args: []string{"phase", "validate", "workload-ephemeral"}, golden: "validate-workload.txt"},
		{name: "plan list", args: []string{"plan", "list"}, golden: "plan-list.txt"},
		{name: "plan validate", args: []string{"plan", "validate", "deploy-local"}, golden: "plan-validate.txt"},
		{name: "unknown phase", args: []string{"phase", "render", "nope"}, code: 1, errHas: `phase "nope": no document matches group=airshipit.org version=v1alpha1 kind=Phase name=nope`},
		{name: "unknown plan", args: []string{"plan", "validate", "nope"}, code: 1, errHas: "documents of that kind present: PhasePlan/deploy-local (plan.yaml)"},
		{name: "bad source", args: []string{"phase", "render", "x", "--source", "all"}, code: 1, errHas: `--source "all"`},
		{name: "bad output", args: []string{"phase", "list", "-o", "xml"}, code: 1, errHas: "unknown output format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{exampleConfig, "--no-render-cache"}, tt.args...)
			out, errOut, code := run(t, args...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			if tt.errHas != "" && !strings.Contains(errOut, tt.errHas) {
				t.Errorf("stderr lacks %q:\n%s", tt.errHas, errOut)
			}
			if tt.golden == "" {
				return
			}
			checkGolden(t, tt.golden, out)
		})
	}
}

func TestConfigCommands(t *testing.T) {
	dir := t.TempDir()
	conf := "--airshipconf=" + filepath.Join(dir, "config")
	steps := []struct {
		args   []string
		code   int
		outHas string
		errHas string
	}{
		{args: []string{"config", "get-context"}, code: 1, errHas: "airshipctl config init"},
		{args: []string{"config", "init"}, outHas: "Wrote"},
		{args: []string{"config", "init"}, code: 1, errHas: "--overwrite"},
		{args: []string{"config", "set-manifest", "lab", "--repo", "site", "--url", "https://example.invalid/org/lab-site.git", "--branch", "main", "--phase", "--target-path", "/srv", "--metadata-path", "metadata.yaml"}, outHas: `Manifest "lab" created`},
		{args: []string{"config", "set-manifest", "lab", "--url", "x"}, code: 1, errHas: "--repo"},
		{args: []string{"config", "set-manifest", "lab", "--repo", "site", "--tag", "v1"}, code: 1, errHas: "mutually exclusive"},
		{args: []string{"config", "set-context", "lab", "--manifest", "lab", "--current"}, outHas: `Context "lab" created`},
		{args: []string{"config", "set-context", "broken", "--manifest", "missing"}, code: 1, errHas: "contexts[broken].manifest"},
		{args: []string{"config", "get-context", "--current", "-o", "yaml"}, outHas: "manifest: lab"},
		{args: []string{"config", "get-context"}, outHas: "*         lab"},
		{args: []string{"config", "use-context", "nope"}, code: 1, errHas: "ephemeral-cluster, lab, target-cluster"},
		{args: []string{"config", "use-context", "target-cluster"}, outHas: "Switched"},
		{args: []string{"config", "get-manifest", "lab", "-o", "json"}, outHas: `"url": "https://example.invalid/org/lab-site.git"`},
		{args: []string{"config", "get-manifest"}, outHas: "lab       site"},
	}
	for i, st := range steps {
		out, errOut, code := run(t, append([]string{conf}, st.args...)...)
		if code != st.code {
			t.Fatalf("step %d %v: exit %d, want %d\n%s%s", i, st.args, code, st.code, out, errOut)
		}
		if st.outHas != "" && !strings.Contains(out, st.outHas) {
			t.Errorf("step %d %v: stdout lacks %q:\n%s", i, st.args, st.outHas, out)
		}
		if st.errHas != "" && !strings.Contains(errOut, st.errHas) {
			t.Errorf("step %d %v: stderr lacks %q:\n%s", i, st.args, st.errHas, errOut)
		}
	}
	info, err := os.Stat(filepath.Join(dir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, want 0600", info.Mode().Perm())
	}
}

func TestGetManifestNeverPrintsPasswords(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	cfg := `apiVersion: airshipit.org/v1alpha1
kind: Config
currentContext: c
contexts:
  c: {manifest: m}
manifests:
  m:
    phaseRepositoryName: r
    targetPath: /srv
    metadataPath: metadata.yaml
    repositories:
      r:
        url: https://example.invalid/r.git
        auth: {type: http-basic, username: u, httpPass: hunter2-secret}
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"yaml", "json", "table"} {
		out, errOut, code := run(t, "--airshipconf="+path, "config", "get-manifest", "m", "-o", format)
		if code != 0 {
			t.Fatalf("%s: %s", format, errOut)
		}
		if strings.Contains(out, "hunter2") {
			t.Errorf("%s output shows the password:\n%s", format, out)
		}
		if format != "table" && !strings.Contains(out, "REDACTED") {
			t.Errorf("%s output does not mark the redacted password:\n%s", format, out)
		}
	}
	var v map[string]any
	out, _, _ := run(t, "--airshipconf="+path, "config", "get-manifest", "m", "-o", "json")
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
}
