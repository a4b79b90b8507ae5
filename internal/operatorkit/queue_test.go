package operatorkit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// starveReconciler blocks its first call until release is closed, keeps
// the "hot-" objects always due again (as polled hosts are) and records
// the "cold-" objects it reconciles.
type starveReconciler struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once

	mu   sync.Mutex
	seen map[string]bool
}

func (r *starveReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	r.once.Do(func() {
		close(r.entered)
		<-r.release
	})
	if strings.HasPrefix(req.Name, "hot-") {
		time.Sleep(2 * time.Millisecond)
		return reconcile.Result{RequeueAfter: time.Millisecond}, nil
	}
	if strings.HasPrefix(req.Name, "cold-") {
		r.mu.Lock()
		r.seen[req.Name] = true
		r.mu.Unlock()
	}
	return reconcile.Result{}, nil
}

func (r *starveReconciler) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// Objects that existed when the manager started are reconciled even while
// other objects keep being requeued: controller-runtime's priority queue
// gives the first ones a low priority their requeues keep, and one worker
// busy with the others never reached them (at 1,000 BareMetalHosts, the
// 182 created while metal3-operator started were never reconciled).
func TestManagerReconcilesObjectsOfTheInitialList(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const cold = 10
	for i := range cold {
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cold-%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	o := Defaults()
	o.LeaderElection = false
	o.SkipControllerNameValidation = true
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	mgr, err := NewManager(env.Config, scheme, o, "operatorkit-queue-test", logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	r := &starveReconciler{entered: make(chan struct{}), release: make(chan struct{}), seen: map[string]bool{}}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).Complete(r); err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, ctx, "Start", mgr.Start)
	select {
	case <-r.entered:
	case <-time.After(30 * time.Second):
		close(r.release)
		t.Fatal("no reconcile started")
	}
	// While the one worker is held, hot objects arrive as watch events.
	for i := range 4 {
		if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("hot-%d", i)}}); err != nil {
			close(r.release)
			t.Fatal(err)
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var list corev1.ConfigMapList
		if err := mgr.GetCache().List(ctx, &list, client.InNamespace("default")); err != nil {
			return false, err
		}
		hot := 0
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, "hot-") {
				hot++
			}
		}
		return hot == 4, nil
	}); err != nil {
		close(r.release)
		t.Fatalf("the cache never held the hot objects: %v", err)
	}
	// The cache holds them: their events are being queued; let the queue
	// take them before the worker goes on.
	time.Sleep(200 * time.Millisecond)
	close(r.release)
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return r.count() == cold, nil
	}); err != nil {
		t.Fatalf("%d of the %d objects there at the start were reconciled while others kept being requeued", r.count(), cold)
	}
}
