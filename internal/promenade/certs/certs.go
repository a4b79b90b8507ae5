// Package certs generates the PKI of a PKICatalog: certificate authorities,
// certificates and bare keypairs, as deckhand/* documents. Material already
// present in the configuration is reused while it still matches the
// catalog.
package certs

import (
	"crypto"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "github.com/airshipit/airship-go/api/promenade/v1"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/pki"
	"github.com/airshipit/airship-go/internal/promenade/docset"
)

// Defaults.
const (
	DefaultValidity    = 365 * 24 * time.Hour
	DefaultCAValidity  = 10 * 365 * 24 * time.Hour
	DefaultRenewBefore = 30 * 24 * time.Hour
)

// Options control generation.
type Options struct {
	// Validity of issued certificates (default one year).
	Validity time.Duration
	// CAValidity of generated CAs (default ten years).
	CAValidity time.Duration
	// RenewBefore: material expiring within this window is regenerated
	// (default 30 days).
	RenewBefore time.Duration
	// KeyType is the default key algorithm (default ECDSA P-256); the
	// catalog may override it per CA, certificate or keypair.
	KeyType pki.KeyType
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.Validity == 0 {
		o.Validity = DefaultValidity
	}
	if o.CAValidity == 0 {
		o.CAValidity = DefaultCAValidity
	}
	if o.RenewBefore == 0 {
		o.RenewBefore = DefaultRenewBefore
	}
	if o.KeyType == "" {
		o.KeyType = pki.ECDSAP256
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Action says what happened to one item of the catalog.
type Action struct {
	Kind   string // CertificateAuthority, Certificate or Keypair
	Name   string
	Reused bool
	Reason string // why it was (re)generated
}

// Result is the generated material.
type Result struct {
	Documents []docset.Document
	Actions   []Action
}

// Counts returns how many items were reused and generated.
func (r *Result) Counts() (reused, generated int) {
	for _, a := range r.Actions {
		if a.Reused {
			reused++
		} else {
			generated++
		}
	}
	return
}

// Catalog is the merged content of every PKICatalog document.
type Catalog struct {
	CAs      []CA
	Keypairs []v1.CatalogKeypair
}

// CA is a certificate authority with its certificates.
type CA struct {
	Name         string
	KeyType      string
	Certificates []v1.CatalogCertificate
}

// NumItems counts CAs, certificates and keypairs.
func (c *Catalog) NumItems() int {
	n := len(c.CAs) + len(c.Keypairs)
	for _, ca := range c.CAs {
		n += len(ca.Certificates)
	}
	return n
}

// ReadCatalog merges the PKICatalog documents of a set. A certificate
// naming a CA that no catalog defines, and names used twice, are errors.
func ReadCatalog(set *docset.Set) (*Catalog, error) {
	docs := set.All(v1.SchemaPKICatalog)
	if len(docs) == 0 {
		return nil, errors.New("the configuration has no promenade/PKICatalog/v1 document")
	}
	r := &catalogReader{cas: map[string]*CA{}, certOwner: map[string]string{}, kpOwner: map[string]string{}}
	for _, d := range docs {
		var cat v1.PKICatalog
		if err := d.DecodeInto(&cat); err != nil {
			return nil, err
		}
		r.addCAs(d.Ref(), cat.CertificateAuthorities)
		// Certificates listed outside a CA are placed once every catalog's
		// CAs are known.
		for _, c := range cat.Certificates {
			r.flat = append(r.flat, pendingCert{c, d.Ref()})
		}
		r.addKeypairs(d.Ref(), cat.Keypairs)
	}
	r.placeFlat()
	if len(r.errs) > 0 {
		return nil, errors.New(strings.Join(r.errs, "\n"))
	}
	out := &Catalog{Keypairs: r.keypairs}
	for _, n := range sortedKeys(r.cas) {
		out.CAs = append(out.CAs, *r.cas[n])
	}
	return out, nil
}

// catalogReader merges catalogs, collecting every problem found.
type catalogReader struct {
	errs []string
	cas  map[string]*CA
	// certOwner and kpOwner: certificate document_name or keypair name →
	// the document that defined it.
	certOwner, kpOwner map[string]string
	keypairs           []v1.CatalogKeypair
	flat               []pendingCert
}

// pendingCert is a certificate listed outside a CA, and its document.
type pendingCert struct {
	cert v1.CatalogCertificate
	doc  string
}

// addCAs merges one catalog's CAs, in name order, and the certificates
// listed under them.
func (r *catalogReader) addCAs(doc string, defs map[string]v1.CatalogCA) {
	for _, n := range sortedKeys(defs) {
		def := defs[n]
		ca, ok := r.cas[n]
		if !ok {
			ca = &CA{Name: n, KeyType: def.KeyType}
			r.cas[n] = ca
		} else if def.KeyType != "" && ca.KeyType != "" && def.KeyType != ca.KeyType {
			r.errs = append(r.errs, fmt.Sprintf("%s: CA %q key_type %s conflicts with %s in another catalog", doc, n, def.KeyType, ca.KeyType))
		} else if def.KeyType != "" {
			ca.KeyType = def.KeyType
		}
		for _, c := range def.Certificates {
			if c.CA != "" && c.CA != n {
				r.errs = append(r.errs, fmt.Sprintf("%s: certificate %q is listed under CA %q but names CA %q", doc, c.DocumentName, n, c.CA))
				continue
			}
			r.addCert(ca, c, doc)
		}
	}
}

// addCert gives the certificate to its CA unless its name is taken.
func (r *catalogReader) addCert(ca *CA, c v1.CatalogCertificate, doc string) {
	if prev, ok := r.certOwner[c.DocumentName]; ok {
		r.errs = append(r.errs, fmt.Sprintf("%s: certificate document_name %q is already used in %s", doc, c.DocumentName, prev))
		return
	}
	r.certOwner[c.DocumentName] = doc
	c.CA = ca.Name
	ca.Certificates = append(ca.Certificates, c)
}

// addKeypairs adds one catalog's keypairs; a name defined twice is a problem.
func (r *catalogReader) addKeypairs(doc string, kps []v1.CatalogKeypair) {
	for _, kp := range kps {
		if prev, ok := r.kpOwner[kp.Name]; ok {
			r.errs = append(r.errs, fmt.Sprintf("%s: keypair %q is already defined in %s", doc, kp.Name, prev))
			continue
		}
		r.kpOwner[kp.Name] = doc
		r.keypairs = append(r.keypairs, kp)
	}
}

// placeFlat gives each certificate listed outside a CA to the CA it names.
func (r *catalogReader) placeFlat() {
	for _, p := range r.flat {
		ca, ok := r.cas[p.cert.CA]
		if !ok {
			r.errs = append(r.errs, fmt.Sprintf("%s: certificate %q names CA %q, which no PKICatalog defines (defined: %s)",
				p.doc, p.cert.DocumentName, p.cert.CA, strings.Join(sortedKeys(r.cas), ", ")))
			continue
		}
		r.addCert(ca, p.cert, p.doc)
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Generate builds every CA, certificate and keypair of the catalog,
// reusing matching material found in the set.
func Generate(set *docset.Set, opts Options) (*Result, error) {
	opts.defaults()
	cat, err := ReadCatalog(set)
	if err != nil {
		return nil, err
	}
	g := &generator{set: set, opts: opts, now: opts.Now()}
	if err := g.prepareKeys(cat); err != nil {
		return nil, err
	}
	res := &Result{}
	for _, ca := range cat.CAs {
		kt := pki.KeyType(firstNonEmpty(ca.KeyType, string(opts.KeyType)))
		caPair, act, err := g.ca(ca.Name, kt)
		if err != nil {
			return nil, err
		}
		res.Actions = append(res.Actions, act)
		if err := g.addPair(res, v1.SchemaCertificateAuthority, v1.SchemaCertificateAuthorityKey, ca.Name, caPair); err != nil {
			return nil, err
		}
		for _, c := range ca.Certificates {
			ckt := pki.KeyType(firstNonEmpty(c.KeyType, ca.KeyType, string(opts.KeyType)))
			pair, act, err := g.cert(c, caPair, ckt)
			if err != nil {
				return nil, err
			}
			res.Actions = append(res.Actions, act)
			if err := g.addPair(res, v1.SchemaCertificate, v1.SchemaCertificateKey, c.DocumentName, pair); err != nil {
				return nil, err
			}
		}
	}
	for _, kp := range cat.Keypairs {
		kt := pki.KeyType(firstNonEmpty(kp.KeyType, string(opts.KeyType)))
		key, act, err := g.keypair(kp.Name, kt)
		if err != nil {
			return nil, err
		}
		res.Actions = append(res.Actions, act)
		pubPEM, err := pki.PublicKeyPEM(key.Public())
		if err != nil {
			return nil, err
		}
		keyPEM, err := pki.KeyPEM(key)
		if err != nil {
			return nil, err
		}
		for _, d := range []struct{ schema, data string }{{v1.SchemaPublicKey, string(pubPEM)}, {v1.SchemaPrivateKey, string(keyPEM)}} {
			doc, err := docset.NewDocument(d.schema, kp.Name, d.data)
			if err != nil {
				return nil, err
			}
			res.Documents = append(res.Documents, doc)
		}
	}
	return res, nil
}

type generator struct {
	set  *docset.Set
	opts Options
	now  time.Time
	pool map[pki.KeyType][]crypto.Signer
}

func (g *generator) addPair(res *Result, certSchema, keySchema, name string, kp *pki.KeyPair) error {
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return err
	}
	for _, d := range []struct{ schema, data string }{{certSchema, string(kp.CertPEM())}, {keySchema, string(keyPEM)}} {
		doc, err := docset.NewDocument(d.schema, name, d.data)
		if err != nil {
			return err
		}
		res.Documents = append(res.Documents, doc)
	}
	return nil
}

// existing returns the material of the named pair in the set, or a reason
// it cannot be used.
func (g *generator) existing(certSchema, keySchema, name string) (*pki.KeyPair, string) {
	certPEM := g.set.PEM(certSchema, name)
	keyPEM := g.set.PEM(keySchema, name)
	switch {
	case certPEM == "" && keyPEM == "":
		return nil, "new"
	case certPEM == "":
		return nil, "no " + certSchema + " document"
	case keyPEM == "":
		return nil, "no " + keySchema + " document"
	}
	kp, err := pki.Parse([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		return nil, "existing material unusable: " + err.Error()
	}
	return kp, ""
}

func (g *generator) expiring(c *x509.Certificate) string {
	if g.now.Add(g.opts.RenewBefore).After(c.NotAfter) {
		return fmt.Sprintf("expires %s, within the renewal window of %s", c.NotAfter.UTC().Format(time.RFC3339), g.opts.RenewBefore)
	}
	if g.now.Before(c.NotBefore) {
		return "not valid yet"
	}
	return ""
}

// caCheck returns the reusable CA, or nil and why it must be generated.
func (g *generator) caCheck(name string, kt pki.KeyType) (*pki.KeyPair, string) {
	kp, reason := g.existing(v1.SchemaCertificateAuthority, v1.SchemaCertificateAuthorityKey, name)
	if kp == nil {
		return nil, reason
	}
	switch {
	case !kp.Cert.IsCA:
		reason = "existing certificate is not a CA"
	case kp.Cert.Subject.CommonName != name:
		reason = fmt.Sprintf("existing CA has CN %q", kp.Cert.Subject.CommonName)
	case pki.KeyTypeOf(kp.Key) != kt:
		reason = fmt.Sprintf("existing key is %s, want %s", pki.KeyTypeOf(kp.Key), kt)
	default:
		reason = g.expiring(kp.Cert)
	}
	if reason != "" {
		return nil, reason
	}
	return kp, ""
}

func (g *generator) ca(name string, kt pki.KeyType) (*pki.KeyPair, Action, error) {
	act := Action{Kind: "CertificateAuthority", Name: name}
	kp, reason := g.caCheck(name, kt)
	if kp != nil {
		act.Reused = true
		return kp, act, nil
	}
	act.Reason = reason
	kp, err := g.issue(nil, name, nil, nil, kt, g.opts.CAValidity)
	return kp, act, err
}

// certCheck returns the reusable certificate, or nil and why it must be
// generated.
func (g *generator) certCheck(c v1.CatalogCertificate, ca *pki.KeyPair, kt pki.KeyType) (*pki.KeyPair, string) {
	kp, reason := g.existing(v1.SchemaCertificate, v1.SchemaCertificateKey, c.DocumentName)
	if kp == nil {
		return nil, reason
	}
	if reason = g.mismatch(kp, c, certHosts(c), ca, kt); reason != "" {
		return nil, reason
	}
	return kp, ""
}

func certHosts(c v1.CatalogCertificate) []string {
	return append(append([]string(nil), c.Hosts...), c.KubernetesServiceNames...)
}

func (g *generator) cert(c v1.CatalogCertificate, ca *pki.KeyPair, kt pki.KeyType) (*pki.KeyPair, Action, error) {
	act := Action{Kind: "Certificate", Name: c.DocumentName}
	kp, reason := g.certCheck(c, ca, kt)
	if kp != nil {
		act.Reused = true
		return kp, act, nil
	}
	act.Reason = reason
	kp, err := g.issue(ca, c.CommonName, c.Groups, certHosts(c), kt, g.opts.Validity)
	return kp, act, err
}

func (g *generator) mismatch(kp *pki.KeyPair, c v1.CatalogCertificate, hosts []string, ca *pki.KeyPair, kt pki.KeyType) string {
	cert := kp.Cert
	if err := cert.CheckSignatureFrom(ca.Cert); err != nil {
		return "not signed by the current CA " + c.CA
	}
	if cert.Subject.CommonName != c.CommonName {
		return fmt.Sprintf("CN is %q, want %q", cert.Subject.CommonName, c.CommonName)
	}
	if !sameSet(cert.Subject.Organization, c.Groups) {
		return fmt.Sprintf("groups are %v, want %v", cert.Subject.Organization, c.Groups)
	}
	dns, ips := pki.SplitHosts(hosts)
	var haveIPs []string
	for _, ip := range cert.IPAddresses {
		haveIPs = append(haveIPs, ip.String())
	}
	var wantIPs []string
	for _, ip := range ips {
		wantIPs = append(wantIPs, ip.String())
	}
	if !sameSet(cert.DNSNames, dns) || !sameSet(haveIPs, wantIPs) {
		return fmt.Sprintf("hosts are %v, want %v", append(append([]string(nil), cert.DNSNames...), haveIPs...), hosts)
	}
	if pki.KeyTypeOf(kp.Key) != kt {
		return fmt.Sprintf("existing key is %s, want %s", pki.KeyTypeOf(kp.Key), kt)
	}
	return g.expiring(cert)
}

func (g *generator) keypair(name string, kt pki.KeyType) (crypto.Signer, Action, error) {
	act := Action{Kind: "Keypair", Name: name}
	key, reason := g.keypairCheck(name, kt)
	if key != nil {
		act.Reused = true
		return key, act, nil
	}
	act.Reason = reason
	key, err := g.newKey(kt)
	return key, act, err
}

// keypairCheck returns the reusable key, or nil and why it must be generated.
func (g *generator) keypairCheck(name string, kt pki.KeyType) (crypto.Signer, string) {
	privPEM := g.set.PEM(v1.SchemaPrivateKey, name)
	pubPEM := g.set.PEM(v1.SchemaPublicKey, name)
	reason := "new"
	if privPEM != "" || pubPEM != "" {
		key, err := pki.ParseKey([]byte(privPEM))
		if err != nil {
			reason = "existing private key unusable: " + err.Error()
		} else if pub, err := parsePublicKey(pubPEM); err != nil {
			reason = "existing public key unusable: " + err.Error()
		} else if eq, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(pub) {
			reason = "public key does not match private key"
		} else if pki.KeyTypeOf(key) != kt {
			reason = fmt.Sprintf("existing key is %s, want %s", pki.KeyTypeOf(key), kt)
		} else {
			return key, ""
		}
	}
	return nil, reason
}

// prepareKeys counts the RSA keys the run will generate and generates them
// in parallel up front: RSA key generation dominates an RSA catalog, and
// signing stays sequential. ECDSA keys take microseconds and are made in
// order, which keeps runs under a fixed random source reproducible.
func (g *generator) prepareKeys(cat *Catalog) error {
	need := map[pki.KeyType]int{}
	for _, ca := range cat.CAs {
		kt := pki.KeyType(firstNonEmpty(ca.KeyType, string(g.opts.KeyType)))
		caPair, _ := g.caCheck(ca.Name, kt)
		if caPair == nil {
			need[kt]++
		}
		for _, c := range ca.Certificates {
			ckt := pki.KeyType(firstNonEmpty(c.KeyType, ca.KeyType, string(g.opts.KeyType)))
			if caPair == nil {
				need[ckt]++
			} else if kp, _ := g.certCheck(c, caPair, ckt); kp == nil {
				need[ckt]++
			}
		}
	}
	for _, kp := range cat.Keypairs {
		kt := pki.KeyType(firstNonEmpty(kp.KeyType, string(g.opts.KeyType)))
		if key, _ := g.keypairCheck(kp.Name, kt); key == nil {
			need[kt]++
		}
	}
	g.pool = map[pki.KeyType][]crypto.Signer{}
	for kt, n := range need {
		if kt != pki.RSA2048 && kt != pki.RSA4096 {
			continue
		}
		keys := make([]crypto.Signer, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		next := make(chan int)
		for w := 0; w < runtime.GOMAXPROCS(0); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					keys[i], errs[i] = pki.NewKey(kt)
				}
			}()
		}
		for i := 0; i < n; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		g.pool[kt] = keys
	}
	return nil
}

// newKey takes a prepared key or generates one.
func (g *generator) newKey(kt pki.KeyType) (crypto.Signer, error) {
	if keys := g.pool[kt]; len(keys) > 0 {
		g.pool[kt] = keys[1:]
		return keys[0], nil
	}
	return pki.NewKey(kt)
}

func parsePublicKey(s string) (crypto.PublicKey, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		return nil, errors.New("no PEM block")
	}
	return x509.ParsePKIXPublicKey(b.Bytes)
}

// issue makes a CA (ca == nil) or a certificate signed by ca, by
// pki.Sign's rules. Every certificate gets both server and client usage,
// as the catalog does not say which a component needs.
func (g *generator) issue(ca *pki.KeyPair, cn string, groups, hosts []string, kt pki.KeyType, validity time.Duration) (*pki.KeyPair, error) {
	key, err := g.newKey(kt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cn, err)
	}
	spec := pki.Spec{Subject: pkix.Name{CommonName: cn, Organization: groups}, Validity: validity}
	if ca == nil {
		spec.IsCA = true
	} else {
		spec.Hosts, spec.Server, spec.Client = hosts, true, true
	}
	return pki.Sign(spec, key, ca, pki.Env{Now: func() time.Time { return g.now }})
}

func sameSet(a, b []string) bool {
	x := append([]string(nil), a...)
	y := append([]string(nil), b...)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Write writes certificates.yaml (0600: it holds private keys) into dir,
// and each item as PEM files under dir/pki: <name>.pem (0644) and
// <name>-key.pem (0600), ca-<name>.pem for CAs, <name>.pub for public keys.
func Write(dir string, res *Result) error {
	out, err := docset.MarshalYAML(res.Documents)
	if err != nil {
		return err
	}
	if err := fileutil.WriteAtomic(filepath.Join(dir, "certificates.yaml"), out, 0o600); err != nil {
		return err
	}
	for _, d := range res.Documents {
		var data string
		if err := d.DecodeInto(&data); err != nil {
			return err
		}
		var name string
		mode := modePublic
		switch d.Schema {
		case v1.SchemaCertificateAuthority:
			name = "ca-" + d.Metadata.Name + ".pem"
		case v1.SchemaCertificateAuthorityKey:
			name, mode = "ca-"+d.Metadata.Name+"-key.pem", modePrivate
		case v1.SchemaCertificate:
			name = d.Metadata.Name + ".pem"
		case v1.SchemaCertificateKey, v1.SchemaPrivateKey:
			name, mode = d.Metadata.Name+"-key.pem", modePrivate
		case v1.SchemaPublicKey:
			name = d.Metadata.Name + ".pub"
		default:
			continue
		}
		if err := fileutil.WriteAtomic(filepath.Join(dir, "pki", name), []byte(data), mode); err != nil {
			return err
		}
	}
	return nil
}

const (
	modePublic  os.FileMode = 0o644
	modePrivate os.FileMode = 0o600
)
