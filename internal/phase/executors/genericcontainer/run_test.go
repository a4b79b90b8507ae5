package genericcontainer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

const phaseDocs = `apiVersion: v1
kind: ConfigMap
metadata:
  name: first
  namespace: default
data:
  greeting: hello
---
apiVersion: v1
kind: Secret
metadata:
  name: second
  namespace: default
stringData:
  k: v
`

// A built-in function (the replacement-transformer image) runs in process
// over the phase's documents, its output written to sinkOutputDir.
func TestBuiltinFunctionRunsInProcess(t *testing.T) {
	stateDir(t)
	cases := []struct {
		name string
		sink string
	}{{"to sinkOutputDir", "  sinkOutputDir: out\n"}, {"printed", ""}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := newExecutor(t, site{phaseDocs: phaseDocs, executor: gc("replace", "  type: krm\n  image: quay.io/airshipit/replacement-transformer:latest\n"+tc.sink+`config: |
  apiVersion: airshipit.org/v1alpha1
  kind: ReplacementTransformer
  metadata:
    name: copy
  replacements:
  - source:
      objref:
        kind: ConfigMap
        name: first
      fieldref: data.greeting
    target:
      objref:
        kind: Secret
        name: second
      fieldrefs:
      - stringData.k
`)})
			var stdout bytes.Buffer
			ex.Stdout = &stdout
			// No runtime and no bash needed: nothing is looked up.
			t.Setenv("PATH", t.TempDir())
			if _, err := runCollect(t, ex, executor.RunOptions{}); err != nil {
				t.Fatal(err)
			}
			out := stdout.String()
			if tc.sink != "" {
				if out != "" {
					t.Errorf("printed output with a sink: %s", out)
				}
				data, err := os.ReadFile(filepath.Join(ex.cfg.SiteDir, "out", "default", "secret_second.yaml"))
				if err != nil {
					files, _ := filepath.Glob(filepath.Join(ex.cfg.SiteDir, "*", "*"))
					t.Fatalf("%v; files: %v", err, files)
				}
				out = string(data)
			}
			if !strings.Contains(out, "k: hello") {
				t.Errorf("replacement not made:\n%s", out)
			}
		})
	}
}

func kubectlPath(t *testing.T) {
	t.Helper()
	kubectl := testtool.Path(t, "kubectl", local.DefaultBinDir())
	testtool.Path(t, "bash")
	t.Setenv("PATH", filepath.Dir(kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// The toolbox script runs with bash and kubectl against a real API server:
// the ResourceList on stdin, the narrowed documents in
// RENDERED_BUNDLE_PATH, a private kubeconfig copy, and its output
// documents in sinkOutputDir.
func TestToolboxScriptRunsLocally(t *testing.T) {
	kubectlPath(t)
	states := stateDir(t)
	t.Setenv("FROM_ENV", "exported-value")
	const script = `set -euo pipefail
stdin=$(cat)
echo "script starts" 1>&2
grep -q '^kind: ResourceList' <<<"$stdin"
grep -q 'name: first' <<<"$stdin"
grep -q 'name: second' <<<"$stdin"
# Only the Secret matches RESOURCE_KIND_FILTER.
if grep -q 'name: first' "$RENDERED_BUNDLE_PATH"; then echo "filter not applied" 1>&2; exit 9; fi
kubectl --context "$KCTL_CONTEXT" apply -f "$RENDERED_BUNDLE_PATH" 1>&2
kubectl --context "$KCTL_CONTEXT" create configmap made-by-script -n default --from-literal=from=script 1>&2
mode=$(stat -c %a "$KUBECONFIG")
cat <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: result
data:
  kubeconfigMode: "$mode"
  kubeconfig: "$KUBECONFIG"
  context: "$KCTL_CONTEXT"
  fromEnv: "$FROM_ENV"
  workdir: "$PWD"
EOF
`
	cm := "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: the-script\ndata:\n  script: |\n" + indent(script, "    ")
	exDoc := gc("toolbox", "  type: krm\n  image: localhost/toolbox\n  hostNetwork: true\n  sinkOutputDir: results\n  envVars:\n  - RESOURCE_KIND_FILTER=Secret\n  - FROM_ENV\n") +
		"configRef:\n  kind: ConfigMap\n  name: the-script\n  apiVersion: v1\n"
	ex := newExecutor(t, site{executor: exDoc, phaseBundle: exDoc + cm, phaseDocs: phaseDocs, cluster: "target-cluster", kubeconfig: env.Kubeconfig})
	evs, err := runCollect(t, ex, executor.RunOptions{})
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, eventText(evs))
	}
	if !strings.Contains(eventText(evs), "script starts") {
		t.Errorf("the script's standard error is not in the log:\n%s", eventText(evs))
	}
	data, err := os.ReadFile(filepath.Join(ex.cfg.SiteDir, "results", "configmap_result.yaml"))
	if err != nil {
		t.Fatalf("no output in sinkOutputDir: %v\nlog:\n%s", err, eventText(evs))
	}
	out := string(data)
	for _, want := range []string{`kubeconfigMode: "600"`, `context: "target-cluster"`, `fromEnv: "exported-value"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	// The kubeconfig copy and the working directory are gone.
	for _, key := range []string{"kubeconfig", "workdir"} {
		i := strings.Index(out, key+": ")
		if i < 0 {
			t.Fatalf("output lacks %s:\n%s", key, out)
		}
		path := strings.Trim(strings.SplitN(out[i+len(key)+2:], "\n", 2)[0], `"`)
		if path == "" || path == env.Kubeconfig {
			t.Fatalf("%s: %q is not a private copy", key, path)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s %s still exists after the run (%v)", key, path, err)
		}
	}
	// What kubectl did is in the cluster.
	ctx := context.Background()
	var made corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "made-by-script"}, &made); err != nil {
		t.Errorf("the script's kubectl create did not reach the API server: %v", err)
	}
	var sec corev1.Secret
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "second"}, &sec); err != nil {
		t.Errorf("the script's kubectl apply of RENDERED_BUNDLE_PATH did not reach the API server: %v", err)
	}
	var first corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "first"}, &first); err == nil {
		t.Errorf("ConfigMap/first was applied though RESOURCE_KIND_FILTER excluded it")
	}
	// Nothing in the log, the state file or status shows the kubeconfig's contents.
	kc, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var secretBits []string
	for _, line := range strings.Split(string(kc), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ": "); ok && strings.Contains(k, "data") && len(v) > 20 {
			secretBits = append(secretBits, v[:20])
		}
	}
	if len(secretBits) == 0 {
		t.Fatal("fixture: no key or certificate data found in the kubeconfig")
	}
	st, err := ex.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stateFiles, _ := filepath.Glob(filepath.Join(states, "*", "test-phase.json"))
	if len(stateFiles) != 1 {
		t.Fatalf("state files %v, want one", stateFiles)
	}
	state, _ := os.ReadFile(stateFiles[0])
	for _, bit := range secretBits {
		for what, text := range map[string]string{"log": eventText(evs), "state": string(state), "status": st.Objects[0].Message} {
			if strings.Contains(text, bit) {
				t.Errorf("the %s shows kubeconfig data", what)
			}
		}
	}
	if o := st.Objects[0]; !o.Applied || !o.Ready || !strings.Contains(o.Message, "succeeded") || !strings.Contains(o.Message, "1 documents written to") {
		t.Errorf("status after a successful run: %+v", o)
	}
}

// A failing script fails the run, says its exit status, and status shows
// the failure; a later successful run replaces it.
func TestToolboxScriptFailureAndStatus(t *testing.T) {
	kubectlPath(t)
	stateDir(t)
	target := t.TempDir()
	mk := func(script string) *Executor {
		return newExecutor(t, site{targetPath: target, executor: gc("fails", "  image: localhost/toolbox\nconfig: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: s\n  data:\n    script: |\n"+indent(script, "      "))})
	}
	ex := mk("echo broken on stdout\nexit 3\n")
	st, err := ex.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o := st.Objects[0]; o.Applied || o.Ready || !strings.Contains(st.Message, "never run") {
		t.Errorf("status before any run: %+v %s", o, st.Message)
	}
	evs, err := runCollect(t, ex, executor.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "script exited with status 3") || !strings.Contains(err.Error(), "GenericContainer/fails") {
		t.Fatalf("error %v", err)
	}
	if !strings.Contains(eventText(evs), "broken on stdout") {
		t.Errorf("without a sink the script's stdout is not in the log:\n%s", eventText(evs))
	}
	st, err = ex.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o := st.Objects[0]; !o.Applied || o.Ready || !strings.Contains(o.Message, "failed") || !strings.Contains(o.Message, "status 3") {
		t.Errorf("status after a failed run: %+v", o)
	}
	if _, err := runCollect(t, mk("true\n"), executor.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err = ex.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o := st.Objects[0]; !o.Ready {
		t.Errorf("status after a later successful run: %+v", o)
	}
	// A dry run runs nothing and records nothing.
	dry := mk("exit 4\n")
	if _, err := runCollect(t, dry, executor.RunOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if st, _ := dry.Status(context.Background()); !st.Objects[0].Ready {
		t.Errorf("a dry run changed the recorded result: %+v", st.Objects[0])
	}
}

// A stub docker on PATH records the command line and stdin it is given
// and answers with a document.
func TestOtherImageRunsWithDockerOnPath(t *testing.T) {
	stateDir(t)
	bin := t.TempDir()
	rec := t.TempDir()
	writeExecutable(t, filepath.Join(bin, "docker"), `#!/bin/sh
printf '%s\n' "$@" > `+rec+`/argv
cat > `+rec+`/stdin
printf '%s' "$HTTP_PROXY" > `+rec+`/proxy
echo "pulling image" 1>&2
cat <<EOF
apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: from-container
EOF
`)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+"/usr/bin:/bin")
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	ex := newExecutor(t, site{phaseDocs: phaseDocs, executor: gc("builder",
		"  image: quay.io/airshipit/image-builder:latest\n  hostNetwork: true\n  airship:\n    privileged: true\n    cmd: [/bin/bash, -c, build]\n"+
			"  envVars:\n  - IMAGE_TYPE=iso\n  - HTTP_PROXY\n  mounts:\n  - type: bind\n    src: /srv/images\n    dst: /config\n    rw: true\n"+
			"config: |\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: builder-config\n  data:\n    k: v\n")})
	var stdout bytes.Buffer
	ex.Stdout = &stdout
	evs, err := runCollect(t, ex, executor.RunOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, eventText(evs))
	}
	argv, _ := os.ReadFile(filepath.Join(rec, "argv"))
	want := []string{"run", "--rm", "-i", "--network", "host", "--privileged", "--mount", "type=bind,source=/srv/images,target=/config",
		"-e", "IMAGE_TYPE=iso", "-e", "HTTP_PROXY", "quay.io/airshipit/image-builder:latest", "/bin/bash", "-c", "build"}
	if got := strings.Split(strings.TrimSuffix(string(argv), "\n"), "\n"); !slices.Equal(got, want) {
		t.Errorf("docker argv\n got %q\nwant %q", got, want)
	}
	stdin, _ := os.ReadFile(filepath.Join(rec, "stdin"))
	for _, w := range []string{"kind: ResourceList", "name: builder-config", "name: first", "name: second"} {
		if !strings.Contains(string(stdin), w) {
			t.Errorf("container stdin lacks %q:\n%s", w, stdin)
		}
	}
	if proxy, _ := os.ReadFile(filepath.Join(rec, "proxy")); string(proxy) != "http://proxy.invalid:3128" {
		t.Errorf("docker did not get HTTP_PROXY to pass on: %q", proxy)
	}
	if !strings.Contains(stdout.String(), "name: from-container") {
		t.Errorf("container output not printed: %q", stdout.String())
	}
	if !strings.Contains(eventText(evs), "pulling image") {
		t.Errorf("container stderr not in the log:\n%s", eventText(evs))
	}
}

// Without docker or podman, an image that needs one fails clearly, and
// status records it.
func TestNoRuntimeErrorNamesImageAndRuntimes(t *testing.T) {
	stateDir(t)
	t.Setenv("PATH", t.TempDir())
	ex := newExecutor(t, site{executor: gc("applier", "  type: krm\n  image: localhost/applier:latest\n")})
	_, err := runCollect(t, ex, executor.RunOptions{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"localhost/applier:latest", "looked for docker, podman", "GenericContainer/applier"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	st, err := ex.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if o := st.Objects[0]; o.Ready || !strings.Contains(o.Message, "looked for docker, podman") {
		t.Errorf("status: %+v", o)
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
