package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Inventory placement and ownership labels.
const (
	InventoryNamespace = "airship-inventory"
	inventoryPrefix    = "inventory-"
	inventoryLabel     = "airshipit.org/inventory"
	// OwnerGroup prefixes the owner labels put on every applied object:
	// <OwnerGroup>/name and <OwnerGroup>/namespace name its inventory.
	OwnerGroup   = "inventory.airshipit.org"
	FieldManager = "airshipctl"
)

// ObjRef identifies an object across versions.
type ObjRef struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Key ignores the version: an object moved to a new API version is the same object.
func (r ObjRef) Key() string { return r.Group + "/" + r.Kind + "/" + r.Namespace + "/" + r.Name }

func (r ObjRef) String() string {
	s := r.Kind
	if r.Group != "" {
		s += "." + r.Group
	}
	s += "/"
	if r.Namespace != "" {
		s += r.Namespace + "/"
	}
	return s + r.Name
}

// GVK of the reference.
func (r ObjRef) GVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// RefOf returns the reference of an object.
func RefOf(u *unstructured.Unstructured) ObjRef {
	gvk := u.GroupVersionKind()
	return ObjRef{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Inventory is the set of objects a phase applied, stored as a ConfigMap.
type Inventory struct {
	Name    string
	Objects []ObjRef
	// Applied is, per object (ObjRef.Key), what the last apply of it
	// sent and left: a run skips an object whose record shows it
	// unchanged.
	Applied map[string]AppliedState
}

// AppliedState is what the inventory keeps of one applied object.
type AppliedState struct {
	// Hash is of the applied object (normalized, owner labels set).
	Hash string `json:"h"`
	// UID, ResourceVersion and Generation are the object's as the apply
	// returned it.
	UID             string `json:"u"`
	ResourceVersion string `json:"rv"`
	Generation      int64  `json:"g,omitempty"`
}

// maxAppliedBytes bounds the records kept beside the object list: a
// ConfigMap holds at most 1 MiB. An inventory whose records would not fit
// keeps none, and its next run applies every object.
const maxAppliedBytes = 512 << 10

func inventoryKey(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: InventoryNamespace, Name: inventoryPrefix + name}
}

// ReadInventory returns the inventory of a phase, or an empty one.
func ReadInventory(ctx context.Context, c client.Client, name string) (*Inventory, bool, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, inventoryKey(name), cm); err != nil {
		if apierrors.IsNotFound(err) {
			return &Inventory{Name: name}, false, nil
		}
		return nil, false, fmt.Errorf("reading inventory %s: %w", inventoryKey(name), err)
	}
	inv := &Inventory{Name: name}
	if data := cm.Data["objects"]; data != "" {
		if err := json.Unmarshal([]byte(data), &inv.Objects); err != nil {
			return nil, false, fmt.Errorf("inventory %s is corrupt: %w", inventoryKey(name), err)
		}
	}
	if data := cm.Data["applied"]; data != "" {
		// Records that do not decode only cost speed: every object is
		// applied again, and the records are written anew.
		if err := json.Unmarshal([]byte(data), &inv.Applied); err != nil {
			inv.Applied = nil
		}
	}
	return inv, true, nil
}

// WriteInventory stores the inventory, creating its namespace when needed.
func WriteInventory(ctx context.Context, c client.Client, inv *Inventory) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: InventoryNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", InventoryNamespace, err)
	}
	objs := append([]ObjRef(nil), inv.Objects...)
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key() < objs[j].Key() })
	data, err := json.Marshal(objs)
	if err != nil {
		return err
	}
	cmData := map[string]string{"objects": string(data)}
	if len(inv.Applied) > 0 {
		applied, err := json.Marshal(inv.Applied) // keys sorted
		if err != nil {
			return err
		}
		if len(applied) <= maxAppliedBytes {
			cmData["applied"] = string(applied)
		}
	}
	key := inventoryKey(inv.Name)
	cm := corev1ac.ConfigMap(key.Name, key.Namespace).
		WithLabels(map[string]string{inventoryLabel: inv.Name, "app.kubernetes.io/managed-by": FieldManager}).
		WithData(cmData)
	if err := c.Apply(ctx, cm, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing inventory %s: %w", key, err)
	}
	return nil
}

func union(a, b []ObjRef) []ObjRef {
	seen := map[string]bool{}
	var out []ObjRef
	for _, list := range [][]ObjRef{b, a} {
		for _, r := range list {
			if !seen[r.Key()] {
				seen[r.Key()] = true
				out = append(out, r)
			}
		}
	}
	return out
}
