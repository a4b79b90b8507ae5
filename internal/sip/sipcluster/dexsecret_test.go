package sipcluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

// lockedBuffer is a log sink shared by the operator's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) write(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(prefix + " " + args + "\n")
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDexBindPasswordStaysSecret: an LDAP connector's bind password, given
// by configSecrets from a Secret of the cluster's namespace, reaches Dex's
// configuration Secret and nothing else: no ConfigMap, no Deployment, not
// the SIPCluster (spec or status), no event, no line of the operator's log
// (every verbosity), also while the Secret lacks the key.
func TestDexBindPasswordStaysSecret(t *testing.T) {
	const marker = "ldap-bind-marker-93c1e"
	s := newSite(t, "sip-dexsecret")
	s.host("cp-1", "cp", "r1", "127.0.8.1")
	ctx := context.Background()
	for _, sec := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "oidc"}, Data: map[string][]byte{"kubernetes": []byte("client-secret-x")}},
		// The key is wrong at first.
		{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "ldap-bind"}, Data: map[string][]byte{"old-password": []byte(marker)}},
	} {
		if err := env.Client.Create(ctx, sec); err != nil {
			t.Fatal(err)
		}
	}
	logs := &lockedBuffer{}
	startOperatorLogging(t, funcr.New(logs.write, funcr.Options{Verbosity: 10}))
	s.cluster("tenant", 1, 0, 0, func(c *sipv1.SIPCluster) {
		c.Spec.Services.Auth = []sipv1.AuthService{{
			SIPClusterService: sipv1.SIPClusterService{Image: "registry.invalid/dex:2"},
			NodePort:          nextNodePort(),
			Issuer:            "https://10.23.0.100:30556/dex",
			StaticClients:     []sipv1.OIDCClient{{ID: "kubernetes", SecretRef: sipv1.SecretKeyRef{Name: "oidc", Key: "kubernetes"}}},
			Connectors: []sipv1.OIDCConnector{{
				Type: "ldap", ID: "ldap", Name: "LDAP",
				Config:        &runtime.RawExtension{Raw: []byte(`{"host":"ldap.example:636","bindDN":"cn=dex,dc=example"}`)},
				ConfigSecrets: []sipv1.ConnectorConfigSecret{{Field: "bindPW", SecretRef: sipv1.SecretKeyRef{Name: "ldap-bind", Key: "password"}}},
			}},
		}}
	})
	c := s.waitReady("tenant", sipv1.ReasonTypeInfraServiceFailure)
	if msg := readyMessage(c); !strings.Contains(msg, `spec.services.auth[0].connectors[0].configSecrets[0].secretRef: Secret sip-dexsecret/ldap-bind has no key "password"`) {
		t.Errorf("Ready message %q does not name the missing key", msg)
	}
	sec := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "ldap-bind"}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data = map[string][]byte{"password": []byte(marker)}
	if err := env.Client.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	// Secrets are not watched: the resync (2 s here) sees the change.
	c = s.waitReady("tenant", sipv1.ReasonTypeReconciliationSucceeded)

	// Dex's configuration carries the password.
	var secs corev1.SecretList
	if err := env.Client.List(ctx, &secs, client.InNamespace(s.ns), client.MatchingLabels{sipv1.ClusterNameLabel: "tenant"}); err != nil {
		t.Fatal(err)
	}
	var dexConfig string
	for _, sec := range secs.Items {
		if cfg, ok := sec.Data["config.yaml"]; ok {
			dexConfig = string(cfg)
		}
	}
	if !strings.Contains(dexConfig, "bindPW: "+marker) {
		t.Errorf("Dex's configuration Secret lacks the bind password:\n%s", dexConfig)
	}

	// Nothing else does.
	var places []string
	check := func(what string, v any) {
		text, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		places = append(places, what)
		if strings.Contains(string(text), marker) {
			t.Errorf("%s holds the bind password", what)
		}
	}
	check("the SIPCluster", c)
	var cms corev1.ConfigMapList
	var deps appsv1.DeploymentList
	var events eventsv1.EventList
	var coreEvents corev1.EventList
	for _, l := range []client.ObjectList{&cms, &deps, &events, &coreEvents} {
		if err := env.Client.List(ctx, l, client.InNamespace(s.ns)); err != nil {
			t.Fatal(err)
		}
	}
	if len(events.Items) == 0 {
		t.Error("no event recorded: the event check would not look at anything")
	}
	check("the ConfigMaps", cms)
	check("the Deployments", deps)
	check("the events", events)
	check("the core events", coreEvents)
	out := logs.String()
	if !strings.Contains(out, "sip-dexsecret") {
		t.Error("the operator logged nothing about the cluster: the log check would not look at anything")
	}
	if strings.Contains(out, marker) {
		t.Error("the operator's log holds the bind password")
	}
	t.Logf("checked %v and %d bytes of log", places, len(out))
}
