package certs

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

const catalogYAML = `
schema: promenade/PKICatalog/v1
metadata: {schema: metadata/Document/v1, name: catalog}
data:
  certificate_authorities:
    kubernetes:
      certificates:
        - document_name: apiserver
          common_name: apiserver
          hosts: [localhost, 127.0.0.1, 10.96.0.1]
          kubernetes_service_names: [kubernetes.default.svc.cluster.local]
        - document_name: admin
          common_name: admin
          groups: [system:masters]
    etcd:
      certificates:
        - document_name: etcd-n0
          common_name: etcd-n0
          hosts: [n0, 192.168.77.10]
  keypairs:
    - name: service-account
`

func load(t *testing.T, sources ...string) *docset.Set {
	t.Helper()
	var src []docset.Source
	for i, s := range sources {
		src = append(src, docset.Source{Name: "in" + string(rune('0'+i)) + ".yaml", Data: []byte(s)})
	}
	set, err := docset.LoadSources(src...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func material(t *testing.T, res *Result) string {
	t.Helper()
	b, err := docset.MarshalYAML(res.Documents)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func pemOf(t *testing.T, res *Result, schema, name string) string {
	t.Helper()
	for _, d := range res.Documents {
		if d.Schema == schema && d.Metadata.Name == name {
			var s string
			if err := d.DecodeInto(&s); err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Fatalf("no %s %s in output", schema, name)
	return ""
}

func parseCert(t *testing.T, s string) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		t.Fatal("no PEM")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGenerateVerifiesWithX509(t *testing.T) {
	res, err := Generate(load(t, catalogYAML), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Documents); got != 2*2+3*2+2 {
		t.Fatalf("got %d documents", got)
	}
	roots := map[string]*x509.CertPool{}
	for _, ca := range []string{"kubernetes", "etcd"} {
		c := parseCert(t, pemOf(t, res, v1.SchemaCertificateAuthority, ca))
		if !c.IsCA || c.Subject.CommonName != ca || c.KeyUsage&x509.KeyUsageCertSign == 0 {
			t.Errorf("CA %s: IsCA=%v CN=%q usage=%v", ca, c.IsCA, c.Subject.CommonName, c.KeyUsage)
		}
		roots[ca] = x509.NewCertPool()
		roots[ca].AddCert(c)
	}
	tests := []struct {
		name, ca, cn string
		groups, dns  []string
		ips          []string
	}{
		{"apiserver", "kubernetes", "apiserver", nil, []string{"localhost", "kubernetes.default.svc.cluster.local"}, []string{"127.0.0.1", "10.96.0.1"}},
		{"admin", "kubernetes", "admin", []string{"system:masters"}, nil, nil},
		{"etcd-n0", "etcd", "etcd-n0", nil, []string{"n0"}, []string{"192.168.77.10"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := parseCert(t, pemOf(t, res, v1.SchemaCertificate, tc.name))
			for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
				if _, err := c.Verify(x509.VerifyOptions{Roots: roots[tc.ca], KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
					t.Errorf("chain to %s for usage %v: %v", tc.ca, usage, err)
				}
			}
			other := "etcd"
			if tc.ca == "etcd" {
				other = "kubernetes"
			}
			if _, err := c.Verify(x509.VerifyOptions{Roots: roots[other]}); err == nil {
				t.Errorf("verifies against the wrong CA %s", other)
			}
			if c.Subject.CommonName != tc.cn || !slices.Equal(c.Subject.Organization, tc.groups) {
				t.Errorf("subject %v", c.Subject)
			}
			if !slices.Equal(c.DNSNames, tc.dns) {
				t.Errorf("DNS SANs %v, want %v", c.DNSNames, tc.dns)
			}
			var ips []string
			for _, ip := range c.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tc.ips) {
				t.Errorf("IP SANs %v, want %v", ips, tc.ips)
			}
			for _, ip := range tc.ips {
				if err := c.VerifyHostname(ip); err != nil {
					t.Errorf("hostname %s: %v", ip, err)
				}
			}
			if c.IsCA {
				t.Error("leaf is a CA")
			}
			if _, ok := c.PublicKey.(*ecdsa.PublicKey); !ok {
				t.Errorf("key %T, want ECDSA by default", c.PublicKey)
			}
			if d := c.NotAfter.Sub(c.NotBefore); d < DefaultValidity || d > DefaultValidity+10*time.Minute {
				t.Errorf("validity %s", d)
			}
			kp, err := pki.Parse([]byte(pemOf(t, res, v1.SchemaCertificate, tc.name)), []byte(pemOf(t, res, v1.SchemaCertificateKey, tc.name)))
			if err != nil || kp == nil {
				t.Errorf("key does not match certificate: %v", err)
			}
		})
	}
	pub, err := parsePublicKey(pemOf(t, res, v1.SchemaPublicKey, "service-account"))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := pki.ParseKey([]byte(pemOf(t, res, v1.SchemaPrivateKey, "service-account")))
	if err != nil || !priv.Public().(*ecdsa.PublicKey).Equal(pub) {
		t.Fatalf("service-account keypair does not match: %v", err)
	}
}

func TestKeyTypesAndExpiry(t *testing.T) {
	for _, kt := range []pki.KeyType{pki.RSA2048, pki.RSA4096} {
		if testing.Short() && kt == pki.RSA4096 {
			continue
		}
		res, err := Generate(load(t, catalogYAML), Options{KeyType: kt, Validity: 48 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		c := parseCert(t, pemOf(t, res, v1.SchemaCertificate, "admin"))
		rk, ok := c.PublicKey.(*rsa.PublicKey)
		if !ok || kt == pki.RSA2048 && rk.N.BitLen() != 2048 || kt == pki.RSA4096 && rk.N.BitLen() != 4096 {
			t.Errorf("%s: public key %T", kt, c.PublicKey)
		}
		if c.KeyUsage&x509.KeyUsageKeyEncipherment == 0 {
			t.Errorf("%s: RSA leaf lacks key encipherment", kt)
		}
		if d := c.NotAfter.Sub(c.NotBefore); d > 49*time.Hour {
			t.Errorf("validity %s, want 48h", d)
		}
	}
}

// TestReuseOrRegenerate runs generation twice: the second run sees the
// first run's material next to a (possibly changed) catalog.
func TestReuseOrRegenerate(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		// first run options and the catalog of the second run
		firstNow   time.Time
		firstKT    pki.KeyType
		catalog    string
		dropDoc    string // schema/name removed from the first run's output
		secondKT   pki.KeyType
		regenerate []string // items regenerated; every other is reused
	}{
		{name: "unchanged", catalog: catalogYAML},
		{name: "hosts changed", catalog: strings.Replace(catalogYAML, "[n0, 192.168.77.10]", "[n0, 192.168.77.20]", 1), regenerate: []string{"etcd-n0"}},
		{name: "IP moved to DNS", catalog: strings.Replace(catalogYAML, "[n0, 192.168.77.10]", "[n0, n0.example.com]", 1), regenerate: []string{"etcd-n0"}},
		{name: "groups changed", catalog: strings.Replace(catalogYAML, "[system:masters]", "[system:masters, ops]", 1), regenerate: []string{"admin"}},
		{name: "CN changed", catalog: strings.Replace(catalogYAML, "common_name: admin", "common_name: root", 1), regenerate: []string{"admin"}},
		{name: "certificates expiring", firstNow: now.Add(-360 * 24 * time.Hour), catalog: catalogYAML, regenerate: []string{"apiserver", "admin", "etcd-n0"}},
		{name: "CA key lost", catalog: catalogYAML, dropDoc: v1.SchemaCertificateAuthorityKey + "/etcd", regenerate: []string{"etcd", "etcd-n0"}},
		{name: "certificate key lost", catalog: catalogYAML, dropDoc: v1.SchemaCertificateKey + "/admin", regenerate: []string{"admin"}},
		{name: "keypair half lost", catalog: catalogYAML, dropDoc: v1.SchemaPublicKey + "/service-account", regenerate: []string{"service-account"}},
		{name: "key type changed", catalog: catalogYAML, secondKT: pki.RSA2048, regenerate: []string{"kubernetes", "etcd", "apiserver", "admin", "etcd-n0", "service-account"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			firstNow := now
			if !tc.firstNow.IsZero() {
				firstNow = tc.firstNow
			}
			first, err := Generate(load(t, catalogYAML), Options{Now: func() time.Time { return firstNow }, KeyType: tc.firstKT})
			if err != nil {
				t.Fatal(err)
			}
			var kept []docset.Document
			for _, d := range first.Documents {
				if d.Schema+"/"+d.Metadata.Name != tc.dropDoc {
					kept = append(kept, d)
				}
			}
			out, err := docset.MarshalYAML(kept)
			if err != nil {
				t.Fatal(err)
			}
			second, err := Generate(load(t, tc.catalog, string(out)), Options{Now: func() time.Time { return now }, KeyType: tc.secondKT})
			if err != nil {
				t.Fatal(err)
			}
			var regenerated []string
			for _, a := range second.Actions {
				if !a.Reused {
					regenerated = append(regenerated, a.Name)
					if a.Reason == "" {
						t.Errorf("%s regenerated without a reason", a.Name)
					}
				}
			}
			slices.Sort(regenerated)
			want := append([]string(nil), tc.regenerate...)
			slices.Sort(want)
			if !slices.Equal(regenerated, want) {
				t.Fatalf("regenerated %v, want %v (actions %+v)", regenerated, want, second.Actions)
			}
			// Reused material is byte-for-byte the input.
			for _, a := range second.Actions {
				if a.Reused && a.Kind == "Certificate" && pemOf(t, first, v1.SchemaCertificate, a.Name) != pemOf(t, second, v1.SchemaCertificate, a.Name) {
					t.Errorf("%s reused but changed", a.Name)
				}
			}
		})
	}
}

func TestBadCatalogs(t *testing.T) {
	tests := []struct{ name, extra, want string }{
		{"certificate naming a missing CA", `
schema: promenade/PKICatalog/v1
metadata: {schema: metadata/Document/v1, name: extra}
data:
  certificates:
    - {document_name: kubelet-n9, ca: kubernetes-typo, common_name: "system:node:n9"}
`, `certificate "kubelet-n9" names CA "kubernetes-typo", which no PKICatalog defines (defined: etcd, kubernetes)`},
		{"duplicate certificate name", `
schema: promenade/PKICatalog/v1
metadata: {schema: metadata/Document/v1, name: extra}
data:
  certificates:
    - {document_name: admin, ca: etcd, common_name: admin2}
`, `certificate document_name "admin" is already used`},
		{"duplicate keypair", `
schema: promenade/PKICatalog/v1
metadata: {schema: metadata/Document/v1, name: extra}
data:
  keypairs: [{name: service-account}]
`, `keypair "service-account" is already defined`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(load(t, catalogYAML, tc.extra), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	// A flat certificate that names an existing CA is signed by it.
	res, err := Generate(load(t, catalogYAML, `
schema: promenade/PKICatalog/v1
metadata: {schema: metadata/Document/v1, name: extra}
data:
  certificates:
    - {document_name: kubelet-n9, ca: kubernetes, common_name: "system:node:n9", hosts: [n9, 10.0.0.9]}
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := parseCert(t, pemOf(t, res, v1.SchemaCertificate, "kubelet-n9"))
	ca := parseCert(t, pemOf(t, res, v1.SchemaCertificateAuthority, "kubernetes"))
	if err := c.CheckSignatureFrom(ca); err != nil || !c.IPAddresses[0].Equal(net.ParseIP("10.0.0.9")) {
		t.Fatalf("flat certificate: %v %v", err, c.IPAddresses)
	}
}

func TestWriteModes(t *testing.T) {
	res, err := Generate(load(t, catalogYAML), Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Write(dir, res); err != nil {
		t.Fatal(err)
	}
	modes := map[string]os.FileMode{
		"certificates.yaml":           0o600,
		"pki/ca-kubernetes.pem":       0o644,
		"pki/ca-kubernetes-key.pem":   0o600,
		"pki/apiserver.pem":           0o644,
		"pki/apiserver-key.pem":       0o600,
		"pki/service-account.pub":     0o644,
		"pki/service-account-key.pem": 0o600,
	}
	for name, want := range modes {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	// The written file is a valid configuration that regenerates nothing.
	b, err := os.ReadFile(filepath.Join(dir, "certificates.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := Generate(load(t, catalogYAML, string(b)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, gen := again.Counts(); gen != 0 {
		t.Errorf("regenerated %d items from written material", gen)
	}
	if material(t, again) != string(b) {
		t.Error("reused output differs from input")
	}
}

func TestExampleCatalog(t *testing.T) {
	files, _ := filepath.Glob("../../../examples/site/promenade/*.yaml")
	set, err := docset.Load(files...)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := Generate(set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := ReadCatalog(set)
	if n := cat.NumItems(); n < 35 {
		t.Errorf("example catalog has %d items, want about 40", n)
	}
	t.Logf("%d items in %s", len(res.Actions), time.Since(start))
}
