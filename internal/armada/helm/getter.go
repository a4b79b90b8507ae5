package helm

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
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
}

func (s *shared) init() error {
	s.once.Do(func() {
		dc, err := discovery.NewDiscoveryClientForConfig(rest.CopyConfig(s.cfg))
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
