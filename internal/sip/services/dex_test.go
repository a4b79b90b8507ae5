package services

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

// TestDexConfig decodes the rendered config.yaml as Dex would and checks
// the fields Dex requires, that every client's secret comes from a
// variable the Deployment fills from the client's secretRef, and that no
// secret is in the file.
func TestDexConfig(t *testing.T) {
	in := loadInputs(t, "full")
	b := build(t, in)
	a := in.Cluster.Spec.Services.Auth[0]
	name := serviceName(TypeAuth, in.Cluster.Name, 0)
	text := find[*corev1.ConfigMap](t, b.Objects, name).Data[dexConfigKey]
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatalf("config.yaml does not decode: %v\n%s", err, text)
	}
	get := func(path ...string) any {
		var v any = cfg
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[p]
		}
		return v
	}
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"issuer"}, a.Issuer},
		{[]string{"storage", "type"}, "memory"},
		{[]string{"web", "http"}, "0.0.0.0:5556"},
		{[]string{"oauth2", "skipApprovalScreen"}, true},
	} {
		if got := get(c.path...); got != c.want {
			t.Errorf("%s = %v, want %v", strings.Join(c.path, "."), got, c.want)
		}
	}

	dep := find[*appsv1.Deployment](t, b.Objects, name)
	env := map[string]corev1.EnvVar{}
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e
	}
	clients, _ := get("staticClients").([]any)
	if len(clients) != len(a.StaticClients) {
		t.Fatalf("%d static clients, want %d", len(clients), len(a.StaticClients))
	}
	for i, c := range clients {
		m := c.(map[string]any)
		want := a.StaticClients[i]
		if m["id"] != want.ID {
			t.Errorf("staticClients[%d].id = %v, want %s", i, m["id"], want.ID)
		}
		if _, ok := m["secret"]; ok {
			t.Errorf("staticClients[%d] holds a secret", i)
		}
		envName, _ := m["secretEnv"].(string)
		e, ok := env[envName]
		if !ok || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Fatalf("staticClients[%d].secretEnv %q is no variable the Deployment fills from a Secret: %+v", i, envName, e)
		}
		if ref := e.ValueFrom.SecretKeyRef; ref.Name != want.SecretRef.Name || ref.Key != want.SecretRef.Key {
			t.Errorf("%s comes from %s/%s, want %s/%s", envName, ref.Name, ref.Key, want.SecretRef.Name, want.SecretRef.Key)
		}
	}
	connectors, _ := get("connectors").([]any)
	if len(connectors) != len(a.Connectors) {
		t.Fatalf("%d connectors, want %d", len(connectors), len(a.Connectors))
	}
	for i, c := range connectors {
		m := c.(map[string]any)
		want := a.Connectors[i]
		if m["type"] != want.Type || m["id"] != want.ID || m["name"] != want.Name {
			t.Errorf("connectors[%d] = %v/%v/%v, want %s/%s/%s", i, m["type"], m["id"], m["name"], want.Type, want.ID, want.Name)
		}
		var wantConfig map[string]any
		if err := json.Unmarshal(want.Config.Raw, &wantConfig); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantConfig, m["config"]); diff != "" {
			t.Errorf("connectors[%d].config (-want +got):\n%s", i, diff)
		}
	}
	if e := env["DEX_EXPAND_ENV"]; e.Value != "false" {
		t.Errorf("DEX_EXPAND_ENV = %q: connector configs would be expanded", e.Value)
	}
	if got := dep.Spec.Template.Spec.Containers[0].Command; len(got) != 3 || got[2] != dexConfigDir+"/"+dexConfigKey {
		t.Errorf("command %v does not serve the mounted config", got)
	}
}

func TestOIDCStatus(t *testing.T) {
	full := loadInputs(t, "full").Cluster.Spec.Services.Auth[0]
	second := full
	second.Issuer = "https://other.example/dex"
	second.StaticClients = []sipv1.OIDCClient{{ID: "other", SecretRef: sipv1.SecretKeyRef{Name: "s", Key: "k"}}}
	defaults := full
	defaults.UsernameClaim, defaults.GroupsClaim = "", ""
	tests := []struct {
		name string
		auth []sipv1.AuthService
		want *sipv1.OIDCStatus
	}{
		{"no auth", nil, nil},
		{"claims given", []sipv1.AuthService{full}, &sipv1.OIDCStatus{
			IssuerURL: full.Issuer, ClientID: "kubernetes",
			APIServerArgs: []string{
				"--oidc-client-id=kubernetes",
				"--oidc-groups-claim=groups",
				"--oidc-issuer-url=" + full.Issuer,
				"--oidc-username-claim=preferred_username",
			},
		}},
		{"default claims", []sipv1.AuthService{defaults}, &sipv1.OIDCStatus{
			IssuerURL: full.Issuer, ClientID: "kubernetes",
			APIServerArgs: []string{
				"--oidc-client-id=kubernetes",
				"--oidc-groups-claim=groups",
				"--oidc-issuer-url=" + full.Issuer,
				"--oidc-username-claim=email",
			},
		}},
		{"the first auth service's", []sipv1.AuthService{second, full}, &sipv1.OIDCStatus{
			IssuerURL: second.Issuer, ClientID: "other",
			APIServerArgs: []string{
				"--oidc-client-id=other",
				"--oidc-groups-claim=groups",
				"--oidc-issuer-url=" + second.Issuer,
				"--oidc-username-claim=preferred_username",
			},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := loadInputs(t, "full")
			in.Cluster.Spec.Services.Auth = tt.auth
			for i := range tt.auth {
				in.Cluster.Spec.Services.Auth[i].NodePort = 30005 + 10*i
			}
			if diff := cmp.Diff(tt.want, build(t, in).OIDC); diff != "" {
				t.Errorf("OIDC status (-want +got):\n%s", diff)
			}
		})
	}
}
