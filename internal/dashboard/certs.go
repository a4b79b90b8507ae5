package dashboard

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"time"

	promv1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/promenade/certs"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

// expiringWithin is when a certificate counts as expiring.
const expiringWithin = 30 * 24 * time.Hour

// certList is every CA and certificate of the site's PKICatalog (the
// Promenade documents in PKIConfigDir) and of its PKI (certificates.yaml
// in PKIDir), with the expiry of those generated. Only certificates are
// read: keys are never parsed or shown.
func (s *Server) certList() []Certificate {
	var paths []string
	if s.opts.PKIConfigDir != "" {
		m, _ := filepath.Glob(filepath.Join(s.opts.PKIConfigDir, "*.yaml"))
		paths = append(paths, m...)
	}
	if s.opts.PKIDir != "" {
		p := filepath.Join(s.opts.PKIDir, "certificates.yaml")
		if _, err := os.Stat(p); err == nil {
			paths = append(paths, p)
		}
	}
	out := []Certificate{}
	if len(paths) == 0 {
		return out
	}
	set, err := docset.Load(paths...)
	if err != nil {
		return out
	}
	now := s.opts.Now()
	seen := map[string]bool{}
	add := func(c Certificate, schema string) {
		if p := set.PEM(schema, c.Name); p != "" {
			if crt, err := parseCert(p); err == nil {
				c.Generated = true
				c.NotAfter = crt.NotAfter.UTC()
				c.Subject = crt.Subject.CommonName
				if len(c.Hosts) == 0 {
					c.Hosts = append(crt.DNSNames, ipStrings(crt)...)
				}
				c.DaysLeft = int(crt.NotAfter.Sub(now).Hours() / 24)
				if crt.NotAfter.Sub(now) < 0 {
					c.DaysLeft = -int(now.Sub(crt.NotAfter).Hours()/24) - 1
				}
				c.Expiring = crt.NotAfter.Sub(now) < expiringWithin
			}
		}
		seen[schema+"/"+c.Name] = true
		out = append(out, c)
	}
	if cat, err := certs.ReadCatalog(set); err == nil {
		for _, ca := range cat.CAs {
			add(Certificate{Name: ca.Name, Kind: "CertificateAuthority"}, promv1.SchemaCertificateAuthority)
			for _, c := range ca.Certificates {
				add(Certificate{Name: c.DocumentName, Kind: "Certificate", CA: ca.Name, Subject: c.CommonName, Hosts: c.Hosts}, promv1.SchemaCertificate)
			}
		}
	}
	// Material generated for catalog entries since removed is still listed.
	for _, sc := range []struct{ schema, kind string }{{promv1.SchemaCertificateAuthority, "CertificateAuthority"}, {promv1.SchemaCertificate, "Certificate"}} {
		for _, d := range set.All(sc.schema) {
			if !seen[sc.schema+"/"+d.Metadata.Name] {
				add(Certificate{Name: d.Metadata.Name, Kind: sc.kind}, sc.schema)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Generated != b.Generated {
			return a.Generated
		}
		if !a.NotAfter.Equal(b.NotAfter) {
			return a.NotAfter.Before(b.NotAfter)
		}
		return a.Name < b.Name
	})
	return out
}

func parseCert(p string) (*x509.Certificate, error) {
	b, _ := pem.Decode([]byte(p))
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}

func ipStrings(c *x509.Certificate) []string {
	var out []string
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}

func (s *Server) certificates(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.certList())
}

// info is GET /api/info.
func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	in := Info{Site: s.opts.Site.Site.Name, Context: s.opts.Context, AllowActions: s.opts.AllowActions, Version: s.opts.Version, Plans: []string{}}
	if pls, err := s.opts.Site.Plans(); err == nil {
		for _, p := range pls {
			in.Plans = append(in.Plans, p.API.Name)
		}
	}
	writeJSON(w, http.StatusOK, in)
}
