package helm

import (
	"sync"

	"helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// ObjectRef names an object an action applied.
type ObjectRef struct {
	GroupKind schema.GroupKind
	Namespace string
	Name      string
}

// AppliedMeta is what the API server answered for an object an action
// created or updated.
type AppliedMeta struct {
	UID        types.UID
	Generation int64
}

// Applied records the objects an install or upgrade created or updated,
// with the UID and generation the API server's answer gave each, so a
// caller that needs them does not read each object back. Safe for
// concurrent use; the zero value is ready.
type Applied struct {
	mu   sync.Mutex
	objs map[ObjectRef]AppliedMeta
}

// Lookup returns what the API server answered for ref, if the action
// applied it.
func (a *Applied) Lookup(ref ObjectRef) (AppliedMeta, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.objs[ref]
	return m, ok
}

// record takes each object of resources whose answer the kube client put
// back into it (Helm refreshes an object from the API server's answer to
// each create, apply and update).
func (a *Applied) record(resources kube.ResourceList) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, info := range resources {
		if info == nil || info.Object == nil || info.Mapping == nil {
			continue
		}
		m, err := meta.Accessor(info.Object)
		if err != nil || m.GetUID() == "" {
			continue
		}
		if a.objs == nil {
			a.objs = map[ObjectRef]AppliedMeta{}
		}
		ref := ObjectRef{GroupKind: info.Mapping.GroupVersionKind.GroupKind(), Namespace: m.GetNamespace(), Name: m.GetName()}
		a.objs[ref] = AppliedMeta{UID: m.GetUID(), Generation: m.GetGeneration()}
	}
}

// recordingKube is Helm's kube client, recording into an Applied what its
// creates and updates made. It embeds the concrete client, so every
// optional interface Helm looks for (kube.InterfaceWaitOptions, ...) is
// still there.
type recordingKube struct {
	*kube.Client
	into *Applied
}

func (k *recordingKube) Create(resources kube.ResourceList, options ...kube.ClientCreateOption) (*kube.Result, error) {
	res, err := k.Client.Create(resources, options...)
	k.into.record(resources)
	return res, err
}

func (k *recordingKube) Update(original, target kube.ResourceList, options ...kube.ClientUpdateOption) (*kube.Result, error) {
	res, err := k.Client.Update(original, target, options...)
	k.into.record(target)
	return res, err
}

var _ kube.InterfaceWaitOptions = (*recordingKube)(nil)
