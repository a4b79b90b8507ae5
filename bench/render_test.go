package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/bench/internal/harness"
)

// writeTree writes a kustomize root of n documents (ConfigMaps, Deployments
// and Services in equal thirds), with a label transformer and a patch.
func writeTree(tb testing.TB, root string, n int) {
	tb.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("---\n")
		}
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: ns-%d\ndata:\n  key: value-%d\n", i, i%10, i)
		case 1:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  namespace: ns-%d
spec:
  replicas: 1
  selector:
    matchLabels: {app: app-%d}
  template:
    metadata:
      labels: {app: app-%d}
    spec:
      containers:
      - name: main
        image: registry.invalid/app:%d
`, i, i%10, i, i, i)
		default:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\n  namespace: ns-%d\nspec:\n  selector: {app: app-%d}\n  ports:\n  - port: 80\n", i, i%10, i-1)
		}
	}
	writeFiles(tb, root, map[string]string{
		"resources.yaml": b.String(),
		"kustomization.yaml": `resources:
- resources.yaml
labels:
- pairs:
    airshipit.org/site: bench
patches:
- target:
    kind: Deployment
  patch: |
    - op: replace
      path: /spec/replicas
      value: 2
`,
	})
}

func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// renderPhase is the phase whose executor bundle is the generated tree.
const renderPhase = "render"

// writeSite writes the smallest airshipctl site around a kustomize root:
// an airship config, metadata.yaml, and a phase bundle holding one phase
// whose documentEntryPoint is the root. It returns the config's path and
// the root's.
func writeSite(tb testing.TB, dir string) (config, root string) {
	tb.Helper()
	repo := filepath.Join(dir, "site")
	writeFiles(tb, repo, map[string]string{
		"airship-config.yaml": `apiVersion: airshipit.org/v1alpha1
kind: Config
currentContext: bench
contexts:
  bench:
    manifest: bench
manifests:
  bench:
    phaseRepositoryName: site
    repositories:
      site:
        url: site
    targetPath: ..
    metadataPath: metadata.yaml
`,
		"metadata.yaml":             "phase:\n  path: phases\n  docEntryPointPrefix: \"\"\n",
		"phases/kustomization.yaml": "resources:\n- phases.yaml\n",
		"phases/phases.yaml": `apiVersion: airshipit.org/v1alpha1
kind: Phase
metadata:
  name: ` + renderPhase + `
config:
  executorRef:
    apiVersion: airshipit.org/v1alpha1
    kind: KubernetesApply
    name: apply
  documentEntryPoint: tree
---
apiVersion: airshipit.org/v1alpha1
kind: KubernetesApply
metadata:
  name: apply
config: {}
`,
	})
	return filepath.Join(repo, "airship-config.yaml"), filepath.Join(repo, "tree")
}

// BenchmarkRender renders a tree of $BENCH_SIZE documents (default 5,000)
// with the airshipctl binary (`phase render`, a fresh process with an empty
// render cache every run) and with `kubectl kustomize` (a fresh process
// every run), CLI against CLI, cold against cold. Both write the YAML
// stream to a file; the first run checks the two files are byte for byte
// the same, so both did the same work. Runs alternate which side goes
// first. A run from the warm render cache is reported beside, as a note:
// kubectl has no such cache, so it is not a row.
func BenchmarkRender(b *testing.B) {
	n := harness.Size(b, 5000)
	kubectl := harness.Kubectl(b)
	airshipctl := harness.Binary(b, "airshipctl")
	dir := b.TempDir()
	config, root := writeSite(b, dir)
	writeTree(b, root, n)

	oursCmd := func(cacheDir, out string) *exec.Cmd {
		cmd := exec.CommandContext(b.Context(), airshipctl, "--airshipconf", config, "phase", "render", renderPhase)
		cmd.Env = append(os.Environ(), "AIRSHIP_RENDER_CACHE_DIR="+cacheDir)
		cmd.Stdout = create(b, out)
		return cmd
	}
	peerCmd := func(out string) *exec.Cmd {
		cmd := exec.CommandContext(b.Context(), kubectl, "kustomize", root)
		cmd.Stdout = create(b, out)
		return cmd
	}

	var ours, peer, warm harness.Tally
	iter := 0
	for b.Loop() {
		cache := filepath.Join(dir, fmt.Sprintf("cache-%d", iter))
		oursOut, peerOut := filepath.Join(dir, "ours.yaml"), filepath.Join(dir, "peer.yaml")
		sides := []func(){
			func() {
				p, err := harness.Run(oursCmd(cache, oursOut))
				if err != nil {
					b.Fatal(err)
				}
				ours.AddProc(p)
			},
			func() {
				p, err := harness.Run(peerCmd(peerOut))
				if err != nil {
					b.Fatal(err)
				}
				peer.AddProc(p)
			},
		}
		if iter%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			side()
		}
		if iter == 0 {
			sameOutput(b, oursOut, peerOut, n)
		}
		// The same cache again, as the next `phase render` would find it.
		p, err := harness.Run(oursCmd(cache, filepath.Join(dir, "warm.yaml")))
		if err != nil {
			b.Fatal(err)
		}
		warm.AddProc(p)
		if iter == 0 {
			sameOutput(b, filepath.Join(dir, "warm.yaml"), peerOut, n)
		}
		iter++
	}
	harness.Record(b, harness.Row{
		Workload:       "render",
		Size:           harness.Count(n) + " documents",
		Ours:           "airshipctl phase render (the built binary, a fresh process, empty render cache)",
		Peer:           "kubectl kustomize (a fresh process)",
		OursSeconds:    ours.Seconds(),
		PeerSeconds:    peer.Seconds(),
		OursPeakRSSMiB: ours.PeakRSSMiB,
		Parallelism:    "1 process each",
		Cluster:        "none",
		Runs:           ours.Runs,
		Notes: []string{
			"both print the same YAML stream to a file (compared byte for byte); the tree has a label transformer and a JSON patch",
			fmt.Sprintf("ours again from the warm render cache: %s (kubectl has no cache); kubectl kustomize peak RSS %.0f MiB",
				harness.Seconds(warm.Seconds()), peer.PeakRSSMiB),
		},
	})
}

func create(tb testing.TB, path string) *os.File {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = f.Close() })
	return f
}

// sameOutput fails unless both files hold the same n documents.
func sameOutput(tb testing.TB, ours, peer string, n int) {
	tb.Helper()
	a, err := os.ReadFile(ours)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := os.ReadFile(peer)
	if err != nil {
		tb.Fatal(err)
	}
	if !bytes.Equal(a, p) {
		tb.Fatalf("airshipctl and kubectl rendered different output (%d and %d bytes)", len(a), len(p))
	}
	if docs := bytes.Count(a, []byte("\n---\n")) + 1; docs != n {
		tb.Fatalf("rendered %d documents, want %d", docs, n)
	}
}
