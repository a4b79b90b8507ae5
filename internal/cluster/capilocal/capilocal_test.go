package capilocal

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	ctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/config"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// TestVersionMatchesBuildScript keeps Version, versions.env and the
// wrapper module that builds the managers in step.
func TestVersionMatchesBuildScript(t *testing.T) {
	f, err := os.Open("../../../hack/testbin/versions.env")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // only read: closing cannot lose data
	got := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "CAPI_VERSION="); ok {
			got = v
		}
	}
	if got != Version {
		t.Errorf("versions.env CAPI_VERSION=%q, capilocal.Version=%q", got, Version)
	}
	for _, mod := range []string{"../../../hack/testbin/capi/go.mod", "../../../go.mod"} {
		data, err := os.ReadFile(mod)
		if err != nil {
			t.Fatal(err)
		}
		for _, req := range []string{"sigs.k8s.io/cluster-api " + Version, "sigs.k8s.io/cluster-api/api " + Version} {
			if !strings.Contains(string(data), "\t"+req) {
				t.Errorf("%s does not require %s", mod, req)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// conversionCRD is a CRD of plural.group in versions v1 (stored) and v2,
// converted by the webhook behind Service webhook-service of namespace.
func conversionCRD(plural, group, namespace string) *apiextensionsv1.CustomResourceDefinition {
	schema := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr(true)}}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: strings.ToUpper(plural[:1]) + plural[1:len(plural)-1]},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schema},
				{Name: "v2", Served: true, Schema: schema},
			},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{
						Namespace: namespace, Name: "webhook-service", Path: ptr("/convert"),
					}},
				},
			},
		},
	}
}

// TestRewriteWebhooks points a provider's admission and conversion webhooks
// at a local URL on a real API server and leaves other webhooks alone.
func TestRewriteWebhooks(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	svc := func(ns, path string) admissionv1.WebhookClientConfig {
		return admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: ns, Name: "webhook-service", Path: ptr(path)}}
	}
	hook := func(name string, cc admissionv1.WebhookClientConfig) admissionv1.ValidatingWebhook {
		return admissionv1.ValidatingWebhook{
			Name: name, ClientConfig: cc, SideEffects: ptr(admissionv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			// Matches nothing this test creates.
			Rules: []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{APIGroups: []string{"example.test"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}},
		}
	}
	vwc := &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "provider-validating"},
		Webhooks: []admissionv1.ValidatingWebhook{
			hook("a.provider.test", svc("provider-system", "/validate-a")),
			hook("b.other.test", svc("other-system", "/validate-b")),
		},
	}
	mwc := &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "provider-mutating"},
		Webhooks: []admissionv1.MutatingWebhook{{
			Name: "m.provider.test", ClientConfig: svc("provider-system", "/mutate-a"),
			SideEffects: ptr(admissionv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
		}},
	}
	crd := conversionCRD("widgets", "example.test", "provider-system")
	for _, o := range []client.Object{vwc, mwc, crd} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	hooks, err := readWebhooks(ctx, env.Client)
	if err != nil {
		t.Fatal(err)
	}
	if n := hooks.count("provider-system"); n != 3 {
		t.Errorf("webhooks served from provider-system: %d, want 3", n)
	}
	if n := hooks.admission("provider-system"); n != 2 {
		t.Errorf("admission webhooks served from provider-system: %d, want 2 (not the CRD's conversion)", n)
	}
	ca, err := writeServingCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Twice, as a retry on fresh ports does: the second rewrite must still
	// find the webhooks the first one already changed. Then once more from
	// what the cluster says, as managers started again later do.
	for _, port := range []string{"1111", "2222", "3333"} {
		if port == "3333" {
			if hooks, err = readWebhooks(ctx, env.Client); err != nil {
				t.Fatal(err)
			}
			if n := hooks.count("provider-system"); n != 3 {
				t.Errorf("webhooks served from provider-system after the rewrite: %d, want 3", n)
			}
		}
		if err := hooks.rewrite(ctx, env.Client, map[string]string{"provider-system": "https://127.0.0.1:" + port}, ca); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(vwc), vwc); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(mwc), mwc); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		url     *string
		service bool
		want    string
	}{
		{"validating, provider", vwc.Webhooks[0].ClientConfig.URL, vwc.Webhooks[0].ClientConfig.Service != nil, "https://127.0.0.1:3333/validate-a"},
		{"validating, other namespace", vwc.Webhooks[1].ClientConfig.URL, vwc.Webhooks[1].ClientConfig.Service != nil, ""},
		{"mutating", mwc.Webhooks[0].ClientConfig.URL, mwc.Webhooks[0].ClientConfig.Service != nil, "https://127.0.0.1:3333/mutate-a"},
		{"conversion", crd.Spec.Conversion.Webhook.ClientConfig.URL, crd.Spec.Conversion.Webhook.ClientConfig.Service != nil, "https://127.0.0.1:3333/convert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if tt.url != nil {
				got = *tt.url
			}
			if got != tt.want {
				t.Errorf("url = %q, want %q", got, tt.want)
			}
			if tt.service != (tt.want == "") {
				t.Errorf("service reference kept = %v, want %v", tt.service, tt.want == "")
			}
		})
	}
	if string(vwc.Webhooks[0].ClientConfig.CABundle) != string(ca) || string(crd.Spec.Conversion.Webhook.ClientConfig.CABundle) != string(ca) {
		t.Error("rewritten webhooks do not trust the serving CA")
	}
}

// TestNewChecksProviders covers what New decides before it starts anything,
// from a real provider inventory.
func TestNewChecksProviders(t *testing.T) {
	env := testenv.StartAPI(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(ctlconfig.ClusterctlAPIManifest, crd); err != nil {
		t.Fatal(err)
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}); err != nil {
		t.Fatal(err)
	}
	addProvider := func(t *testing.T, ns, name, typ string) {
		t.Helper()
		if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		p := &unstructured.Unstructured{Object: map[string]any{
			"providerName": name, "type": typ, "version": "v0.1.0",
		}}
		p.SetGroupVersionKind(clusterctlv1.GroupVersion.WithKind("Provider"))
		p.SetNamespace(ns)
		p.SetName(name)
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), p) })
	}
	t.Run("inventory wait names what is missing", func(t *testing.T) {
		wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
		defer wcancel()
		err := WaitForInventory(wctx, env.Config, []string{"cluster-api", "bootstrap-kubeadm"}, 100*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), "not yet installed: cluster-api, bootstrap-kubeadm") {
			t.Fatalf("WaitForInventory on an empty inventory: %v", err)
		}
		addProvider(t, "capi-system", "cluster-api", "CoreProvider")
		addProvider(t, "capi-kubeadm-bootstrap-system", "kubeadm", "BootstrapProvider")
		if err := WaitForInventory(ctx, env.Config, []string{"cluster-api", "bootstrap-kubeadm"}, 100*time.Millisecond); err != nil {
			t.Fatalf("WaitForInventory with both providers listed: %v", err)
		}
	})
	tests := []struct {
		name   string
		setup  func(t *testing.T)
		want   string
		noBins bool
	}{
		{
			name:  "empty inventory",
			setup: func(*testing.T) {},
			want:  "no Cluster API provider with a local manager",
		},
		{
			name:  "provider without binary or webhooks is left to the test",
			setup: func(t *testing.T) { addProvider(t, "infra-a-system", "a", "InfrastructureProvider") },
			want:  "found 1 providers",
		},
		{
			name: "provider without binary but with webhooks",
			setup: func(t *testing.T) {
				addProvider(t, "infra-b-system", "b", "InfrastructureProvider")
				vwc := &admissionv1.ValidatingWebhookConfiguration{
					ObjectMeta: metav1.ObjectMeta{Name: "infra-b"},
					Webhooks: []admissionv1.ValidatingWebhook{{
						Name: "b.infra.test", SideEffects: ptr(admissionv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"},
						ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "infra-b-system", Name: "webhook-service"}},
					}},
				}
				if err := env.Client.Create(ctx, vwc); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), vwc) })
			},
			want: "provider infrastructure-b (namespace infra-b-system) has 1 admission webhooks but no local manager binary",
		},
		{
			// Its CRDs' conversion webhook is its own to serve and point
			// (as metal3-operator does): left to the test like infra-a.
			name: "provider without binary whose only webhook is a CRD's conversion",
			setup: func(t *testing.T) {
				addProvider(t, "infra-c-system", "c", "InfrastructureProvider")
				crd := conversionCRD("gadgets", "infra-c.test", "infra-c-system")
				if err := env.Client.Create(ctx, crd); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = env.Client.Delete(context.Background(), crd) })
			},
			want: "found 1 providers",
		},
		{
			name:   "core provider, binary not built",
			setup:  func(t *testing.T) { addProvider(t, "capi-system", "cluster-api", "CoreProvider") },
			want:   "capi-manager missing from",
			noBins: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AIRSHIP_TESTBIN_DIR", t.TempDir())
			tt.setup(t)
			e, err := New(ctx, env.Config, env.Kubeconfig, Options{LogDir: t.TempDir()})
			if err == nil {
				_ = e.Stop()
				t.Fatalf("New succeeded, want an error with %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
			if errors.Is(err, local.ErrNoBinaries) != tt.noBins {
				t.Errorf("errors.Is(err, ErrNoBinaries) = %v, want %v", !tt.noBins, tt.noBins)
			}
		})
	}
}
