package reconcilers

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	releasecommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

var deploymentKind = appsv1.SchemeGroupVersion.WithKind("Deployment")

func TestManifestObjects(t *testing.T) {
	const manifest = `---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: r-config
---
# Source: app/templates/web.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: r-web
---
apiVersion: batch/v1
kind: Job
metadata:
  name: r-migrate
  namespace: other
---
`
	jobKind := schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
	for _, tc := range []struct {
		name string
		wait *armadav1.ArmadaChartWait
		want []appliedObject
	}{
		{"default wait: every workload kind", nil, []appliedObject{
			{gvk: deploymentKind, key: client.ObjectKey{Namespace: "ns", Name: "r-web"}},
			{gvk: jobKind, key: client.ObjectKey{Namespace: "other", Name: "r-migrate"}},
		}},
		{"jobs only", &armadav1.ArmadaChartWait{Resources: []armadav1.ArmadaChartWaitResource{{Type: armadav1.WaitResourceJob}}}, []appliedObject{
			{gvk: jobKind, key: client.ObjectKey{Namespace: "other", Name: "r-migrate"}},
		}},
		{"nothing waited for", &armadav1.ArmadaChartWait{Resources: []armadav1.ArmadaChartWaitResource{}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := manifestObjects(manifest, "ns", waitedKinds(tc.wait))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestLagOf(t *testing.T) {
	applied := appliedObject{gvk: deploymentKind, key: client.ObjectKey{Namespace: "ns", Name: "web"}, uid: "u1", generation: 3}
	cached := func(uid string, gen int64) metav1.Object {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Generation: gen}}
	}
	for _, tc := range []struct {
		name    string
		applied appliedObject
		cached  metav1.Object
		want    string // a part of the message; "" when the cache is up to date
	}{
		{"cache holds the applied generation", applied, cached("u1", 3), ""},
		{"cache is ahead", applied, cached("u1", 4), ""},
		{"cache holds the previous generation", applied, cached("u1", 2), "generation 2, 3 was applied"},
		{"cache has not seen the create", applied, nil, "not in the cache yet"},
		{"cache holds a deleted object of that name", applied, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{UID: "u0", Generation: 5}}, "older object"},
		{"not read back", appliedObject{gvk: deploymentKind, key: applied.key}, cached("u1", 3), "not read back"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lagOf(tc.applied, tc.cached)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("lagOf = %q, want %q", got, tc.want)
			}
		})
	}
}

// staleDeployments is the manager's cache as it is while the Deployment
// informer lags: while frozen, the Deployments of one namespace read as
// they were when it froze.
type staleDeployments struct {
	client.Client
	ns string

	mu     sync.Mutex
	frozen map[string]appsv1.Deployment // nil: not frozen
}

// freeze takes the namespace's Deployments as the API server has them now.
func (s *staleDeployments) freeze(t *testing.T) {
	t.Helper()
	var l appsv1.DeploymentList
	if err := env.Client.List(context.Background(), &l, client.InNamespace(s.ns)); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frozen = map[string]appsv1.Deployment{}
	for _, d := range l.Items {
		s.frozen[d.Name] = d
	}
}

func (s *staleDeployments) thaw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frozen = nil
}

func (s *staleDeployments) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if d, ok := obj.(*appsv1.Deployment); ok && key.Namespace == s.ns {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.frozen != nil {
			f, ok := s.frozen[key.Name]
			if !ok {
				return apierrors.NewNotFound(appsv1.Resource("deployments"), key.Name)
			}
			f.DeepCopyInto(d)
			return nil
		}
	}
	return s.Client.Get(ctx, key, obj, opts...)
}

func (s *staleDeployments) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	if l, ok := list.(*appsv1.DeploymentList); ok && lo.Namespace == s.ns {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.frozen != nil {
			sel := lo.LabelSelector
			if sel == nil {
				sel = labels.Everything()
			}
			l.Items = nil
			for _, d := range s.frozen {
				if sel.Matches(labels.Set(d.Labels)) {
					l.Items = append(l.Items, *d.DeepCopy())
				}
			}
			return nil
		}
	}
	return s.Client.List(ctx, list, opts...)
}

// TestWaitAfterActionIgnoresStaleCache checks the first wait after a Helm
// action while the cache still shows the release's Deployments as they
// were before it: a fresh install whose Deployment the cache has not seen,
// and an upgrade whose Deployment the cache holds in its previous, ready
// state. Neither counts as ready: the chart waits, and is satisfied only
// once the new pods run (their node selector matches no node until the
// test labels one).
func TestWaitAfterActionIgnoresStaleCache(t *testing.T) {
	for _, tc := range []struct {
		name    string
		upgrade bool
	}{
		{"fresh install, cache without the Deployment", false},
		{"upgrade, cache with the previous ready Deployment", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ns := newNamespace(t, "stale")
			cache := &staleDeployments{ns: ns}
			startManager(t, func(r *ArmadaChartReconciler) {
				cache.Client = r.Client
				r.Client = cache
			})
			unschedulable := `{"replicas": 1, "nodeSelector": {"armada-stale-test": "on"}}`
			act := newChart(ns, "web", "stale", chartDir(t, "small"))
			act.Spec.Wait.Timeout = 300
			key := client.ObjectKeyFromObject(act)
			if tc.upgrade {
				act.Spec.Values = values(t, `{"replicas": 1}`)
				if err := env.Client.Create(ctx, act); err != nil {
					t.Fatal(err)
				}
				waitFor(t, key, 90*time.Second, "install", satisfiedAt(1))
				cache.freeze(t)
				act = update(t, key, func(c *armadav1.ArmadaChart) { c.Spec.Values = values(t, unschedulable) })
			} else {
				cache.freeze(t)
				act.Spec.Values = values(t, unschedulable)
				if err := env.Client.Create(ctx, act); err != nil {
					t.Fatal(err)
				}
			}
			gen, revision := act.Generation, int32(1)
			if tc.upgrade {
				revision = 2
			}

			// While the cache lags, the chart waits for it.
			got := waitFor(t, key, 60*time.Second, "a wait for the cache, or satisfied", func(c *armadav1.ArmadaChart) bool {
				return satisfiedAt(gen)(c) || waitingAt(c, gen, "cache")
			})
			if got.Status.Satisfied || got.Status.HelmRevision != revision {
				t.Fatalf("revision %d satisfied from a cache that does not hold it: %+v", revision, got.Status)
			}

			// With the cache up to date, the chart waits for the new pod.
			cache.thaw()
			waitFor(t, key, 60*time.Second, "a wait for the Deployment, or satisfied", func(c *armadav1.ArmadaChart) bool {
				return satisfiedAt(gen)(c) || waitingAt(c, gen, "/stale-web: ")
			})

			labelNode(t, "armada-stale-test", "on")
			got = waitFor(t, key, 90*time.Second, "satisfied once the new pod runs", satisfiedAt(gen))
			var d appsv1.Deployment
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stale-web"}, &d); err != nil {
				t.Fatal(err)
			}
			if d.Spec.Template.Spec.NodeSelector["armada-stale-test"] != "on" || d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != 1 || d.Status.AvailableReplicas != 1 {
				t.Fatalf("satisfied before the Deployment rolled out: status %+v", d.Status)
			}
			if got.Status.HelmRevision != revision {
				t.Fatalf("revision %d, want %d", got.Status.HelmRevision, revision)
			}
		})
	}
}

// TestActionAnswerNotReadBack checks that the workloads an install applied
// are taken as the API server answered the install: the pass reads none of
// them back.
func TestActionAnswerNotReadBack(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "answer")
	reads := &countingReader{ns: ns}
	startManager(t, func(r *ArmadaChartReconciler) {
		reads.Reader = r.APIReader
		r.APIReader = reads
	})
	act := newChart(ns, "web", "web", chartDir(t, "small"))
	if err := env.Client.Create(ctx, act); err != nil {
		t.Fatal(err)
	}
	got := waitFor(t, client.ObjectKeyFromObject(act), 90*time.Second, "install", satisfiedAt(1))
	if got.Status.HelmRevision != 1 {
		t.Fatalf("revision %d, want 1", got.Status.HelmRevision)
	}
	if n := reads.deployments(); n != 0 {
		t.Fatalf("the release's Deployment was read back %d times after the install answered with it", n)
	}
}

// countingReader counts the uncached reads of Deployments in ns.
type countingReader struct {
	client.Reader
	ns string

	mu sync.Mutex
	n  int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if key.Namespace == c.ns {
		_, typed := obj.(*appsv1.Deployment)
		m, partial := obj.(*metav1.PartialObjectMetadata)
		if typed || (partial && m.GroupVersionKind() == deploymentKind) {
			c.mu.Lock()
			c.n++
			c.mu.Unlock()
		}
	}
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c *countingReader) deployments() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// waitingAt reports whether c's last pass, for generation gen, ended
// waiting with a message containing what.
func waitingAt(c *armadav1.ArmadaChart, gen int64, what string) bool {
	r := apimeta.FindStatusCondition(c.Status.Conditions, armadav1.ReadyCondition)
	return c.Status.ObservedGeneration == gen && r != nil && r.Reason == ReasonWaiting && r.ObservedGeneration == gen && strings.Contains(r.Message, what)
}

// labelNode sets a label on one node for the rest of the test.
func labelNode(t *testing.T, k, v string) {
	t.Helper()
	ctx := context.Background()
	var nodes corev1.NodeList
	if err := env.Client.List(ctx, &nodes); err != nil || len(nodes.Items) == 0 {
		t.Fatalf("listing nodes: %v (%d)", err, len(nodes.Items))
	}
	name := nodes.Items[0].Name
	set := func(mutate func(*corev1.Node)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var n corev1.Node
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
				return err
			}
			mutate(&n)
			return env.Client.Update(ctx, &n)
		})
	}
	if err := set(func(n *corev1.Node) {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[k] = v
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := set(func(n *corev1.Node) { delete(n.Labels, k) }); err != nil {
			t.Errorf("unlabelling node %s: %v", name, err)
		}
	})
}

func TestActedIsLast(t *testing.T) {
	deployed := &release.Release{Version: 2, Info: &release.Info{Status: releasecommon.StatusDeployed}}
	failed := &release.Release{Version: 2, Info: &release.Info{Status: releasecommon.StatusFailed}}
	waiting := func(mutate func(*armadav1.ArmadaChart)) *armadav1.ArmadaChart {
		c := &armadav1.ArmadaChart{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
		c.Status = armadav1.ArmadaChartStatus{ObservedGeneration: 3, HelmRevision: 2, HelmStatus: "deployed"}
		if mutate != nil {
			mutate(c)
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		chart *armadav1.ArmadaChart
		rel   *release.Release
		want  bool
	}{
		{"status waits for the revision the action made", waiting(nil), deployed, true},
		{"no action remembered", waiting(nil), nil, false},
		{"revision seen ready: passes look for drift", waiting(func(c *armadav1.ArmadaChart) { c.Status.WaitCompleted = true }), deployed, false},
		{"new spec", waiting(func(c *armadav1.ArmadaChart) { c.Generation = 4 }), deployed, false},
		{"status names another revision", waiting(func(c *armadav1.ArmadaChart) { c.Status.HelmRevision = 3 }), deployed, false},
		{"status says failed", waiting(func(c *armadav1.ArmadaChart) { c.Status.HelmStatus = "failed" }), deployed, false},
		{"revision marked failed", waiting(nil), failed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := actedIsLast(tc.chart, tc.rel); got != tc.want {
				t.Fatalf("actedIsLast = %t, want %t", got, tc.want)
			}
		})
	}
}
