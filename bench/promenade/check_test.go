package promenade

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/promenade/certs"
)

// checkCatalog reads back what one side wrote under dir/pki and checks it
// is the catalog: exactly the expected files; every CA self-signed, a CA,
// for ten years; every certificate chaining to its CA for server and
// client use, with the catalog's CN, groups and SANs, for a year; every
// private key matching its certificate or public key; every key of type
// kt. Go's output and openssl's go through the same checks.
func checkCatalog(dir string, cat *certs.Catalog, kt pki.KeyType) error {
	out := filepath.Join(dir, "pki")
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	var want []string
	load := func(name string) *pki.KeyPair {
		want = append(want, name+".pem", name+"-key.pem")
		certPEM, err1 := os.ReadFile(filepath.Join(out, name+".pem"))
		keyPEM, err2 := os.ReadFile(filepath.Join(out, name+"-key.pem"))
		if err := errors.Join(err1, err2); err != nil {
			bad(name, "%v", err)
			return nil
		}
		kp, err := pki.Parse(certPEM, keyPEM)
		if err != nil {
			bad(name, "%v", err)
			return nil
		}
		if got := pki.KeyTypeOf(kp.Key); got != kt {
			bad(name, "key type %q, want %q", got, kt)
		}
		return kp
	}
	validFor := func(name string, c *x509.Certificate, d time.Duration) {
		if got := c.NotAfter.Sub(c.NotBefore); got < d || got > d+24*time.Hour {
			bad(name, "valid for %s, want %s", got, d)
		}
	}
	for _, ca := range cat.CAs {
		name := "ca-" + ca.Name
		caPair := load(name)
		if caPair == nil {
			continue
		}
		c := caPair.Cert
		if !c.IsCA || !c.BasicConstraintsValid || c.Subject.CommonName != ca.Name {
			bad(name, "IsCA %v, CN %q", c.IsCA, c.Subject.CommonName)
		}
		if want := x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature; c.KeyUsage != want {
			bad(name, "key usage %b, want %b", c.KeyUsage, want)
		}
		if err := c.CheckSignatureFrom(c); err != nil {
			bad(name, "not self-signed: %v", err)
		}
		validFor(name, c, certs.DefaultCAValidity)
		roots := x509.NewCertPool()
		roots.AddCert(c)
		for _, cc := range ca.Certificates {
			kp := load(cc.DocumentName)
			if kp == nil {
				continue
			}
			leaf := kp.Cert
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
				bad(cc.DocumentName, "does not chain to %s for server and client use: %v", name, err)
			}
			if leaf.IsCA {
				bad(cc.DocumentName, "is a CA")
			}
			if leaf.Subject.CommonName != cc.CommonName || !slices.Equal(leaf.Subject.Organization, cc.Groups) {
				bad(cc.DocumentName, "subject CN %q O %v, want CN %q O %v", leaf.Subject.CommonName, leaf.Subject.Organization, cc.CommonName, cc.Groups)
			}
			var sans []string
			sans = append(sans, leaf.DNSNames...)
			for _, ip := range leaf.IPAddresses {
				sans = append(sans, ip.String())
			}
			var hosts []string
			for _, h := range append(append([]string(nil), cc.Hosts...), cc.KubernetesServiceNames...) {
				if ip := net.ParseIP(h); ip != nil {
					h = ip.String()
				}
				hosts = append(hosts, h)
			}
			slices.Sort(sans)
			slices.Sort(hosts)
			if !slices.Equal(sans, hosts) {
				bad(cc.DocumentName, "SANs %v, want %v", sans, hosts)
			}
			usage := x509.KeyUsageDigitalSignature
			if kt == pki.RSA2048 {
				usage |= x509.KeyUsageKeyEncipherment
			}
			if leaf.KeyUsage != usage {
				bad(cc.DocumentName, "key usage %b, want %b", leaf.KeyUsage, usage)
			}
			validFor(cc.DocumentName, leaf, certs.DefaultValidity)
		}
	}
	for _, kp := range cat.Keypairs {
		want = append(want, kp.Name+"-key.pem", kp.Name+".pub")
		keyPEM, err1 := os.ReadFile(filepath.Join(out, kp.Name+"-key.pem"))
		pubPEM, err2 := os.ReadFile(filepath.Join(out, kp.Name+".pub"))
		if err := errors.Join(err1, err2); err != nil {
			bad(kp.Name, "%v", err)
			continue
		}
		key, err := pki.ParseKey(keyPEM)
		if err != nil {
			bad(kp.Name, "%v", err)
			continue
		}
		if got := pki.KeyTypeOf(key); got != kt {
			bad(kp.Name, "key type %q, want %q", got, kt)
		}
		blk, _ := pem.Decode(pubPEM)
		if blk == nil {
			bad(kp.Name+".pub", "no PEM block")
			continue
		}
		pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			bad(kp.Name+".pub", "%v", err)
			continue
		}
		if e, ok := pub.(interface{ Equal(crypto.PublicKey) bool }); !ok || !e.Equal(key.Public()) {
			bad(kp.Name+".pub", "is not the public half of %s-key.pem", kp.Name)
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		errs = append(errs, fmt.Errorf("%s holds %v, want %v", out, got, want))
	}
	return errors.Join(errs...)
}
