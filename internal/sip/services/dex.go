package services

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

const (
	dexPort      = 5556
	dexUID       = 1001 // the official image's user
	dexConfigKey = "config.yaml"
	dexConfigDir = "/etc/sip/dex"

	defaultUsernameClaim = "email"
	defaultGroupsClaim   = "groups"
)

// clientSecretEnv is the variable holding static client i's secret: named
// by index, as a client id need not be a valid variable name.
func clientSecretEnv(i int) string { return fmt.Sprintf("SIP_CLIENT_SECRET_%d", i) }

// dexConfig is the part of Dex's configuration file SIP writes.
type dexConfig struct {
	Issuer        string         `json:"issuer"`
	Storage       dexStorage     `json:"storage"`
	Web           dexWeb         `json:"web"`
	OAuth2        dexOAuth2      `json:"oauth2"`
	StaticClients []dexClient    `json:"staticClients"`
	Connectors    []dexConnector `json:"connectors"`
}

type dexStorage struct {
	Type string `json:"type"`
}

type dexWeb struct {
	HTTP string `json:"http"`
}

type dexOAuth2 struct {
	SkipApprovalScreen bool `json:"skipApprovalScreen"`
}

// dexClient names its secret's variable: Dex reads the secret from the
// environment, so the file holds none.
type dexClient struct {
	ID           string   `json:"id"`
	Name         string   `json:"name,omitempty"`
	RedirectURIs []string `json:"redirectURIs,omitempty"`
	SecretEnv    string   `json:"secretEnv"`
}

type dexConnector struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Config json.RawMessage `json:"config,omitempty"`
}

// connectorConfig is connector c's config with its configSecrets set. With
// reveal false each such field holds a placeholder naming the Secret, its
// key and its resourceVersion instead of the value: that form is hashed
// into the pod template (a changed Secret rolls Dex; a hash of the value
// itself could be reversed by guessing a short password). Errors name the
// field path and the Secret, never a value.
func connectorConfig(p *field.Path, ns string, c sipv1.OIDCConnector, secrets map[string]*corev1.Secret, reveal bool) (json.RawMessage, error) {
	hasConfig := c.Config != nil && len(c.Config.Raw) > 0
	if len(c.ConfigSecrets) == 0 {
		if hasConfig {
			return c.Config.Raw, nil
		}
		return nil, nil
	}
	cfg := map[string]any{}
	if hasConfig {
		if err := json.Unmarshal(c.Config.Raw, &cfg); err != nil {
			return nil, fmt.Errorf("%s: must be an object: %w", p.Child("config"), err)
		}
		if cfg == nil { // null: no config
			cfg = map[string]any{}
		}
	}
	for k, cs := range c.ConfigSecrets {
		sp := p.Child("configSecrets").Index(k).Child("secretRef")
		sec := secrets[cs.SecretRef.Name]
		if sec == nil {
			return nil, fmt.Errorf("%s: Secret %s/%s not found", sp, ns, cs.SecretRef.Name)
		}
		val, ok := sec.Data[cs.SecretRef.Key]
		if !ok {
			return nil, fmt.Errorf("%s: Secret %s/%s has no key %q", sp, ns, cs.SecretRef.Name, cs.SecretRef.Key)
		}
		v := string(val)
		if !reveal {
			v = fmt.Sprintf("<Secret %s key %s, resourceVersion %s>", cs.SecretRef.Name, cs.SecretRef.Key, sec.ResourceVersion)
		}
		if err := setConfigField(cfg, cs.Field, v); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Child("configSecrets").Index(k).Child("field"), err)
		}
	}
	return json.Marshal(cfg)
}

// setConfigField sets the dotted path f of cfg to v, creating the objects
// on the way. It refuses a path through a value that is not an object, and
// a field config already sets: a field has one source.
func setConfigField(cfg map[string]any, f, v string) error {
	parts := strings.Split(f, ".")
	cur := cfg
	for i, k := range parts {
		if k == "" {
			return fmt.Errorf("%q: an empty key", f)
		}
		if i == len(parts)-1 {
			if _, ok := cur[k]; ok {
				return fmt.Errorf("%q is also set in config: give it in one place", f)
			}
			cur[k] = v
			return nil
		}
		next, ok := cur[k]
		if !ok {
			m := map[string]any{}
			cur[k] = m
			cur = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%q: config.%s is not an object", f, strings.Join(parts[:i+1], "."))
		}
		cur = m
	}
	return nil
}

// renderDexConfig is auth service a's config.yaml; see connectorConfig for
// reveal.
func renderDexConfig(p *field.Path, ns string, a sipv1.AuthService, secrets map[string]*corev1.Secret, reveal bool) (string, error) {
	cfg := dexConfig{
		Issuer:  a.Issuer,
		Storage: dexStorage{Type: "memory"},
		Web:     dexWeb{HTTP: fmt.Sprintf("0.0.0.0:%d", dexPort)},
		OAuth2:  dexOAuth2{SkipApprovalScreen: true},
	}
	for i, c := range a.StaticClients {
		cfg.StaticClients = append(cfg.StaticClients, dexClient{
			ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs, SecretEnv: clientSecretEnv(i),
		})
	}
	for j, c := range a.Connectors {
		raw, err := connectorConfig(p.Child("connectors").Index(j), ns, c, secrets, reveal)
		if err != nil {
			return "", err
		}
		cfg.Connectors = append(cfg.Connectors, dexConnector{Type: c.Type, ID: c.ID, Name: c.Name, Config: raw})
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	return "# Dex configuration, generated by SIP: edits are overwritten.\n" +
		"# Storage is memory: keys, sessions and refresh tokens do not survive a restart.\n" + string(out), nil
}

// auth is Dex. Its config.yaml is a Secret, as connector secrets
// (configSecrets) are written into it.
func (b *builder) auth(p *field.Path, i int, a sipv1.AuthService) ([]client.Object, sipv1.ServiceStatus, error) {
	name := serviceName(TypeAuth, b.cluster.Name, i)
	ns := b.cluster.Namespace
	cfg, err := renderDexConfig(p, ns, a, b.connectorSecrets, true)
	if err != nil {
		return nil, sipv1.ServiceStatus{}, err
	}
	hashed, err := renderDexConfig(p, ns, a, b.connectorSecrets, false)
	if err != nil {
		return nil, sipv1.ServiceStatus{}, err
	}
	// The image's entrypoint would run the file through a template
	// engine first; Dex is started directly so the file is read as written.
	c := container("dex", a.Image, []corev1.ContainerPort{{Name: "http", ContainerPort: dexPort, Protocol: corev1.ProtocolTCP}})
	c.Command = []string{"dex", "serve", dexConfigDir + "/" + dexConfigKey}
	c.SecurityContext = nonRoot(dexUID)
	c.Env = []corev1.EnvVar{{Name: "DEX_EXPAND_ENV", Value: "false"}}
	for j, sc := range a.StaticClients {
		c.Env = append(c.Env, corev1.EnvVar{Name: clientSecretEnv(j), ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: sc.SecretRef.Name},
				Key:                  sc.SecretRef.Key,
			},
		}})
	}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: dexConfigDir, ReadOnly: true}}
	dep := b.deployment(workload{
		name:   name,
		svc:    a.SIPClusterService,
		config: map[string]string{dexConfigKey: hashed},
		pod: corev1.PodSpec{
			// The file is readable by Dex's group only.
			SecurityContext: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](dexUID)},
			Containers:      []corev1.Container{c},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: name, DefaultMode: ptr.To[int32](0o440)},
			}}},
		},
	})
	objs := []client.Object{
		b.secret(name, name, map[string][]byte{dexConfigKey: []byte(cfg)}),
		dep,
		b.service(name, a.SIPClusterService, []corev1.ServicePort{servicePort("http", dexPort, a.NodePort)}),
	}
	return objs, status(name, TypeAuth, ""), nil
}

// oidcStatus is what the tenant API server needs to trust a: its issuer,
// its first static client as audience, and the claims to read.
func oidcStatus(a sipv1.AuthService) *sipv1.OIDCStatus {
	st := &sipv1.OIDCStatus{IssuerURL: a.Issuer}
	if len(a.StaticClients) > 0 {
		st.ClientID = a.StaticClients[0].ID
	}
	username, groups := a.UsernameClaim, a.GroupsClaim
	if username == "" {
		username = defaultUsernameClaim
	}
	if groups == "" {
		groups = defaultGroupsClaim
	}
	st.APIServerArgs = []string{
		"--oidc-issuer-url=" + st.IssuerURL,
		"--oidc-client-id=" + st.ClientID,
		"--oidc-username-claim=" + username,
		"--oidc-groups-claim=" + groups,
	}
	slices.Sort(st.APIServerArgs)
	return st
}
