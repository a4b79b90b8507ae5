package phase

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// barrier is a document.FunctionRunner whose executor-bundle builds wait
// until n parties are in at once (builds, plus whatever the test adds
// with arrive): builds that run one after another never finish, so a
// passing test proves they overlapped, without measuring time. maxWait
// only keeps a serialized build from hanging the test.
type barrier struct {
	n       int
	maxWait time.Duration

	mu      sync.Mutex
	in      int
	release chan struct{}
	// building receives one value per build that reached the barrier.
	building chan string
}

func newBarrier(n int) *barrier {
	return &barrier{n: n, maxWait: 20 * time.Second, release: make(chan struct{}), building: make(chan string, 16)}
}

func (b *barrier) arrive() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.in++
	if b.in == b.n {
		close(b.release)
	}
}

func (b *barrier) Build(fs filesys.FileSystem, path string, opts *krusty.Options) (resmap.ResMap, error) {
	if strings.Contains(path, "/entries/") {
		b.arrive()
		b.building <- path
		select {
		case <-b.release:
		case <-time.After(b.maxWait):
			return nil, fmt.Errorf("build of %s: %d parties never were in at once (builds serialized?)", path, b.n)
		}
	}
	return krusty.MakeKustomizer(opts).Run(fs, path)
}

// parallelSite has three independent phases a, b and c (and d after a),
// each with its own executor bundle, and a KubeConfig document for c1.
func parallelSite(t *testing.T, runner document.FunctionRunner) *Site {
	t.Helper()
	files := map[string]string{
		"repo/metadata.yaml":             "phase:\n  path: phases\n  docEntryPointPrefix: entries\n",
		"repo/phases/kustomization.yaml": "resources: [phases.yaml, map.yaml, plan.yaml]\n",
		"repo/phases/map.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: ClusterMap\nmetadata: {name: m}\nmap:\n  c1: {}\n---\n" +
			"apiVersion: airshipit.org/v1alpha1\nkind: KubeConfig\nmetadata: {name: kc}\nconfig:\n" +
			"  clusters: [{name: c1, cluster: {server: \"https://c1.invalid\"}}]\n" +
			"  users: [{name: c1, user: {token: t}}]\n" +
			"  contexts: [{name: c1, context: {cluster: c1, user: c1}}]\n",
		"repo/phases/plan.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: PhasePlan\nmetadata: {name: p}\n" +
			"phases: [{name: a}, {name: b}, {name: c}, {name: d, dependsOn: [a]}]\n",
		"repo/phases/phases.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: KubernetesApply\nmetadata: {name: apply}\n",
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		files["repo/phases/phases.yaml"] += "---\napiVersion: airshipit.org/v1alpha1\nkind: Phase\nmetadata: {name: " + name + ", clusterName: c1}\n" +
			"config:\n  executorRef: {apiVersion: airshipit.org/v1alpha1, kind: KubernetesApply, name: apply}\n  documentEntryPoint: " + name + "\n"
		files["repo/entries/"+name+"/kustomization.yaml"] = "resources: [cm.yaml]\n"
		files["repo/entries/"+name+"/cm.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"
	}
	s, err := loadFiles(t, files, document.BuildOptions{Functions: runner})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPlanChecksBuildInParallel: the phase checks plan run does first
// build the bundles of every phase at once (a barrier of four).
func TestPlanChecksBuildInParallel(t *testing.T) {
	s := parallelSite(t, newBarrier(4))
	plan, err := s.Plan("p")
	if err != nil {
		t.Fatal(err)
	}
	waves, err := Order(plan.API.AllPhases())
	if err != nil || fmt.Sprint(waves) != "[[a b c] [d]]" {
		t.Fatalf("waves %v, %v", waves, err)
	}
	if err := s.CheckPlan(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
}

// TestWavePhasesBuildInParallel runs what `plan run` does for each phase of
// a wave (check, executor, its bundle) in three goroutines: the three
// builds and a kubeconfig look-up made while they are in flight must all
// be in at once, so no lock of the Site is held across a build or taken
// for the look-up.
func TestWavePhasesBuildInParallel(t *testing.T) {
	b := newBarrier(4)
	s := parallelSite(t, b)
	ctx := context.Background()
	errs := make(chan error, 3)
	for _, name := range []string{"a", "b", "c"} {
		go func() {
			p, err := s.Phase(name)
			if err == nil {
				err = s.CheckPhase(ctx, p)
			}
			var ex executor.Executor
			if err == nil {
				ex, err = s.Executor(p)
			}
			if err == nil {
				err = ex.Render(ctx, io.Discard, executor.RenderOptions{})
			}
			errs <- err
		}()
	}
	// Once a build is in flight (and held at the barrier), the cluster's
	// kubeconfig is looked up; the builds go on only after it returned.
	<-b.building
	r, err := s.Kubeconfigs()
	if err != nil {
		t.Fatal(err)
	}
	kc, err := r.Config(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if kc.Clusters["c1"].Server != "https://c1.invalid" {
		t.Errorf("kubeconfig %+v", kc.Clusters)
	}
	b.arrive()
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
