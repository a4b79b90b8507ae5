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

// writeRefTree writes a kustomize root of n documents that reference each
// other, in groups of four: a ConfigMap, a Deployment naming it (envFrom
// and a volume) and the group's ServiceAccount, a Service selecting the
// Deployment, and the ServiceAccount. The kustomization adds a name
// prefix (so every reference is rewritten), a label, and two replacements
// from a catalogue ConfigMap marked local-config (not in the output): an
// image into every Deployment and a proxy into every ConfigMap.
func writeRefTree(tb testing.TB, root string, n int) {
	tb.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("---\n")
		}
		g := i / 4
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: ns-%d\ndata:\n  key: value-%d\n", g, g%10, g)
		case 1:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  namespace: ns-%d
spec:
  selector:
    matchLabels: {app: app-%d}
  template:
    metadata:
      labels: {app: app-%d}
    spec:
      serviceAccountName: sa-%d
      containers:
      - name: main
        image: registry.invalid/app:v1
        envFrom:
        - configMapRef: {name: cm-%d}
      volumes:
      - name: config
        configMap: {name: cm-%d}
`, g, g%10, g, g, g, g, g)
		case 2:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\n  namespace: ns-%d\nspec:\n  selector: {app: app-%d}\n  ports:\n  - port: 80\n", g, g%10, g)
		default:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa-%d\n  namespace: ns-%d\n", g, g%10)
		}
	}
	writeFiles(tb, root, map[string]string{
		"resources.yaml": b.String(),
		"catalogue.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: versions
  annotations:
    config.kubernetes.io/local-config: "true"
data:
  image: registry.invalid/app:v2
  proxy: http://proxy.invalid:3128
`,
		"kustomization.yaml": `resources:
- catalogue.yaml
- resources.yaml
namePrefix: site-
labels:
- pairs:
    airshipit.org/site: bench
replacements:
- source: {kind: ConfigMap, name: versions, fieldPath: data.image}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=main].image
- source: {kind: ConfigMap, name: versions, fieldPath: data.proxy}
  targets:
  - select: {kind: ConfigMap}
    reject:
    - name: versions
    fieldPaths: [data.proxy]
    options: {create: true}
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

// renderTree is one kustomize root BenchmarkRender renders.
type renderTree struct {
	size  string
	write func(tb testing.TB, root string, n int)
	note  string
}

var renderTrees = []renderTree{
	{
		size:  "documents",
		write: writeTree,
		note:  "the tree has a label transformer and a JSON patch",
	},
	{
		size:  "documents, prefix, replacements, references",
		write: writeRefTree,
		note: "the tree has a name prefix (every reference rewritten: envFrom, volumes, serviceAccountName), a label, " +
			"and two replacements from a local-config catalogue into every Deployment and ConfigMap",
	},
}

// BenchmarkRender renders two trees of $BENCH_SIZE documents (default
// 5,000) with the airshipctl binary (`phase render`, a fresh process with
// an empty render cache every run) and with `kubectl kustomize` (a fresh
// process every run), CLI against CLI, cold against cold: a flat tree,
// and one whose objects reference each other under a name prefix and
// replacements, so the split build (internal/document) is measured where
// its checks have work to do. Both write the YAML stream to a file; the
// first run checks the two files are byte for byte the same, so both did
// the same work. Runs alternate which side goes first. A run from the warm
// render cache is reported beside, as a note: kubectl has no such cache,
// so it is not a row.
func BenchmarkRender(b *testing.B) {
	n := harness.Size(b, 5000)
	kubectl := harness.Kubectl(b)
	airshipctl := harness.Binary(b, "airshipctl")

	type side struct {
		config, root     string
		ours, peer, warm harness.Tally
	}
	sides := make([]*side, len(renderTrees))
	for i, t := range renderTrees {
		config, root := writeSite(b, filepath.Join(b.TempDir(), "site"))
		t.write(b, root, n)
		sides[i] = &side{config: config, root: root}
	}
	dir := b.TempDir()
	oursCmd := func(config, cacheDir, out string) *exec.Cmd {
		cmd := exec.CommandContext(b.Context(), airshipctl, "--airshipconf", config, "phase", "render", renderPhase)
		cmd.Env = append(os.Environ(), "AIRSHIP_RENDER_CACHE_DIR="+cacheDir)
		cmd.Stdout = create(b, out)
		return cmd
	}
	peerCmd := func(root, out string) *exec.Cmd {
		cmd := exec.CommandContext(b.Context(), kubectl, "kustomize", root)
		cmd.Stdout = create(b, out)
		return cmd
	}
	run := func(cmd *exec.Cmd, t *harness.Tally) {
		p, err := harness.Run(cmd)
		if err != nil {
			b.Fatal(err)
		}
		t.AddProc(p)
	}

	iter := 0
	for b.Loop() {
		for i, s := range sides {
			cache := filepath.Join(dir, fmt.Sprintf("cache-%d-%d", i, iter))
			oursOut, peerOut := filepath.Join(dir, "ours.yaml"), filepath.Join(dir, "peer.yaml")
			order := []func(){
				func() { run(oursCmd(s.config, cache, oursOut), &s.ours) },
				func() { run(peerCmd(s.root, peerOut), &s.peer) },
			}
			if iter%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, f := range order {
				f()
			}
			if iter == 0 {
				sameOutput(b, oursOut, peerOut, n)
			}
			// The same cache again, as the next `phase render` would find it.
			warmOut := filepath.Join(dir, "warm.yaml")
			run(oursCmd(s.config, cache, warmOut), &s.warm)
			if iter == 0 {
				sameOutput(b, warmOut, peerOut, n)
			}
		}
		iter++
	}
	for i, s := range sides {
		harness.Record(b, harness.Row{
			Workload:       "render",
			Size:           harness.Count(n) + " " + renderTrees[i].size,
			Ours:           "airshipctl phase render (the built binary, a fresh process, empty render cache)",
			Peer:           "kubectl kustomize (a fresh process)",
			OursSeconds:    s.ours.Seconds(),
			PeerSeconds:    s.peer.Seconds(),
			OursPeakRSSMiB: s.ours.PeakRSSMiB,
			Parallelism:    "1 process each",
			Cluster:        "none",
			Runs:           s.ours.Runs,
			Notes: []string{
				"both print the same YAML stream to a file (compared byte for byte); " + renderTrees[i].note,
				fmt.Sprintf("ours again from the warm render cache: %s (kubectl has no cache); kubectl kustomize peak RSS %.0f MiB",
					harness.Seconds(s.warm.Seconds()), s.peer.PeakRSSMiB),
			},
		})
	}
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
