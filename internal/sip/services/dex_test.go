package services

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
	text := string(find[*corev1.Secret](t, b.Objects, name).Data[dexConfigKey])
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
		// configSecrets set their fields from the Secrets.
		for _, cs := range want.ConfigSecrets {
			wantConfig[cs.Field] = string(in.ConnectorSecrets[cs.SecretRef.Name].Data[cs.SecretRef.Key])
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

// dexInputs is the full case with one LDAP connector whose bindPW, and
// optionally more fields, come from the Secret "ldap".
func dexInputs(t *testing.T, config string, secrets []sipv1.ConnectorConfigSecret, data map[string]string, rv string) Inputs {
	t.Helper()
	in := loadInputs(t, "full")
	a := &in.Cluster.Spec.Services.Auth[0]
	a.Connectors = []sipv1.OIDCConnector{{Type: "ldap", ID: "ldap", Name: "LDAP", ConfigSecrets: secrets}}
	if config != "" {
		a.Connectors[0].Config = &runtime.RawExtension{Raw: []byte(config)}
	}
	in.ConnectorSecrets = nil
	if data != nil {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: in.Cluster.Namespace, Name: "ldap", ResourceVersion: rv}, Data: map[string][]byte{}}
		for k, v := range data {
			sec.Data[k] = []byte(v)
		}
		in.ConnectorSecrets = map[string]*corev1.Secret{"ldap": sec}
	}
	return in
}

// TestDexConnectorSecrets: a connector's configSecrets are written into
// the Dex configuration, which is a Secret, at their field; into no other
// object, and into no error. Each fault names its field.
func TestDexConnectorSecrets(t *testing.T) {
	const pw = "bind-pw-marker-4f1c"
	ref := func(f, key string) sipv1.ConnectorConfigSecret {
		return sipv1.ConnectorConfigSecret{Field: f, SecretRef: sipv1.SecretKeyRef{Name: "ldap", Key: key}}
	}
	tests := []struct {
		name    string
		config  string
		secrets []sipv1.ConnectorConfigSecret
		data    map[string]string
		want    map[string]any // the connector's config in config.yaml
		wantErr string
	}{
		{name: "bindPW", config: `{"host":"ldap:636","bindDN":"cn=dex"}`, secrets: []sipv1.ConnectorConfigSecret{ref("bindPW", "password")},
			data: map[string]string{"password": pw}, want: map[string]any{"host": "ldap:636", "bindDN": "cn=dex", "bindPW": pw}},
		{name: "no config", secrets: []sipv1.ConnectorConfigSecret{ref("bindPW", "password")},
			data: map[string]string{"password": pw}, want: map[string]any{"bindPW": pw}},
		{name: "null config", config: `null`, secrets: []sipv1.ConnectorConfigSecret{ref("bindPW", "password")},
			data: map[string]string{"password": pw}, want: map[string]any{"bindPW": pw}},
		{name: "nested and kept literally", config: `{"a":{"x":1}}`, secrets: []sipv1.ConnectorConfigSecret{ref("a.b", "password"), ref("c.d", "dollar")},
			data: map[string]string{"password": pw, "dollar": "$HOME ${PATH}"}, want: map[string]any{"a": map[string]any{"x": float64(1), "b": pw}, "c": map[string]any{"d": "$HOME ${PATH}"}}},
		{name: "no Secret", secrets: []sipv1.ConnectorConfigSecret{ref("bindPW", "password")},
			wantErr: "spec.services.auth[0].connectors[0].configSecrets[0].secretRef: Secret sip-tenants/ldap not found"},
		{name: "no key", secrets: []sipv1.ConnectorConfigSecret{ref("bindPW", "pw")}, data: map[string]string{"password": pw},
			wantErr: `spec.services.auth[0].connectors[0].configSecrets[0].secretRef: Secret sip-tenants/ldap has no key "pw"`},
		{name: "also in config", config: `{"bindPW":"inline"}`, secrets: []sipv1.ConnectorConfigSecret{ref("bindPW", "password")}, data: map[string]string{"password": pw},
			wantErr: `spec.services.auth[0].connectors[0].configSecrets[0].field: Invalid value: "bindPW": "bindPW" is also set in config`},
		{name: "through a string", config: `{"host":"ldap"}`, secrets: []sipv1.ConnectorConfigSecret{ref("host.pw", "password")}, data: map[string]string{"password": pw},
			wantErr: "config.host is not an object"},
		{name: "twice", secrets: []sipv1.ConnectorConfigSecret{ref("bindPW", "password"), ref("bindPW", "password")}, data: map[string]string{"password": pw},
			wantErr: `spec.services.auth[0].connectors[0].configSecrets[1].field: Duplicate value: "bindPW"`},
		{name: "bad field", secrets: []sipv1.ConnectorConfigSecret{ref("bind\xf3PW", "password")}, data: map[string]string{"password": pw},
			wantErr: "spec.services.auth[0].connectors[0].configSecrets[0].field: Invalid value"},
		{name: "empty key in the path", secrets: []sipv1.ConnectorConfigSecret{ref("a..b", "password")}, data: map[string]string{"password": pw},
			wantErr: "spec.services.auth[0].connectors[0].configSecrets[0].field: Invalid value"},
		{name: "bad key", secrets: []sipv1.ConnectorConfigSecret{ref("bindPW", "a/b")}, data: map[string]string{"password": pw},
			wantErr: "spec.services.auth[0].connectors[0].configSecrets[0].secretRef.key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := dexInputs(t, tc.config, tc.secrets, tc.data, "7")
			objs, statuses, oidc, err := Build(in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Build error %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), pw) {
					t.Errorf("the error quotes the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			name := serviceName(TypeAuth, in.Cluster.Name, 0)
			var cfg struct {
				Connectors []struct {
					Config map[string]any `json:"config"`
				} `json:"connectors"`
			}
			text := find[*corev1.Secret](t, objs, name).Data[dexConfigKey]
			if err := yaml.Unmarshal(text, &cfg); err != nil || len(cfg.Connectors) != 1 {
				t.Fatalf("config.yaml: %v\n%s", err, text)
			}
			if diff := cmp.Diff(tc.want, cfg.Connectors[0].Config); diff != "" {
				t.Errorf("connector config (-want +got):\n%s", diff)
			}
			for _, o := range objs {
				if s, ok := o.(*corev1.Secret); ok && s.Name == name {
					continue
				}
				text, _ := yaml.Marshal(o)
				if strings.Contains(string(text), pw) {
					t.Errorf("%T %s holds the bind password", o, o.GetName())
				}
			}
			text2, _ := yaml.Marshal(built{Services: statuses, OIDC: oidc})
			if strings.Contains(string(text2), pw) {
				t.Errorf("the status holds the bind password")
			}
		})
	}
}

// TestDexConfigHash: Dex's pod template hash follows the config and the
// connector Secret's resourceVersion, not the Secret's value (a hash of a
// short password can be reversed by guessing).
func TestDexConfigHash(t *testing.T) {
	secrets := []sipv1.ConnectorConfigSecret{{Field: "bindPW", SecretRef: sipv1.SecretKeyRef{Name: "ldap", Key: "password"}}}
	hash := func(config, pw, rv string) string {
		in := dexInputs(t, config, secrets, map[string]string{"password": pw}, rv)
		b := build(t, in)
		return find[*appsv1.Deployment](t, b.Objects, serviceName(TypeAuth, in.Cluster.Name, 0)).Spec.Template.Annotations[ConfigHashAnnotation]
	}
	base := hash(`{"host":"a"}`, "one", "1")
	tests := []struct {
		name, config, pw, rv string
		same                 bool
	}{
		{"same", `{"host":"a"}`, "one", "1", true},
		{"another value, same version", `{"host":"a"}`, "two", "1", true},
		{"the Secret changed", `{"host":"a"}`, "one", "2", false},
		{"the config changed", `{"host":"b"}`, "one", "1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hash(tc.config, tc.pw, tc.rv); (got == base) != tc.same {
				t.Errorf("hash %s, base %s: same = %v, want %v", got, base, got == base, tc.same)
			}
		})
	}
}
