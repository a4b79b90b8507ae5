package helm

import (
	"fmt"
	"sync"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// shared holds the discovery cache and REST mapper every action reuses, so a
// reconcile does not rediscover the API server's resources.
type shared struct {
	cfg *rest.Config

	once      sync.Once
	err       error
	discovery discovery.CachedDiscoveryInterface
	mapper    meta.RESTMapper
	clients   kubernetes.Interface

	// Helm fetches the server's version and every API group/version (and
	// first drops the discovery cache) for each install and upgrade it
	// renders. Charts render against this copy instead, refreshed after
	// capsTTL or when an action may have added APIs (CRDs).
	capsMu sync.Mutex
	caps   *common.Capabilities
	capsAt time.Time
}

// capsTTL bounds how long APIs added outside this operator's own actions
// (another tool installing CRDs) stay invisible to .Capabilities.
const capsTTL = 30 * time.Second

// capabilities returns a copy of the cached capabilities, refreshing them
// when stale.
func (s *shared) capabilities(now time.Time) (*common.Capabilities, error) {
	if err := s.init(); err != nil {
		return nil, err
	}
	s.capsMu.Lock()
	defer s.capsMu.Unlock()
	if s.caps == nil || now.Sub(s.capsAt) > capsTTL {
		s.discovery.Invalidate()
		v, err := s.discovery.ServerVersion()
		if err != nil {
			return nil, fmt.Errorf("reading the Kubernetes server version: %w", err)
		}
		apis, err := action.GetVersionSet(s.discovery)
		if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
			return nil, fmt.Errorf("reading the API versions of the Kubernetes server: %w", err)
		}
		s.caps = &common.Capabilities{
			APIVersions: apis,
			KubeVersion: common.KubeVersion{Version: v.GitVersion, Major: v.Major, Minor: v.Minor},
			HelmVersion: common.DefaultCapabilities.HelmVersion,
		}
		s.capsAt = now
	}
	return s.caps.Copy(), nil
}

// dropCapabilities makes the next render read the server's APIs afresh.
func (s *shared) dropCapabilities() {
	s.capsMu.Lock()
	defer s.capsMu.Unlock()
	s.caps = nil
}

func (s *shared) init() error {
	s.once.Do(func() {
		dc, err := discovery.NewDiscoveryClientForConfig(rest.CopyConfig(s.cfg))
		if err != nil {
			s.err = err
			return
		}
		s.clients, err = kubernetes.NewForConfig(rest.CopyConfig(s.cfg))
		if err != nil {
			s.err = err
			return
		}
		s.discovery = memory.NewMemCacheClient(dc)
		s.mapper = restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(s.discovery), s.discovery, nil)
	})
	return s.err
}

// restClientGetter is the genericclioptions.RESTClientGetter Helm's kube
// client needs, built from a rest.Config instead of a kubeconfig file. Its
// default namespace is the release namespace.
type restClientGetter struct {
	*shared
	namespace string
}

func (g restClientGetter) ToRESTConfig() (*rest.Config, error) { return rest.CopyConfig(g.cfg), nil }

func (g restClientGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	if err := g.init(); err != nil {
		return nil, err
	}
	return g.discovery, nil
}

func (g restClientGetter) ToRESTMapper() (meta.RESTMapper, error) {
	if err := g.init(); err != nil {
		return nil, err
	}
	return g.mapper, nil
}

// ToRawKubeConfigLoader only answers Namespace(); the connection comes from
// ToRESTConfig.
func (g restClientGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	cfg := clientcmdapi.NewConfig()
	cfg.Contexts["operator"] = &clientcmdapi.Context{Namespace: g.namespace}
	cfg.CurrentContext = "operator"
	return clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: g.namespace}})
}
