package capm3

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Workloads gives clients of workload clusters, built from the Secret
// <cluster>-kubeconfig (key value) that Cluster API writes, and cached
// until that Secret changes.
type Workloads struct {
	// Reader reads the kubeconfig Secrets.
	Reader client.Reader

	mu      sync.Mutex
	clients map[types.NamespacedName]workload
}

type workload struct {
	resourceVersion string
	client          client.Client
}

var workloadScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// errNoKubeconfig: Cluster API has not written the cluster's kubeconfig yet.
var errNoKubeconfig = fmt.Errorf("the workload cluster's kubeconfig Secret does not exist yet")

// Client returns a client of the workload cluster namespace/name.
func (w *Workloads) Client(ctx context.Context, cluster types.NamespacedName) (client.Client, error) {
	name := cluster.Name + "-kubeconfig"
	sec := &corev1.Secret{}
	if err := w.Reader.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: name}, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Secret %s/%s: %w", cluster.Namespace, name, errNoKubeconfig)
		}
		return nil, fmt.Errorf("reading Secret %s/%s: %w", cluster.Namespace, name, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.clients[cluster]; ok && c.resourceVersion == sec.ResourceVersion {
		return c.client, nil
	}
	data, ok := sec.Data["value"]
	if !ok {
		return nil, fmt.Errorf("kubeconfig Secret %s/%s has no key value", cluster.Namespace, name)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		// The parse error may quote the kubeconfig: do not pass it on.
		return nil, fmt.Errorf("key value of Secret %s/%s is not a kubeconfig", cluster.Namespace, name)
	}
	cfg.QPS, cfg.Burst = 50, 100
	c, err := client.New(cfg, client.Options{Scheme: workloadScheme})
	if err != nil {
		return nil, fmt.Errorf("a client of workload cluster %s: %w", cluster, err)
	}
	if w.clients == nil {
		w.clients = map[types.NamespacedName]workload{}
	}
	w.clients[cluster] = workload{resourceVersion: sec.ResourceVersion, client: c}
	return c, nil
}
