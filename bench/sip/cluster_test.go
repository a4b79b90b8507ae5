package sip

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// createWorkers is how many requests at once set the site up and reset
// it; none of it is timed.
const createWorkers = 16

// startAPI starts an API server (etcd and kube-apiserver, nothing else)
// with the SIPCluster and BareMetalHost CRDs.
func startAPI(b testing.TB) *testenv.Env {
	b.Helper()
	env, err := testenv.NewAPI(testenv.Options{
		CRDDirs:     []string{"config/sip/crd/bases", "config/metal3/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{sipv1.AddToScheme, metal3v1alpha1.AddToScheme},
	})
	if err != nil {
		if testenv.MainSkip(err) {
			b.Skip(err)
		}
		b.Fatal(err)
	}
	return env
}

// fastClient is the bench's own client, so that setting the site up and
// resetting it are not held back by client-go's 5 requests/s.
func fastClient(b testing.TB, env *testenv.Env) client.WithWatch {
	b.Helper()
	fast := rest.CopyConfig(env.Config)
	fast.QPS, fast.Burst = 1000, 2000
	c, err := client.NewWithWatch(fast, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// parallel runs f(0..n-1), workers at once, and joins the errors.
func parallel(n, workers int, f func(i int) error) error {
	next := make(chan int)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// createSite creates the namespace and its n hosts, createWorkers at once.
func createSite(ctx context.Context, c client.Client, n int) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
		return err
	}
	return parallel(n, createWorkers, func(i int) error {
		if err := c.Create(ctx, bareMetalHost(i)); err != nil {
			return fmt.Errorf("creating BareMetalHost %s/%s: %w", namespace, hostName(i), err)
		}
		return nil
	})
}

// sipLabels are the labels either side writes on a picked host.
var sipLabels = []string{sipv1.ClusterNamespaceLabel, sipv1.ClusterNameLabel, sipv1.NodeTypeLabel, sipv1.StandbyLabel}

// labelled returns the hosts labelled for the cluster: name → its SIP
// labels, read from the API server.
func labelled(ctx context.Context, c client.Client) (map[string]map[string]string, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(metal3v1alpha1.GroupVersion.WithKind("BareMetalHostList"))
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.HasLabels{sipv1.ClusterNameLabel}); err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, h := range list.Items {
		l := map[string]string{}
		for _, k := range sipLabels {
			if v, ok := h.Labels[k]; ok {
				l[k] = v
			}
		}
		out[h.Name] = l
	}
	return out, nil
}

// checkLabelled checks the cluster's hosts are exactly 3 control-plane
// hosts and 100 workers, each with the cluster's namespace, name and role.
func checkLabelled(got map[string]map[string]string) error {
	roles := map[string]int{}
	for name, l := range got {
		if l[sipv1.ClusterNamespaceLabel] != namespace || l[sipv1.ClusterNameLabel] != clusterName {
			return fmt.Errorf("host %s labelled %v", name, l)
		}
		roles[l[sipv1.NodeTypeLabel]]++
	}
	if len(got) != picked || roles[string(sipv1.RoleControlPlane)] != controlPlanes || roles[string(sipv1.RoleWorker)] != workers {
		return fmt.Errorf("%d hosts labelled, by role %v; want %d control-plane and %d workers", len(got), roles, controlPlanes, workers)
	}
	return nil
}

// resetSite puts the site back as it was created: the SIPCluster gone (its
// finalizer taken off: the operator is stopped by now) and no host
// carrying a SIP label.
func resetSite(ctx context.Context, c client.Client) error {
	sc := &sipv1.SIPCluster{}
	key := client.ObjectKey{Namespace: namespace, Name: clusterName}
	switch err := c.Get(ctx, key, sc); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		if err := c.Patch(ctx, sc, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); client.IgnoreNotFound(err) != nil {
			return err
		}
		if err := c.Delete(ctx, sc); client.IgnoreNotFound(err) != nil {
			return err
		}
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(c.Get(ctx, key, &sipv1.SIPCluster{})), nil
		}); err != nil {
			return fmt.Errorf("SIPCluster %s not deleted: %w", key, err)
		}
	}
	hosts, err := labelled(ctx, c)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(hosts))
	for name := range hosts {
		names = append(names, name)
	}
	off := map[string]any{}
	for _, k := range sipLabels {
		off[k] = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": off}})
	if err != nil {
		return err
	}
	return parallel(len(names), createWorkers, func(i int) error {
		h := &metal3v1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: names[i]}}
		return c.Patch(ctx, h, client.RawPatch(types.MergePatchType, patch))
	})
}
