package v1_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// baseSpec is a valid spec using every field; each case of
// TestCRDRefusesHostileSpecs breaks one part of it.
const baseSpec = `{
  "nodes": {
    "ControlPlane": {"labelSelector": {"matchLabels": {"role": "cp"}}, "topologyKey": "topology.kubernetes.io/rack", "count": {"active": 3, "standby": 1}},
    "Worker": {"labelSelector": {"matchExpressions": [{"key": "role", "operator": "In", "values": ["w"]}]}, "count": {"active": 2}}
  },
  "services": {
    "loadBalancerControlPlane": [{"image": "haproxy:2.8", "nodeInterfaceId": "oam", "nodePort": 30443, "clusterIP": "10.96.0.50"}],
    "loadBalancerWorker": [{"image": "haproxy:2.8", "nodeInterfaceId": "oam", "nodePortRange": {"start": 30080, "end": 30081}}],
    "jumpHost": [{"image": "jump:1", "nodeInterfaceId": "oam", "nodePort": 30022, "nodeSSHPrivateKeys": "node-keys"}],
    "auth": [{"image": "dex:2", "nodePort": 30556, "issuer": "https://10.0.0.1:30556/dex",
      "staticClients": [{"id": "kubernetes", "secretRef": {"name": "oidc", "key": "kubernetes"}}],
      "connectors": [{"type": "ldap", "id": "ldap", "name": "LDAP", "config": {"host": "ldap:636"},
        "configSecrets": [{"field": "bindPW", "secretRef": {"name": "ldap", "key": "password"}}]}]}]
  }
}`

// set puts v at the dotted path of m ("a.b[0].c"), creating maps as needed.
func set(t *testing.T, m map[string]any, path string, v any) {
	t.Helper()
	var cur any = m
	parts := strings.Split(path, ".")
	for i, p := range parts {
		idx := -1
		if j := strings.IndexByte(p, '['); j >= 0 {
			idx = int(p[j+1] - '0')
			p = p[:j]
		}
		obj := cur.(map[string]any)
		last := i == len(parts)-1
		if idx < 0 {
			if last {
				if v == nil {
					delete(obj, p)
				} else {
					obj[p] = v
				}
				return
			}
			if _, ok := obj[p]; !ok {
				obj[p] = map[string]any{}
			}
			cur = obj[p]
			continue
		}
		list := obj[p].([]any)
		if last {
			list[idx] = v
			return
		}
		cur = list[idx]
	}
}

// TestCRDRefusesHostileSpecs applies each hostile SIPCluster to a real API
// server with the generated CRD: the server refuses it, naming the field.
func TestCRDRefusesHostileSpecs(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{
		CRDDirs:     []string{"config/sip/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{sipv1.AddToScheme},
	})
	ctx := context.Background()
	type change struct {
		path string
		v    any
	}
	tests := []struct {
		name    string
		objName string
		changes []change
		want    []string // in the error; none: accepted
	}{
		{name: "valid", changes: nil},
		{name: "name of 63", objName: strings.Repeat("n", 63)},
		{name: "name of 70", objName: strings.Repeat("n", 70), want: []string{"metadata.name: at most 63 characters"}},
		{name: "no spec", changes: []change{{"spec", nil}}, want: []string{"spec: Required value"}},
		{name: "empty spec", changes: []change{{"spec", map[string]any{}}}, want: []string{"spec.nodes: Required value"}},
		{name: "no roles", changes: []change{{"spec.nodes", map[string]any{}}}, want: []string{"spec.nodes: Invalid value", "at least 1"}},
		{name: "unknown role", changes: []change{{"spec.nodes.Worker", nil}, {"spec.nodes.Master", map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}}},
			want: []string{"spec.nodes", "the roles are ControlPlane and Worker"}},
		{name: "three roles", changes: []change{{"spec.nodes.Master", map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}}},
			want: []string{"spec.nodes", "must have at most 2 items"}},
		{name: "count 2^63-1", changes: []change{{"spec.nodes.ControlPlane.count.active", int64(math.MaxInt64)}},
			want: []string{"spec.nodes.ControlPlane.count.active", "less than or equal to 1000"}},
		{name: "standby 2^63-1", changes: []change{{"spec.nodes.Worker.count.standby", int64(math.MaxInt64)}},
			want: []string{"spec.nodes.Worker.count.standby", "less than or equal to 1000"}},
		{name: "negative count", changes: []change{{"spec.nodes.Worker.count.active", -1}},
			want: []string{"spec.nodes.Worker.count.active", "greater than or equal to 0"}},
		{name: "no selector", changes: []change{{"spec.nodes.Worker.labelSelector", nil}}, want: []string{"spec.nodes.Worker.labelSelector: Required value"}},
		{name: "empty selector", changes: []change{{"spec.nodes.Worker.labelSelector", map[string]any{}}},
			want: []string{"spec.nodes[Worker].labelSelector", "must not be empty"}},
		{name: "bad topology key", changes: []change{{"spec.nodes.ControlPlane.topologyKey", "no spaces/allowed here"}}, want: []string{"spec.nodes.ControlPlane.topologyKey"}},
		{name: "node port low", changes: []change{{"spec.services.loadBalancerControlPlane[0].nodePort", 6443}},
			want: []string{"spec.services.loadBalancerControlPlane[0].nodePort", "greater than or equal to 30000"}},
		{name: "node port high", changes: []change{{"spec.services.jumpHost[0].nodePort", 70000}},
			want: []string{"spec.services.jumpHost[0].nodePort", "less than or equal to 32767"}},
		{name: "auth node port", changes: []change{{"spec.services.auth[0].nodePort", 0}}, want: []string{"spec.services.auth[0].nodePort"}},
		{name: "range reversed", changes: []change{{"spec.services.loadBalancerWorker[0].nodePortRange", map[string]any{"start": 30090, "end": 30080}}},
			want: []string{"spec.services.loadBalancerWorker[0].nodePortRange", "start must not be after end"}},
		{name: "range out", changes: []change{{"spec.services.loadBalancerWorker[0].nodePortRange.end", 40000}},
			want: []string{"spec.services.loadBalancerWorker[0].nodePortRange.end"}},
		{name: "no image", changes: []change{{"spec.services.loadBalancerControlPlane[0].image", nil}},
			want: []string{"spec.services.loadBalancerControlPlane[0].image: Required value"}},
		{name: "empty image", changes: []change{{"spec.services.jumpHost[0].image", ""}}, want: []string{"spec.services.jumpHost[0].image"}},
		{name: "cluster IP", changes: []change{{"spec.services.loadBalancerControlPlane[0].clusterIP", "None"}},
			want: []string{"spec.services.loadBalancerControlPlane[0].clusterIP", "must be an IP address"}},
		{name: "key Secret of another namespace", changes: []change{{"spec.services.jumpHost[0].nodeSSHPrivateKeys", "kube-system/keys"}},
			want: []string{"spec.services.jumpHost[0].nodeSSHPrivateKeys"}},
		{name: "no key Secret", changes: []change{{"spec.services.jumpHost[0].nodeSSHPrivateKeys", nil}},
			want: []string{"spec.services.jumpHost[0].nodeSSHPrivateKeys: Required value"}},
		{name: "client Secret namespace", changes: []change{{"spec.services.auth[0].staticClients[0].secretRef.namespace", "kube-system"}},
			want: []string{"spec.services.auth[0].staticClients[0].secretRef.namespace", "unknown field"}},
		{name: "client Secret name", changes: []change{{"spec.services.auth[0].staticClients[0].secretRef.name", "../x"}},
			want: []string{"spec.services.auth[0].staticClients[0].secretRef.name"}},
		{name: "no clients", changes: []change{{"spec.services.auth[0].staticClients", []any{}}},
			want: []string{"spec.services.auth[0].staticClients", "at least 1"}},
		{name: "no connectors", changes: []change{{"spec.services.auth[0].connectors", nil}},
			want: []string{"spec.services.auth[0].connectors: Required value"}},
		{name: "connector type", changes: []change{{"spec.services.auth[0].connectors[0].type", "exec"}},
			want: []string{"spec.services.auth[0].connectors[0].type", "Unsupported value"}},
		{name: "connector config list", changes: []change{{"spec.services.auth[0].connectors[0].config", []any{"x"}}},
			want: []string{"spec.services.auth[0].connectors[0].config"}},
		{name: "connector Secret namespace", changes: []change{{"spec.services.auth[0].connectors[0].configSecrets[0].secretRef.namespace", "kube-system"}},
			want: []string{"spec.services.auth[0].connectors[0].configSecrets[0].secretRef.namespace", "unknown field"}},
		{name: "connector secret field", changes: []change{{"spec.services.auth[0].connectors[0].configSecrets[0].field", "a..b"}},
			want: []string{"spec.services.auth[0].connectors[0].configSecrets[0].field"}},
		{name: "issuer empty", changes: []change{{"spec.services.auth[0].issuer", ""}}, want: []string{"spec.services.auth[0].issuer"}},
		{name: "too many load balancers", changes: []change{{"spec.services.loadBalancerControlPlane", manyLBs(17)}},
			want: []string{"spec.services.loadBalancerControlPlane", "must have at most 16 items"}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var spec map[string]any
			if err := json.Unmarshal([]byte(baseSpec), &spec); err != nil {
				t.Fatal(err)
			}
			obj := map[string]any{"spec": spec}
			for _, c := range tc.changes {
				set(t, obj, c.path, c.v)
			}
			u := &unstructured.Unstructured{Object: obj}
			u.SetAPIVersion(sipv1.GroupVersion.String())
			u.SetKind("SIPCluster")
			u.SetNamespace("default")
			u.SetName(tc.objName)
			if tc.objName == "" {
				u.SetName("case-" + string(rune('a'+i/26)) + string(rune('a'+i%26)))
			}
			// Strict field validation: an unknown field (a namespace
			// beside a Secret's name) is an error, as kubectl apply makes it.
			err := env.Client.Create(ctx, u, client.FieldValidation("Strict"))
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want an error with %q", tc.want)
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Errorf("error is not Invalid: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func manyLBs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"image": "haproxy", "nodeInterfaceId": "oam", "nodePort": 30200 + i}
	}
	return out
}
