package marker

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

func obj(apiVersion, kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID("uid-" + kind + "-" + name))
	return u
}

var (
	gvrs = map[schema.GroupVersionResource]string{
		{Version: "v1", Resource: "events"}:                                   "EventList",
		{Group: "events.k8s.io", Version: "v1", Resource: "events"}:           "EventList",
		{Version: "v1", Resource: "configmaps"}:                               "ConfigMapList",
		{Version: "v1", Resource: "secrets"}:                                  "SecretList",
		{Version: "v1", Resource: "services"}:                                 "ServiceList",
		{Group: "metal3.io", Version: "v1alpha1", Resource: "baremetalhosts"}: "BareMetalHostList",
		{Group: "metal3.io", Version: "v1beta1", Resource: "baremetalhosts"}:  "BareMetalHostList",
	}
	resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "events", Namespaced: true, Kind: "Event", Verbs: []string{"list", "get"}},
			{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: []string{"list"}},
			{Name: "secrets", Namespaced: true, Kind: "Secret", Verbs: []string{"list"}},
			{Name: "services", Namespaced: true, Kind: "Service", Verbs: []string{"list"}},
			{Name: "services/proxy", Namespaced: true, Kind: "Service", Verbs: []string{"get"}},
			{Name: "bindings", Namespaced: true, Kind: "Binding", Verbs: []string{"create"}},
		}},
		{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "events", Namespaced: true, Kind: "Event", Verbs: []string{"list"}},
		}},
		// The first version of a group is its preferred one in the fake.
		{GroupVersion: "metal3.io/v1alpha1", APIResources: []metav1.APIResource{
			{Name: "baremetalhosts", Namespaced: true, Kind: "BareMetalHost", Verbs: []string{"list"}},
		}},
		{GroupVersion: "metal3.io/v1beta1", APIResources: []metav1.APIResource{
			{Name: "baremetalhosts", Namespaced: true, Kind: "BareMetalHost", Verbs: []string{"list"}},
		}},
	}
)

// fakeCluster serves objects; listing anything but the preferred versions,
// bindings or subresources fails, so a scan that lists them fails.
func fakeCluster(t *testing.T, objects ...runtime.Object) (Cluster, *fakedynamic.FakeDynamicClient) {
	t.Helper()
	dyn := fakedynamic.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), gvrs, objects...)
	dyn.PrependReactor("list", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetResource().Version == "v1beta1" || a.GetSubresource() != "" || a.GetResource().Resource == "bindings" {
			return true, nil, errors.New("listed what the scan must skip: " + a.GetResource().String())
		}
		return false, nil, nil
	})
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: resources}}
	return Cluster{Name: "ephemeral", Discovery: disc, Dynamic: dyn}, dyn
}

func TestScanCluster(t *testing.T) {
	m := New("bmc")
	b64 := base64.StdEncoding.EncodeToString([]byte(m.Value))
	for _, tc := range []struct {
		name  string
		obj   *unstructured.Unstructured
		where string // "" when nothing may be found
	}{
		{"Event message", obj("v1", "Event", "metal3", "node01.17a", map[string]any{"reason": "BMCError", "message": "login with " + m.Value + " failed"}),
			`cluster "ephemeral": Event metal3/node01.17a .message`},
		{"events.k8s.io Event note", obj("events.k8s.io/v1", "Event", "metal3", "node02.17b", map[string]any{"note": "auth " + b64}),
			`cluster "ephemeral": Event metal3/node02.17b .note`},
		{"status condition", obj("metal3.io/v1alpha1", "BareMetalHost", "metal3", "node01", map[string]any{
			"spec":   map[string]any{"bmc": map[string]any{"credentialsName": "node01-bmc-secret"}},
			"status": map[string]any{"errorMessage": "", "conditions": []any{map[string]any{"type": "Ready", "message": "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+m.Value))}}},
		}), `cluster "ephemeral": BareMetalHost metal3/node01 .status.conditions[0].message`},
		{"ConfigMap data", obj("v1", "ConfigMap", "kube-system", "values", map[string]any{"data": map[string]any{"values.yaml": "password: " + m.Value + "\n"}}),
			`cluster "ephemeral": ConfigMap kube-system/values .data["values.yaml"]`},
		{"ConfigMap binaryData", obj("v1", "ConfigMap", "kube-system", "bin", map[string]any{"binaryData": map[string]any{"blob": base64.StdEncoding.EncodeToString([]byte("\x00\x01" + m.Value))}}),
			`cluster "ephemeral": ConfigMap kube-system/bin .binaryData.blob`},
		{"last-applied-configuration of a Service", func() *unstructured.Unstructured {
			u := obj("v1", "Service", "default", "web", map[string]any{"spec": map[string]any{"type": "ClusterIP"}})
			u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"metadata":{"annotations":{"pw":"` + m.Value + `"}}}`})
			return u
		}(), `cluster "ephemeral": Service default/web .metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`},
		{"last-applied-configuration of a Secret", func() *unstructured.Unstructured {
			u := obj("v1", "Secret", "metal3", "node01-bmc-secret", map[string]any{"data": map[string]any{"password": b64}})
			u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"` + b64 + `"}}`})
			return u
		}(), `cluster "ephemeral": Secret metal3/node01-bmc-secret .metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]`},
		{"a map key", obj("v1", "ConfigMap", "default", "keys", map[string]any{"data": map[string]any{m.Value: "x"}}),
			`cluster "ephemeral": ConfigMap default/keys .data.` + m.Value},
		{"Secret data and stringData are where it belongs", obj("v1", "Secret", "metal3", "node01-bmc-secret", map[string]any{
			"data": map[string]any{"password": b64}, "stringData": map[string]any{"password": m.Value}}), ""},
		{"managedFields hold no values", func() *unstructured.Unstructured {
			u := obj("v1", "ConfigMap", "default", "managed", map[string]any{"data": map[string]any{"k": "v"}})
			u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "x", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:` + m.Value + `":{}}}`)}})
			return u
		}(), ""},
		{"clean object", obj("v1", "Event", "default", "clean", map[string]any{"message": "AIRSHIP-MARKER-BMC-0123 is not it"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := fakeCluster(t, tc.obj)
			got, err := Set{m}.ScanCluster(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if tc.where == "" {
				if len(got) != 0 {
					t.Fatalf("findings %v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Where != tc.where || got[0].Marker != "bmc" {
				t.Fatalf("findings %v, want one at %s", got, tc.where)
			}
		})
	}
}

// An Event served by both core and events.k8s.io is one finding, and every
// planted object is found in one scan.
func TestScanClusterAllAtOnce(t *testing.T) {
	m, other := New("secret"), New("sops")
	ev := obj("v1", "Event", "default", "e1", map[string]any{"message": m.Value})
	same := obj("events.k8s.io/v1", "Event", "default", "e1", map[string]any{"note": m.Value})
	same.SetUID(ev.GetUID())
	cm := obj("v1", "ConfigMap", "default", "c", map[string]any{"data": map[string]any{"k": other.Value}})
	c, _ := fakeCluster(t, ev, same, cm)
	got, err := Set{m, other}.ScanCluster(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	var where []string
	for _, f := range got {
		where = append(where, f.Marker+" at "+f.Where)
	}
	if len(got) != 2 || !strings.Contains(strings.Join(where, "\n"), "sops at "+`cluster "ephemeral": ConfigMap default/c .data.k`) {
		t.Fatalf("findings:\n%s\nwant the Event once and the ConfigMap", strings.Join(where, "\n"))
	}
}

func TestScanClusterListError(t *testing.T) {
	m := New("secret")
	c, dyn := fakeCluster(t, obj("v1", "ConfigMap", "default", "c", map[string]any{"data": map[string]any{"k": m.Value}}))
	dyn.PrependReactor("list", "services", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	got, err := Set{m}.ScanCluster(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), `cluster "ephemeral": listing /v1, Resource=services: forbidden`) {
		t.Fatalf("error %v, want the services listing named", err)
	}
	if len(got) != 1 {
		t.Errorf("findings of the other types are lost: %v", got)
	}
}
