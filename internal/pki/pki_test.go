package pki

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIssueVerifiesAgainstCA(t *testing.T) {
	tests := []struct {
		name      string
		req       Request
		usage     x509.ExtKeyUsage
		wantDNS   []string
		wantIPs   []string
		wantOrgs  []string
		rsaBits   int
		verifyDNS string
	}{
		{
			name:      "server with IP and DNS SANs",
			req:       Request{CommonName: "kube-apiserver", Hosts: []string{"127.0.0.1", "localhost", "10.0.0.1", "kubernetes.default.svc"}, Server: true},
			usage:     x509.ExtKeyUsageServerAuth,
			wantDNS:   []string{"localhost", "kubernetes.default.svc"},
			wantIPs:   []string{"127.0.0.1", "10.0.0.1"},
			verifyDNS: "kubernetes.default.svc",
		},
		{
			name:     "client with groups",
			req:      Request{CommonName: "admin", Organizations: []string{"system:masters"}, Client: true},
			usage:    x509.ExtKeyUsageClientAuth,
			wantOrgs: []string{"system:masters"},
		},
		{
			name:    "rsa client",
			req:     Request{CommonName: "rsa", Client: true, KeyType: RSA2048},
			usage:   x509.ExtKeyUsageClientAuth,
			rsaBits: 2048,
		},
	}
	ca, err := NewCA("test-ca", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := ca.Issue(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			pool := x509.NewCertPool()
			pool.AddCert(ca.Cert)
			if _, err := kp.Cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{tt.usage}, DNSName: tt.verifyDNS}); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if !slices.Equal(kp.Cert.DNSNames, tt.wantDNS) {
				t.Errorf("DNS SANs = %v, want %v", kp.Cert.DNSNames, tt.wantDNS)
			}
			var ips []string
			for _, ip := range kp.Cert.IPAddresses {
				ips = append(ips, ip.String())
			}
			if !slices.Equal(ips, tt.wantIPs) {
				t.Errorf("IP SANs = %v, want %v", ips, tt.wantIPs)
			}
			if !slices.Equal(kp.Cert.Subject.Organization, tt.wantOrgs) {
				t.Errorf("O = %v, want %v", kp.Cert.Subject.Organization, tt.wantOrgs)
			}
			switch k := kp.Key.(type) {
			case *rsa.PrivateKey:
				if k.N.BitLen() != tt.rsaBits {
					t.Errorf("RSA bits = %d, want %d", k.N.BitLen(), tt.rsaBits)
				}
			case *ecdsa.PrivateKey:
				if tt.rsaBits != 0 {
					t.Errorf("got ECDSA key, want RSA %d", tt.rsaBits)
				}
			}
			if got := time.Until(kp.Cert.NotAfter); got < DefaultValidity-time.Hour || got > DefaultValidity+time.Hour {
				t.Errorf("validity %v, want about %v", got, DefaultValidity)
			}
		})
	}
}

func TestIssueRejectsBadRequests(t *testing.T) {
	ca, err := NewCA("test-ca", 0, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]Request{
		"no common name": {Server: true},
		"no usage":       {CommonName: "x"},
		"bad key type":   {CommonName: "x", Client: true, KeyType: "dsa"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ca.Issue(req); err == nil {
				t.Fatal("want error")
			}
		})
	}
}

func TestWriteFilesModesAndRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA("ca", time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.WriteFiles(dir, "ca"); err != nil {
		t.Fatal(err)
	}
	for file, mode := range map[string]os.FileMode{"ca.crt": 0o644, "ca.key": 0o600} {
		st, err := os.Stat(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s mode = %v, want %v", file, st.Mode().Perm(), mode)
		}
	}
	back, err := Load(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	if !back.Cert.Equal(ca.Cert) {
		t.Error("loaded certificate differs")
	}

	other, err := NewCA("other", time.Hour, "")
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := other.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(ca.CertPEM(), otherKey); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("mismatched key: got %v, want a 'does not match' error", err)
	}
}
