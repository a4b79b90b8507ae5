package root

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/phase/runlog"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func phaseDoc(name, executor string, deps ...string) string {
	return `apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata: {name: ` + name + `, clusterName: c1}
config:
  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: KubernetesApply, name: ` + executor + `}
  documentEntryPoint: ` + name + `
---
`
}

// TestPlanRunStopsAtFailureAndResumes runs plans against a real API server:
// the plan stops at the failing phase with a summary, later phases do not
// run, and --resume-from continues once the cause is fixed. A plan with
// dependsOn runs independent phases in one wave.
func TestPlanRunStopsAtFailureAndResumes(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	dir := t.TempDir()
	t.Setenv("AIRSHIP_PHASE_STATE_DIR", filepath.Join(dir, "state", "phases"))
	files := map[string]string{
		"airship-config.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: t\ncontexts: {t: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":             "phase: {path: phases}\n",
		"site/phases/kustomization.yaml": "resources: [phases.yaml]\n",
		"site/phases/phases.yaml": phaseDoc("a", "apply") + phaseDoc("b", "apply-strict") + phaseDoc("c", "apply") +
			phaseDoc("x", "apply") + phaseDoc("y", "apply") + phaseDoc("z", "apply") + `apiVersion: airshipit.org/v1alpha1
kind: KubernetesApply
metadata: {name: apply}
config: {waitOptions: {timeout: 30}}
---
apiVersion: airshipit.org/v1alpha1
kind: KubernetesApply
metadata: {name: apply-strict}
config:
  waitOptions:
    timeout: 1
    conditions:
    - {apiVersion: v1, kind: ConfigMap, jsonPath: "{.data.state}", value: done}
---
apiVersion: airshipit.org/v1alpha1
kind: ClusterMap
metadata: {name: m}
map: {c1: {}}
---
apiVersion: airshipit.org/v1alpha1
kind: PhasePlan
metadata: {name: seq}
phases: [{name: a}, {name: b}, {name: c}]
---
apiVersion: airshipit.org/v1alpha1
kind: PhasePlan
metadata: {name: fan}
phases: [{name: x}, {name: y}, {name: z, dependsOn: [x, y]}]
---
apiVersion: airshipit.org/v1alpha1
kind: PhasePlan
metadata: {name: again}
phases: [{name: x}, {name: y}, {name: x}]
`,
	}
	for _, n := range []string{"a", "b", "c", "x", "y", "z"} {
		files["site/"+n+"/kustomization.yaml"] = "resources: [cm.yaml]\n"
		files["site/"+n+"/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + n + ", namespace: default}\ndata: {state: pending}\n"
	}
	writeFiles(t, dir, files)
	args := func(a ...string) []string {
		return append([]string{"--airshipconf=" + filepath.Join(dir, "airship-config.yaml"), "--kubeconfig=" + env.Kubeconfig, "--no-render-cache"}, a...)
	}

	out, errOut, code := run(t, args("plan", "run", "seq")...)
	if code == 0 {
		t.Fatalf("plan with a failing phase succeeded:\n%s", out)
	}
	for _, want := range []string{"a        succeeded", "b        failed", "c        not run"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{`phase "b" failed`, `ConfigMap/default/b: condition {.data.state} is "pending", want "done"`, "--resume-from b"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Each phase run is in the site's run log, for the dashboard: a and b,
	// not c.
	logged, err := os.ReadFile(runlog.RunsPath("m"))
	if err != nil {
		t.Fatal(err)
	}
	var recs []runlog.Record
	for _, l := range strings.Split(strings.TrimSpace(string(logged)), "\n") {
		var r runlog.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 2 || recs[0].Name != "a" || recs[0].Result != "succeeded" || recs[1].Name != "b" || recs[1].Result != "failed" ||
		!strings.Contains(recs[1].Message, "condition") || recs[1].By != "airshipctl" || recs[1].Seconds <= 0 {
		t.Errorf("run log %s: %+v", runlog.RunsPath("m"), recs)
	}
	// A phase that never ran is not applied: status says so and exits 1.
	if out, errOut, code := run(t, args("phase", "status", "c")...); code != 1 || !strings.Contains(out, "never run") || !strings.Contains(errOut, "not applied") {
		t.Errorf("phase status of c (never run after b failed): exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, args("plan", "status", "seq")...); code != 1 || !strings.Contains(errOut, "not ready: c") {
		t.Errorf("plan status with c never run: exit %d\n%s%s", code, out, errOut)
	}

	// Fix b and resume from it: a is skipped, b and c run.
	files["site/b/cm.yaml"] = strings.Replace(files["site/b/cm.yaml"], "pending", "done", 1)
	writeFiles(t, dir, files)
	out, errOut, code = run(t, args("plan", "run", "seq", "--resume-from", "b")...)
	if code != 0 {
		t.Fatalf("resume failed: %s\n%s", out, errOut)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"a skipped (--resume-from)", "b succeeded", "c succeeded"} {
		if !strings.Contains(flat, want) {
			t.Errorf("resume summary lacks %q:\n%s", want, out)
		}
	}
	if out, errOut, code := run(t, args("plan", "status", "seq")...); code != 0 {
		t.Errorf("plan status after every phase succeeded: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := run(t, args("plan", "run", "seq", "--resume-from", "q")...); code == 0 || !strings.Contains(errOut, `--resume-from "q" is not a phase of plan "seq"`) {
		t.Errorf("bad --resume-from: %d %s", code, errOut)
	}

	out, errOut, code = run(t, args("plan", "run", "fan")...)
	if code != 0 {
		t.Fatalf("fan plan: %s\n%s", out, errOut)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "x succeeded") || !strings.Contains(strings.Join(strings.Fields(out), " "), "z succeeded") {
		t.Errorf("fan summary:\n%s", out)
	}
	// z depends on x and y: it starts only after both are ready.
	zStart := strings.Index(errOut, "[z] applying")
	for _, dep := range []string{"[x] all 1 objects are ready", "[y] all 1 objects are ready"} {
		if i := strings.Index(errOut, dep); i < 0 || zStart < 0 || i > zStart {
			t.Errorf("%q does not come before z starts:\n%s", dep, errOut)
		}
	}

	// The summary as JSON, on stdout alone (progress stays on stderr).
	out, errOut, code = run(t, args("plan", "run", "fan", "-o", "json")...)
	var summary []struct {
		Phase, Result string
		Seconds       float64
	}
	if err := json.Unmarshal([]byte(out), &summary); code != 0 || err != nil {
		t.Fatalf("plan run -o json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if len(summary) != 3 || summary[0].Phase != "x" || summary[2].Phase != "z" || summary[2].Result != "succeeded" {
		t.Errorf("plan run -o json summary: %+v", summary)
	}

	// Without dependsOn a plan runs in order and may run a phase again, as
	// upstream's plans do.
	out, errOut, code = run(t, args("plan", "run", "again", "-o", "json")...)
	summary = nil
	if err := json.Unmarshal([]byte(out), &summary); code != 0 || err != nil {
		t.Fatalf("plan run again: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	if len(summary) != 3 || summary[0].Phase != "x" || summary[2].Phase != "x" || summary[0].Result != "succeeded" || summary[2].Result != "succeeded" {
		t.Errorf("plan with x twice: %+v", summary)
	}
	if n := strings.Count(errOut, "[x] applying"); n != 2 {
		t.Errorf("x ran %d times, want 2:\n%s", n, errOut)
	}
}
