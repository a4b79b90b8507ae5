package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/apply"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// applyConcurrency is how many requests ours has in flight, and how many
// kubectl processes the parallel peer runs.
const applyConcurrency = 16

// applyWaitTimeout bounds each side's wait.
const applyWaitTimeout = 10 * time.Minute

// applySet is n objects in namespace ns, split into the files each side
// reads: half ConfigMaps, two fifths Deployments (one pod each), the rest
// Services, plus the Namespace.
type applySet struct {
	ns          string
	namespace   string   // the Namespace document
	deployments []string // Deployment documents
	others      []string // ConfigMaps and Services
}

func newApplySet(ns string, n int) applySet {
	s := applySet{ns: ns, namespace: fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", ns)}
	cms, deps := n/2, n*2/5
	for i := 0; i < cms; i++ {
		s.others = append(s.others, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: %s\ndata:\n  k: v%d\n", i, ns, i))
	}
	for i := 0; i < deps; i++ {
		s.deployments = append(s.deployments, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  namespace: %s
spec:
  replicas: 1
  selector: {matchLabels: {app: app-%d}}
  template:
    metadata: {labels: {app: app-%d}}
    spec: {containers: [{name: main, image: registry.invalid/app:1}]}
`, i, ns, i, i))
	}
	for i := 0; i < n-cms-deps; i++ {
		s.others = append(s.others, fmt.Sprintf("apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\n  namespace: %s\nspec:\n  selector: {app: app-%d}\n  ports: [{port: 80}]\n", i, ns, i%max(deps, 1)))
	}
	return s
}

// all is every document, the Namespace first.
func (s applySet) all() []string {
	return append(append([]string{s.namespace}, s.others...), s.deployments...)
}

// chunk is the k-th of parts round-robin slices, without the Namespace.
func (s applySet) chunk(k, parts int) applySet {
	c := applySet{ns: s.ns}
	for i := k; i < len(s.others); i += parts {
		c.others = append(c.others, s.others[i])
	}
	for i := k; i < len(s.deployments); i += parts {
		c.deployments = append(c.deployments, s.deployments[i])
	}
	return c
}

func writeDocs(tb testing.TB, path string, docs []string) string {
	tb.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// applyChildName is the child mode of this test binary that is our side
// of BenchmarkApply (see TestMain).
const applyChildName = "apply"

func TestMain(m *testing.M) {
	harness.Main(m, map[string]func() error{applyChildName: applyChild})
}

// childReport is what the apply child prints on stdout.
type childReport struct {
	// AppliedSeconds is from the child's start until every object was
	// applied and the inventory written (the first Wait event).
	AppliedSeconds float64 `json:"appliedSeconds"`
	// Sent is how many objects it sent: the rest were unchanged since the
	// inventory's last apply.
	Sent int `json:"sent"`
}

// applyChild is our side of BenchmarkApply, in its own process so its peak
// RSS is ours alone: it reads the objects file, applies it with
// internal/apply (what `phase run` does) and waits for every object.
func applyChild() error {
	start := time.Now()
	conc, err := strconv.Atoi(os.Getenv("BENCH_APPLY_CONCURRENCY"))
	if err != nil {
		return fmt.Errorf("BENCH_APPLY_CONCURRENCY: %w", err)
	}
	data, err := os.ReadFile(os.Getenv("BENCH_APPLY_FILE"))
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return err
		}
		objs = append(objs, u)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("BENCH_APPLY_KUBECONFIG"))
	if err != nil {
		return err
	}
	a, err := apply.New(cfg)
	if err != nil {
		return err
	}
	var applied time.Duration
	res, err := a.Apply(context.Background(), objs, apply.Options{
		Inventory: os.Getenv("BENCH_APPLY_INVENTORY"), WaitTimeout: applyWaitTimeout, Concurrency: conc,
		Progress: func(e apply.Event) {
			if e.Type == "Wait" && applied == 0 {
				applied = time.Since(start)
			}
		},
	})
	if err != nil {
		return err
	}
	if !res.Ready || len(res.Changes) != len(objs) {
		return fmt.Errorf("applied %d of %d objects, ready %v", len(res.Changes), len(objs), res.Ready)
	}
	return json.NewEncoder(os.Stdout).Encode(childReport{AppliedSeconds: applied.Seconds(), Sent: len(objs) - res.NotSent})
}

// BenchmarkApply applies $BENCH_SIZE objects (default 1,000) plus their
// Namespace and waits until every one is ready, three ways, each on its own
// fresh local control plane (full mode: controllers and kwok Nodes):
//
//   - ours: internal/apply, what `phase run` runs, at concurrency 16, in a
//     child process (this test binary re-executed) so its time includes
//     process start and its peak RSS is its own; it waits on every object
//     (kstatus: Deployments available, the rest existing).
//   - peer, one process: `kubectl apply --server-side -f` the same file,
//     then `kubectl wait --for=create` on the ConfigMaps, Services and
//     Namespace and `kubectl wait --for=condition=Available` on the
//     Deployments: the same objects.
//   - peer, 16 processes: the Namespace first, then the objects split
//     round-robin into 16 files, each applied and waited on as above by its
//     own chain of kubectl processes, all 16 at once.
func BenchmarkApply(b *testing.B) {
	n := harness.Size(b, 1000)
	kubectl := harness.Kubectl(b)
	dir := b.TempDir()
	set := newApplySet("bench", n)
	nodes := harness.Nodes(len(set.deployments))
	cluster := fmt.Sprintf("fresh, %d kwok Nodes, one per side", nodes)
	allFile := writeDocs(b, filepath.Join(dir, "all.yaml"), set.all())

	var ours, seq, par, oursAgain, seqAgain harness.Tally
	var applied, seqApply, notice time.Duration
	var peerRSS float64
	for b.Loop() {
		// Ours, then ours again with nothing changed.
		withCluster(b, nodes, func(env *testenv.Env) {
			child := func() (harness.Proc, childReport) {
				cmd := exec.CommandContext(b.Context(), os.Args[0])
				cmd.Env = append(os.Environ(), harness.ChildEnv+"="+applyChildName,
					"BENCH_APPLY_KUBECONFIG="+env.Kubeconfig, "BENCH_APPLY_FILE="+allFile,
					"BENCH_APPLY_INVENTORY=bench", fmt.Sprintf("BENCH_APPLY_CONCURRENCY=%d", applyConcurrency))
				var out strings.Builder
				cmd.Stdout = &out
				p, err := harness.Run(cmd)
				if err != nil {
					b.Fatal(err)
				}
				var rep childReport
				if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
					b.Fatalf("apply child printed %q: %v", out.String(), err)
				}
				return p, rep
			}
			p, rep := child()
			end := time.Now()
			ours.AddProc(p)
			applied += time.Duration(rep.AppliedSeconds * float64(time.Second))
			notice += end.Sub(lastAvailable(b, env, set.ns, end.Add(-p.Wall)))
			p, rep = child()
			if rep.Sent != 0 {
				b.Fatalf("the unchanged run sent %d objects", rep.Sent)
			}
			oursAgain.AddProc(p)
		})
		// kubectl, one process at a time.
		withCluster(b, nodes, func(env *testenv.Env) {
			start := time.Now()
			p, err := harness.Run(exec.CommandContext(b.Context(), kubectl, "--kubeconfig", env.Kubeconfig, "apply", "--server-side", "-f", allFile))
			if err != nil {
				b.Fatal(err)
			}
			seqApply += p.Wall
			rss := kubectlWait(b, kubectl, env.Kubeconfig, dir, "seq", applySet{ns: set.ns, others: append([]string{set.namespace}, set.others...), deployments: set.deployments})
			seq.Add(time.Since(start), 0)
			peerRSS = max(peerRSS, p.PeakRSSMiB, rss)
			// Again, nothing changed.
			start = time.Now()
			if _, err := harness.Run(exec.CommandContext(b.Context(), kubectl, "--kubeconfig", env.Kubeconfig, "apply", "--server-side", "-f", allFile)); err != nil {
				b.Fatal(err)
			}
			kubectlWait(b, kubectl, env.Kubeconfig, dir, "seq-again", applySet{ns: set.ns, others: append([]string{set.namespace}, set.others...), deployments: set.deployments})
			seqAgain.Add(time.Since(start), 0)
		})
		// kubectl, 16 processes at once.
		withCluster(b, nodes, func(env *testenv.Env) {
			start := time.Now()
			nsFile := writeDocs(b, filepath.Join(dir, "namespace.yaml"), []string{set.namespace})
			if _, err := harness.Run(exec.CommandContext(b.Context(), kubectl, "--kubeconfig", env.Kubeconfig, "apply", "--server-side", "-f", nsFile)); err != nil {
				b.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, applyConcurrency)
			rss := make([]float64, applyConcurrency)
			for k := range applyConcurrency {
				c := set.chunk(k, applyConcurrency)
				if len(c.others)+len(c.deployments) == 0 {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					f := writeDocs(b, filepath.Join(dir, fmt.Sprintf("chunk-%d.yaml", k)), append(append([]string(nil), c.others...), c.deployments...))
					p, err := harness.Run(exec.CommandContext(b.Context(), kubectl, "--kubeconfig", env.Kubeconfig, "apply", "--server-side", "-f", f))
					if err != nil {
						errs[k] = err
						return
					}
					w, err := kubectlWaitErr(b.Context(), kubectl, env.Kubeconfig, dir, fmt.Sprintf("chunk-%d", k), c)
					errs[k] = err
					rss[k] = max(p.PeakRSSMiB, w)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			par.Add(time.Since(start), 0)
			for _, r := range rss {
				peerRSS = max(peerRSS, r)
			}
		})
	}
	runs := float64(ours.Runs)
	size := harness.Count(n) + " objects"
	notes := []string{
		fmt.Sprintf("%d ConfigMaps, %d Deployments of one pod, %d Services, and their Namespace; each side on its own fresh local control plane (full mode: controllers and kwok) with no other workload",
			n/2, len(set.deployments), n-n/2-len(set.deployments)),
		"ours waits on every object with kstatus (Deployments: available and up to date; ConfigMaps, Services, Namespace: exist); kubectl waits on the same objects: --for=create for ConfigMaps, Services and the Namespace, --for=condition=Available for the Deployments",
		fmt.Sprintf("ours had applied every object and written its inventory after %s; the one kubectl apply process took %s", harness.Seconds(applied.Seconds()/runs), harness.Seconds(seqApply.Seconds()/runs)),
		fmt.Sprintf("ours noticed the last Deployment available %s after its condition's time stamp (1 s resolution)", harness.Seconds(notice.Seconds()/runs)),
		fmt.Sprintf("largest kubectl process peak RSS %.0f MiB", peerRSS),
	}
	harness.Record(b, harness.Row{
		Workload: "apply + wait", Size: size,
		Ours:        fmt.Sprintf("internal/apply (what phase run runs) in its own process, concurrency %d", applyConcurrency),
		Peer:        "kubectl apply --server-side -f (one process), then kubectl wait on the same objects",
		OursSeconds: ours.Seconds(), PeerSeconds: seq.Seconds(), OursPeakRSSMiB: ours.PeakRSSMiB,
		Parallelism: fmt.Sprintf("ours %d requests, 1 process; peer 1 process", applyConcurrency),
		Cluster:     cluster, Runs: ours.Runs, Notes: notes,
	})
	harness.Record(b, harness.Row{
		Workload: "apply + wait", Size: size,
		Ours:        fmt.Sprintf("internal/apply (what phase run runs) in its own process, concurrency %d", applyConcurrency),
		Peer:        fmt.Sprintf("the Namespace, then %d chains of kubectl apply --server-side + kubectl wait at once, on %d round-robin slices of the objects", applyConcurrency, applyConcurrency),
		OursSeconds: ours.Seconds(), PeerSeconds: par.Seconds(), OursPeakRSSMiB: ours.PeakRSSMiB,
		Parallelism: fmt.Sprintf("ours %d requests, 1 process; peer %d processes", applyConcurrency, applyConcurrency),
		Cluster:     cluster, Runs: ours.Runs,
	})
	harness.Record(b, harness.Row{
		Workload: "apply + wait, nothing changed since", Size: size,
		Ours:        fmt.Sprintf("internal/apply again with the same inventory, in its own process, concurrency %d: objects the inventory's records show unchanged are not sent", applyConcurrency),
		Peer:        "kubectl apply --server-side -f (one process) again, then kubectl wait on the same objects",
		OursSeconds: oursAgain.Seconds(), PeerSeconds: seqAgain.Seconds(), OursPeakRSSMiB: oursAgain.PeakRSSMiB,
		Parallelism: fmt.Sprintf("ours %d requests, 1 process; peer 1 process", applyConcurrency),
		Cluster:     cluster + ", right after each side's first apply and wait", Runs: oursAgain.Runs,
		Notes: []string{"ours sends no object (the run fails otherwise): one metadata LIST per kind, the inventory written twice, the wait"},
	})
}

// withCluster runs f against a fresh full-mode local control plane and
// stops it afterwards.
func withCluster(b *testing.B, nodes int, f func(env *testenv.Env)) {
	b.Helper()
	env, err := testenv.NewFull(context.Background(), testenv.Options{Nodes: nodes})
	if err != nil {
		if testenv.MainSkip(err) {
			b.Skip(err)
		}
		b.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			b.Error(err)
		}
	}()
	f(env)
}

// kubectlWait waits, with kubectl, for s's objects: created for the
// ConfigMaps, Services and Namespace, Available for the Deployments. It
// returns the largest peak RSS of its processes.
func kubectlWait(b *testing.B, kubectl, kubeconfig, dir, name string, s applySet) float64 {
	b.Helper()
	rss, err := kubectlWaitErr(b.Context(), kubectl, kubeconfig, dir, name, s)
	if err != nil {
		b.Fatal(err)
	}
	return rss
}

func kubectlWaitErr(ctx context.Context, kubectl, kubeconfig, dir, name string, s applySet) (float64, error) {
	var rss float64
	waits := []struct {
		docs []string
		cond string
	}{{s.others, "create"}, {s.deployments, "condition=Available"}}
	for i, w := range waits {
		if len(w.docs) == 0 {
			continue
		}
		f := filepath.Join(dir, fmt.Sprintf("%s-wait-%d.yaml", name, i))
		if err := os.WriteFile(f, []byte(strings.Join(w.docs, "---\n")), 0o644); err != nil {
			return 0, err
		}
		p, err := harness.Run(exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "wait", "--for="+w.cond, "--timeout="+applyWaitTimeout.String(), "-f", f))
		if err != nil {
			return 0, err
		}
		rss = max(rss, p.PeakRSSMiB)
	}
	return rss, nil
}

// lastAvailable is when the last Deployment of ns became Available, by its
// condition's time stamp (one-second resolution); start if none did.
func lastAvailable(b *testing.B, env *testenv.Env, ns string, start time.Time) time.Time {
	b.Helper()
	var deps appsv1.DeploymentList
	if err := env.Client.List(context.Background(), &deps, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	last := start
	for _, d := range deps.Items {
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == "True" && c.LastTransitionTime.After(last) {
				last = c.LastTransitionTime.Time
			}
		}
	}
	return last
}
