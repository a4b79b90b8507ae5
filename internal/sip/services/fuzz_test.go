package services

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

// FuzzConnectorConfig feeds a connector's config (an object a tenant
// writes) and a configSecrets field path: nothing panics; when Validate
// accepts them, the configuration is built, holds the Secret's value at
// the path, and keeps every other key of config.
func FuzzConnectorConfig(f *testing.F) {
	f.Add([]byte(`{"host":"ldap:636","bindDN":"cn=dex"}`), "bindPW")
	f.Add([]byte(`{"a":{"x":1}}`), "a.b")
	f.Add([]byte(`{"a":"s"}`), "a.b")
	f.Add([]byte(`{"bindPW":"x"}`), "bindPW")
	f.Add([]byte(`[1,2]`), "x")
	f.Add([]byte(`null`), "..")
	f.Fuzz(func(t *testing.T, config []byte, path string) {
		const value = "v4lue"
		conn := sipv1.OIDCConnector{Type: "ldap", ID: "l", Name: "L",
			ConfigSecrets: []sipv1.ConnectorConfigSecret{{Field: path, SecretRef: sipv1.SecretKeyRef{Name: "s", Key: "k"}}}}
		if len(config) > 0 {
			conn.Config = &runtime.RawExtension{Raw: config}
		}
		v := &validator{ports: map[int]*field.Path{}}
		v.auth(field.NewPath("a"), sipv1.AuthService{Issuer: "https://x", Connectors: []sipv1.OIDCConnector{conn},
			StaticClients: []sipv1.OIDCClient{{ID: "c", SecretRef: sipv1.SecretKeyRef{Name: "s", Key: "k"}}}})
		secrets := map[string]*corev1.Secret{"s": {Data: map[string][]byte{"k": []byte(value)}}}
		raw, err := connectorConfig(field.NewPath("c"), "ns", conn, secrets, true)
		if len(v.errs) > 0 {
			return
		}
		if err != nil {
			t.Fatalf("valid config %q, field %q: %v", config, path, err)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("built config is no object: %v", err)
		}
		var cur any = got
		for _, k := range strings.Split(path, ".") {
			m, ok := cur.(map[string]any)
			if !ok {
				t.Fatalf("field %q: no object on the way in %s", path, raw)
			}
			cur = m[k]
		}
		if cur != value {
			t.Fatalf("field %q = %v in %s", path, cur, raw)
		}
		var orig map[string]any
		if len(config) > 0 {
			_ = json.Unmarshal(config, &orig)
		}
		for k := range orig {
			if _, ok := got[k]; !ok {
				t.Fatalf("key %q of config lost in %s", k, raw)
			}
		}
	})
}
