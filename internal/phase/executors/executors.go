package executors

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/phase/executors/baremetalmanager"
	"github.com/airshipit/airship-go/internal/phase/executors/clusterctl"
	"github.com/airshipit/airship-go/internal/phase/executors/genericcontainer"
	"github.com/airshipit/airship-go/internal/phase/executors/kubernetesapply"
)

// All returns every executor by the group/version/kind of its document.
func All() map[schema.GroupVersionKind]executor.Factory {
	return map[schema.GroupVersionKind]executor.Factory{
		baremetalmanager.GVK: baremetalmanager.New,
		clusterctl.GVK:       clusterctl.New,
		genericcontainer.GVK: genericcontainer.New,
		kubernetesapply.GVK:  kubernetesapply.New,
	}
}

var registerOnce sync.Once

// Register adds All to the executor registry. It may be called any number
// of times (each caller that loads a site calls it); the registry, which
// refuses a kind registered twice, sees each once.
func Register() {
	registerOnce.Do(func() {
		for gvk, f := range All() {
			executor.Register(gvk, f)
		}
	})
}
