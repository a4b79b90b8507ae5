package promenade

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/promenade/certs"
	"github.com/airshipit/airship-go/internal/promenade/config"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

func loadCatalog(tb testing.TB) (*config.Set, *certs.Catalog) {
	tb.Helper()
	files, err := filepath.Glob("../../examples/site/promenade/*.yaml")
	if err != nil || len(files) == 0 {
		tb.Fatal("example configuration not found")
	}
	set, err := config.Load(files...)
	if err != nil {
		tb.Fatal(err)
	}
	cat, err := certs.ReadCatalog(set)
	if err != nil {
		tb.Fatal(err)
	}
	return set, cat
}

func requireOpenSSL(tb testing.TB) string {
	tb.Helper()
	return testtool.Path(tb, "openssl")
}

func newKeyArgs(kt pki.KeyType) []string {
	if kt == pki.RSA2048 {
		return []string{"-newkey", "rsa:2048"}
	}
	return []string{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"}
}

func subject(cn string, groups []string) string {
	var b strings.Builder
	for _, g := range groups {
		b.WriteString("/O=" + g)
	}
	b.WriteString("/CN=" + cn)
	return b.String()
}

// openSSLCatalog generates the catalog with one openssl process per CA,
// certificate and key, as a shell-out implementation would.
func openSSLCatalog(tb testing.TB, bin, dir string, cat *certs.Catalog, kt pki.KeyType) int {
	tb.Helper()
	run := func(args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	n := 0
	for _, ca := range cat.CAs {
		args := append([]string{"req", "-x509", "-nodes", "-batch"}, newKeyArgs(kt)...)
		run(append(args, "-keyout", "ca-"+ca.Name+"-key.pem", "-out", "ca-"+ca.Name+".pem",
			"-subj", "/CN="+ca.Name, "-days", "3650",
			"-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature")...)
		n++
		for _, c := range ca.Certificates {
			var sans []string
			for _, h := range append(append([]string(nil), c.Hosts...), c.KubernetesServiceNames...) {
				if net.ParseIP(h) != nil {
					sans = append(sans, "IP:"+h)
				} else {
					sans = append(sans, "DNS:"+h)
				}
			}
			args := append([]string{"req", "-x509", "-nodes", "-batch"}, newKeyArgs(kt)...)
			args = append(args, "-keyout", c.DocumentName+"-key.pem", "-out", c.DocumentName+".pem",
				"-subj", subject(c.CommonName, c.Groups), "-days", "365",
				"-CA", "ca-"+ca.Name+".pem", "-CAkey", "ca-"+ca.Name+"-key.pem",
				"-addext", "basicConstraints=critical,CA:FALSE",
				"-addext", "keyUsage=critical,digitalSignature,keyEncipherment",
				"-addext", "extendedKeyUsage=serverAuth,clientAuth")
			if len(sans) > 0 {
				args = append(args, "-addext", "subjectAltName="+strings.Join(sans, ","))
			}
			run(args...)
			n++
		}
	}
	for _, kp := range cat.Keypairs {
		if kt == pki.RSA2048 {
			run("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", kp.Name+"-key.pem")
		} else {
			run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", kp.Name+"-key.pem")
		}
		run("pkey", "-in", kp.Name+"-key.pem", "-pubout", "-out", kp.Name+".pub")
		n++
	}
	return n
}

// TestOpenSSLMakesTheSameCatalog checks the comparison is fair: openssl
// produces the same number of items, and its certificates chain, carry the
// same subjects and SANs as Go's.
func TestOpenSSLMakesTheSameCatalog(t *testing.T) {
	bin := requireOpenSSL(t)
	set, cat := loadCatalog(t)
	dir := t.TempDir()
	n := openSSLCatalog(t, bin, dir, cat, pki.ECDSAP256)
	res, err := certs.Generate(set, certs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(res.Actions) || n != cat.NumItems() {
		t.Fatalf("openssl made %d items, Go %d, catalog has %d", n, len(res.Actions), cat.NumItems())
	}
	read := func(name string) *x509.Certificate {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		blk, _ := pem.Decode(b)
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, ca := range cat.CAs {
		root := read("ca-" + ca.Name + ".pem")
		pool := x509.NewCertPool()
		pool.AddCert(root)
		for _, c := range ca.Certificates {
			leaf := read(c.DocumentName + ".pem")
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("%s: %v", c.DocumentName, err)
			}
			if leaf.Subject.CommonName != c.CommonName || len(leaf.DNSNames)+len(leaf.IPAddresses) != len(c.Hosts)+len(c.KubernetesServiceNames) {
				t.Errorf("%s: subject %v SANs %v %v", c.DocumentName, leaf.Subject, leaf.DNSNames, leaf.IPAddresses)
			}
		}
	}
}

// BenchmarkCatalog generates the whole catalog per iteration with Go and,
// in the same iteration, with openssl; it reports both times and their
// ratio.
func BenchmarkCatalog(b *testing.B) {
	set, cat := loadCatalog(b)
	bin := requireOpenSSL(b)
	for _, kt := range []pki.KeyType{pki.ECDSAP256, pki.RSA2048} {
		b.Run(string(kt), func(b *testing.B) {
			var goTime, sslTime time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				res, err := certs.Generate(set, certs.Options{KeyType: kt})
				if err != nil {
					b.Fatal(err)
				}
				goTime += time.Since(start)
				if len(res.Actions) != cat.NumItems() {
					b.Fatalf("%d items", len(res.Actions))
				}
				dir, err := os.MkdirTemp("", "openssl-bench-")
				if err != nil {
					b.Fatal(err)
				}
				start = time.Now()
				openSSLCatalog(b, bin, dir, cat, kt)
				sslTime += time.Since(start)
				os.RemoveAll(dir) //nolint:errcheck
			}
			n := float64(b.N)
			b.ReportMetric(float64(goTime.Nanoseconds())/n, "go-ns/op")
			b.ReportMetric(float64(sslTime.Nanoseconds())/n, "openssl-ns/op")
			b.ReportMetric(float64(sslTime)/float64(goTime), "openssl/go")
			b.ReportMetric(float64(cat.NumItems()), "items")
			fmt.Fprintf(os.Stderr, "%s: %d items, Go %s, openssl %s per catalog (openssl/Go %.1fx)\n",
				kt, cat.NumItems(), time.Duration(float64(goTime)/n), time.Duration(float64(sslTime)/n), float64(sslTime)/float64(goTime))
		})
	}
}

// BenchmarkGoCatalogECDSA is the Go side alone, for plain ns/op.
func BenchmarkGoCatalogECDSA(b *testing.B) {
	set, _ := loadCatalog(b)
	for i := 0; i < b.N; i++ {
		if _, err := certs.Generate(set, certs.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGoCatalogRSA2048 is the Go side alone with RSA-2048 keys.
func BenchmarkGoCatalogRSA2048(b *testing.B) {
	set, _ := loadCatalog(b)
	for i := 0; i < b.N; i++ {
		if _, err := certs.Generate(set, certs.Options{KeyType: pki.RSA2048}); err != nil {
			b.Fatal(err)
		}
	}
}
