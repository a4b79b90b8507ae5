package pki

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"slices"
	"testing"
	"time"
)

// TestSignRules checks the one rule set for every key type and role.
func TestSignRules(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 890, time.UTC)
	env := Env{Now: func() time.Time { return now }}
	newKey := func(t *testing.T, kt string) crypto.Signer {
		t.Helper()
		if kt == "ed25519" {
			_, k, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		k, err := NewKey(KeyType(kt))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, kt := range []string{string(ECDSAP256), string(RSA2048), "ed25519"} {
		caKey := newKey(t, kt)
		ca, err := Sign(Spec{Subject: pkix.Name{CommonName: "ca"}, IsCA: true, Validity: time.Hour}, caKey, nil, env)
		if err != nil {
			t.Fatalf("%s CA: %v", kt, err)
		}
		tests := []struct {
			name      string
			spec      Spec
			wantUsage x509.KeyUsage
			wantExt   []x509.ExtKeyUsage
		}{
			{"CA", Spec{Subject: pkix.Name{CommonName: "ca"}, IsCA: true}, x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature, nil},
			{"server", Spec{Subject: pkix.Name{CommonName: "s"}, Server: true, Hosts: []string{"api.local", "10.0.0.1", "::1"}}, x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
			{"client", Spec{Subject: pkix.Name{CommonName: "c", Organization: []string{"system:masters"}}, Client: true}, x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
			{"both", Spec{Subject: pkix.Name{CommonName: "b"}, Server: true, Client: true, DNSNames: []string{"x"}, IPAddresses: []net.IP{net.ParseIP("10.0.0.2")}},
				x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
		}
		for _, tt := range tests {
			t.Run(kt+"/"+tt.name, func(t *testing.T) {
				tt.spec.Validity = 24 * time.Hour
				key := newKey(t, kt)
				issuer := ca
				if tt.spec.IsCA {
					issuer = nil
				}
				kp, err := Sign(tt.spec, key, issuer, env)
				if err != nil {
					t.Fatal(err)
				}
				c := kp.Cert
				want := tt.wantUsage
				if kt == string(RSA2048) && !tt.spec.IsCA {
					want |= x509.KeyUsageKeyEncipherment
				}
				if c.KeyUsage != want {
					t.Errorf("key usage %b, want %b", c.KeyUsage, want)
				}
				if !slices.Equal(c.ExtKeyUsage, tt.wantExt) {
					t.Errorf("extended key usage %v, want %v", c.ExtKeyUsage, tt.wantExt)
				}
				if !c.BasicConstraintsValid || c.IsCA != tt.spec.IsCA {
					t.Errorf("basic constraints valid=%v CA=%v", c.BasicConstraintsValid, c.IsCA)
				}
				if wantFrom := now.Truncate(time.Second).Add(-Backdate); !c.NotBefore.Equal(wantFrom) {
					t.Errorf("NotBefore %s, want %s", c.NotBefore, wantFrom)
				}
				if wantTo := now.Truncate(time.Second).Add(24 * time.Hour); !c.NotAfter.Equal(wantTo) {
					t.Errorf("NotAfter %s, want %s", c.NotAfter, wantTo)
				}
				if !bytes.Equal(c.SubjectKeyId, KeyID(key.Public())) || len(c.SubjectKeyId) != 20 {
					t.Errorf("subject key ID %x", c.SubjectKeyId)
				}
				if issuer != nil {
					if !bytes.Equal(c.AuthorityKeyId, ca.Cert.SubjectKeyId) {
						t.Errorf("authority key ID %x, want the CA's %x", c.AuthorityKeyId, ca.Cert.SubjectKeyId)
					}
					if err := c.CheckSignatureFrom(ca.Cert); err != nil {
						t.Errorf("not signed by the CA: %v", err)
					}
				}
				if tt.name == "server" {
					if !slices.Equal(c.DNSNames, []string{"api.local"}) || len(c.IPAddresses) != 2 || !c.IPAddresses[0].Equal(net.ParseIP("10.0.0.1")) {
						t.Errorf("hosts split into DNS %v and IPs %v", c.DNSNames, c.IPAddresses)
					}
				}
				if c.SerialNumber.Sign() <= 0 {
					t.Errorf("serial %s", c.SerialNumber)
				}
			})
		}
	}
}

func TestSignRefuses(t *testing.T) {
	key, err := NewKey(ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	for name, spec := range map[string]Spec{
		"no validity":    {Subject: pkix.Name{CommonName: "x"}, Server: true},
		"no usage":       {Subject: pkix.Name{CommonName: "x"}, Validity: time.Hour},
		"negative valid": {Subject: pkix.Name{CommonName: "x"}, IsCA: true, Validity: -time.Hour},
	} {
		if _, err := Sign(spec, key, nil, Env{}); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
}
