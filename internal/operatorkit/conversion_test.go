package operatorkit

import (
	"crypto/x509/pkix"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/pki"
)

func TestConversionWebhookValidate(t *testing.T) {
	crds := []string{"things.example.com"}
	for _, tc := range []struct {
		name string
		w    ConversionWebhook
		want string
	}{
		{"disabled", ConversionWebhook{Addr: "0"}, ""},
		{"disabled by default", ConversionWebhook{}, ""},
		{"url", ConversionWebhook{Addr: ":9443", URL: "https://10.0.0.1:9443", CRDs: crds}, ""},
		{"service", ConversionWebhook{Addr: ":9443", Service: "ns/svc", CertSecret: "ns/cert", CRDs: crds}, ""},
		{"neither", ConversionWebhook{Addr: ":9443", CRDs: crds}, "needs one of"},
		{"both", ConversionWebhook{Addr: ":9443", URL: "https://a:1", Service: "ns/svc", CRDs: crds}, "needs one of"},
		{"http", ConversionWebhook{Addr: ":9443", URL: "http://a:1", CRDs: crds}, "want https://host:port"},
		{"credentials in the URL", ConversionWebhook{Addr: ":9443", URL: "https://u:p@a:1", CRDs: crds}, "without credentials"},
		{"a path", ConversionWebhook{Addr: ":9443", URL: "https://a:1/convert", CRDs: crds}, "want https://host:port"},
		{"service in the operator's namespace", ConversionWebhook{Addr: ":9443", Service: "svc", CertSecret: "cert", CRDs: crds}, ""},
		{"service with an empty namespace", ConversionWebhook{Addr: ":9443", Service: "/svc", CRDs: crds}, "--conversion-webhook-service"},
		{"bad secret", ConversionWebhook{Addr: ":9443", Service: "ns/svc", CertSecret: "ns/a/b", CRDs: crds}, "--conversion-webhook-cert-secret"},
		{"no CRDs", ConversionWebhook{Addr: ":9443", Service: "ns/svc"}, "no CRDs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.w.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want an error with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "u:p@") {
				t.Errorf("the error shows the URL's credentials: %v", err)
			}
		})
	}
}

func TestConversionWebhookEndpoint(t *testing.T) {
	svc := ConversionWebhook{Service: "metal3-system/metal3-operator-webhook"}
	if got := svc.hosts(); got[0] != "metal3-operator-webhook.metal3-system.svc" || len(got) != 4 {
		t.Errorf("service hosts %v", got)
	}
	cc := svc.clientConfig([]byte("ca"))
	if cc.URL != nil || cc.Service == nil || cc.Service.Namespace != "metal3-system" || *cc.Service.Path != ConversionPath || *cc.Service.Port != 443 || string(cc.CABundle) != "ca" {
		t.Errorf("service clientConfig %+v", cc)
	}
	u := ConversionWebhook{URL: "https://127.0.0.1:9443/"}
	if got := u.hosts(); len(got) != 1 || got[0] != "127.0.0.1" {
		t.Errorf("url hosts %v", got)
	}
	if cc := u.clientConfig(nil); cc.Service != nil || *cc.URL != "https://127.0.0.1:9443/convert" {
		t.Errorf("url clientConfig %+v", cc)
	}
}

func TestConversionWebhookInNamespace(t *testing.T) {
	saved := InClusterNamespaceFile
	t.Cleanup(func() { InClusterNamespaceFile = saved })
	InClusterNamespaceFile = filepath.Join(t.TempDir(), "namespace")
	w := ConversionWebhook{Service: "webhook", CertSecret: "other/cert"}
	if _, err := w.inNamespace(); err == nil || !strings.Contains(err.Error(), "outside a pod") {
		t.Errorf("outside a pod: %v, want an error", err)
	}
	if err := os.WriteFile(InClusterNamespaceFile, []byte("metal3-system\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := w.inNamespace()
	if err != nil || got.Service != "metal3-system/webhook" || got.CertSecret != "other/cert" {
		t.Errorf("in a pod: %+v %v, want the Service in metal3-system and the Secret where it was named", got, err)
	}
}

// TestConversionCertificateServes: the shared Secret's certificate is
// kept only while it is for every host of the webhook and has more than a
// tenth of its life left.
func TestConversionCertificateServes(t *testing.T) {
	k := &conversionKeeper{w: ConversionWebhook{Service: "ns/svc"}}
	certPEM, _, _, err := k.issue()
	if err != nil {
		t.Fatal(err)
	}
	if !k.serves(certPEM) {
		t.Errorf("a fresh certificate for the Service is not kept")
	}
	other := &conversionKeeper{w: ConversionWebhook{Service: "ns/other"}}
	if other.serves(certPEM) {
		t.Errorf("a certificate for another Service is kept")
	}
	ca, err := pki.NewCA("test-ca", time.Hour, pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	old, err := ca.Issue(pki.Request{CommonName: "svc.ns.svc", Hosts: k.w.hosts(), Server: true, Validity: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	// One minute of life, issued a moment ago: most of it is left.
	if !k.serves(old.CertPEM()) {
		t.Errorf("a certificate with most of its life left is not kept")
	}
	// Issued 95 minutes ago for 100: a twentieth of its life is left.
	key, err := pki.NewKey(pki.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	ending, err := pki.Sign(pki.Spec{Subject: pkix.Name{CommonName: "svc.ns.svc"}, Hosts: k.w.hosts(), Server: true, Validity: 100 * time.Minute},
		key, ca, pki.Env{Now: func() time.Time { return time.Now().Add(-95 * time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	if k.serves(ending.CertPEM()) {
		t.Errorf("a certificate with a twentieth of its life left is kept, want it renewed")
	}
	if k.serves([]byte("not a certificate")) {
		t.Errorf("garbage is kept as a certificate")
	}
}
