package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/airshipit/airship-go/internal/fileutil"
)

// KeyType names the algorithm of a generated private key.
type KeyType string

const (
	// ECDSAP256 is an ECDSA key on the NIST P-256 curve (the default).
	ECDSAP256 KeyType = "ecdsa-p256"
	// RSA2048 is a 2048-bit RSA key.
	RSA2048 KeyType = "rsa-2048"
	// RSA4096 is a 4096-bit RSA key.
	RSA4096 KeyType = "rsa-4096"
)

// DefaultValidity is how long issued certificates stay valid unless a
// request says otherwise.
const DefaultValidity = 365 * 24 * time.Hour

// KeyPair is a certificate and the private key it certifies.
type KeyPair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// Request describes a certificate to issue.
type Request struct {
	// CommonName becomes the subject CN (the user name for Kubernetes).
	CommonName string
	// Organizations become the subject O (the groups for Kubernetes).
	Organizations []string
	// Hosts are DNS names or IP addresses; each is put into the matching SAN list.
	Hosts []string
	// Server and Client choose the extended key usages.
	Server, Client bool
	// Validity defaults to DefaultValidity.
	Validity time.Duration
	// KeyType defaults to ECDSAP256.
	KeyType KeyType
}

// NewKey generates a private key of the given type.
func NewKey(t KeyType) (crypto.Signer, error) {
	switch t {
	case "", ECDSAP256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case RSA2048:
		return rsa.GenerateKey(rand.Reader, 2048)
	case RSA4096:
		return rsa.GenerateKey(rand.Reader, 4096)
	default:
		return nil, fmt.Errorf("unknown key type %q (want %s, %s or %s)", t, ECDSAP256, RSA2048, RSA4096)
	}
}

// Backdate is how far before the time of issue a certificate becomes
// valid, so that a peer whose clock runs a little behind accepts it.
const Backdate = 5 * time.Minute

// Spec is a certificate for Sign to issue. Every certificate the project
// makes (local control plane, site PKI, the Templater's functions) goes
// through Sign, so they all follow one set of rules:
//
//   - a CA: basic constraints CA:TRUE, key usage certSign, cRLSign and
//     digitalSignature, no extended key usage;
//   - a leaf: basic constraints CA:FALSE, key usage digitalSignature, plus
//     keyEncipherment for an RSA key only (an ECDSA or Ed25519 key cannot
//     encipher), extended key usage serverAuth and/or clientAuth;
//   - valid from Backdate before the time of issue (whole seconds) for
//     Validity; a random 128-bit serial; the subject key ID is the first
//     20 bytes of the SHA-256 of the public key, the authority key ID the
//     issuer's subject key ID;
//   - Hosts are split by SplitHosts: IP addresses into IPAddresses, the rest
//     into DNSNames.
type Spec struct {
	Subject pkix.Name
	// Hosts are DNS names and IP addresses, in any mix.
	Hosts []string
	// DNSNames and IPAddresses are added as given, after Hosts.
	DNSNames    []string
	IPAddresses []net.IP
	IsCA        bool
	// Server and Client choose the extended key usages of a leaf.
	Server, Client bool
	// Validity must be positive.
	Validity time.Duration
}

// Env is where Sign draws randomness and the time from; the zero Env uses
// crypto/rand and the clock. The Templater passes its own for repeatable
// renders.
type Env struct {
	Rand io.Reader
	Now  func() time.Time
}

// Reader is the source of randomness: Rand, or crypto/rand.
func (e Env) Reader() io.Reader {
	if e.Rand == nil {
		return rand.Reader
	}
	return e.Rand
}

// Time is the current time: Now(), or the clock.
func (e Env) Time() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// Sign issues a certificate for key as spec says, signed by ca, or
// self-signed when ca is nil.
func Sign(spec Spec, key crypto.Signer, ca *KeyPair, env Env) (*KeyPair, error) {
	cn := spec.Subject.CommonName
	if spec.Validity <= 0 {
		return nil, fmt.Errorf("certificate %q: validity must be positive", cn)
	}
	if !spec.IsCA && !spec.Server && !spec.Client {
		return nil, fmt.Errorf("certificate %q: request neither server nor client usage", cn)
	}
	serial, err := randomSerial(env.Reader())
	if err != nil {
		return nil, err
	}
	now := env.Time().Truncate(time.Second)
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               spec.Subject,
		NotBefore:             now.Add(-Backdate),
		NotAfter:              now.Add(spec.Validity),
		BasicConstraintsValid: true,
		IsCA:                  spec.IsCA,
		SubjectKeyId:          KeyID(key.Public()),
	}
	tmpl.DNSNames, tmpl.IPAddresses = SplitHosts(spec.Hosts)
	tmpl.DNSNames = append(tmpl.DNSNames, spec.DNSNames...)
	tmpl.IPAddresses = append(tmpl.IPAddresses, spec.IPAddresses...)
	if spec.IsCA {
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		if _, ok := key.(*rsa.PrivateKey); ok {
			tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
		}
		if spec.Server {
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		}
		if spec.Client {
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
		}
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.Cert, ca.Key
		tmpl.AuthorityKeyId = ca.Cert.SubjectKeyId
	}
	der, err := x509.CreateCertificate(env.Reader(), tmpl, parent, key.Public(), signer)
	if err != nil {
		return nil, fmt.Errorf("signing certificate %q: %w", cn, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing certificate %q: %w", cn, err)
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// SplitHosts separates IP addresses from DNS names.
func SplitHosts(hosts []string) (dns []string, ips []net.IP) {
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, h)
		}
	}
	return dns, ips
}

// KeyTypeOf names the algorithm of a key ("" when it is none of KeyType's).
func KeyTypeOf(k crypto.Signer) KeyType {
	switch key := k.(type) {
	case *ecdsa.PrivateKey:
		if key.Curve == elliptic.P256() {
			return ECDSAP256
		}
	case *rsa.PrivateKey:
		switch key.N.BitLen() {
		case 2048:
			return RSA2048
		case 4096:
			return RSA4096
		}
	}
	return ""
}

// NewCA creates a self-signed certificate authority on a new key.
func NewCA(commonName string, validity time.Duration, keyType KeyType) (*KeyPair, error) {
	key, err := NewKey(keyType)
	if err != nil {
		return nil, fmt.Errorf("generating key for CA %q: %w", commonName, err)
	}
	if validity == 0 {
		validity = 10 * DefaultValidity
	}
	return Sign(Spec{Subject: pkix.Name{CommonName: commonName}, IsCA: true, Validity: validity}, key, nil, Env{})
}

// Issue creates a certificate on a new key, signed by the CA.
func (ca *KeyPair) Issue(req Request) (*KeyPair, error) {
	if req.CommonName == "" {
		return nil, errors.New("certificate request has no common name")
	}
	if !req.Server && !req.Client {
		return nil, fmt.Errorf("certificate %q: request neither server nor client usage", req.CommonName)
	}
	key, err := NewKey(req.KeyType)
	if err != nil {
		return nil, fmt.Errorf("generating key for %q: %w", req.CommonName, err)
	}
	validity := req.Validity
	if validity == 0 {
		validity = DefaultValidity
	}
	return Sign(Spec{
		Subject: pkix.Name{CommonName: req.CommonName, Organization: req.Organizations},
		Hosts:   req.Hosts, Server: req.Server, Client: req.Client, Validity: validity,
	}, key, ca, Env{})
}

// CertPEM returns the certificate PEM-encoded.
func (kp *KeyPair) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: kp.Cert.Raw})
}

// KeyPEM returns the private key PEM-encoded as PKCS#8.
func (kp *KeyPair) KeyPEM() ([]byte, error) {
	return KeyPEM(kp.Key)
}

// KeyPEM encodes a private key as PKCS#8 PEM.
func KeyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// PublicKeyPEM encodes a public key as PKIX PEM.
func PublicKeyPEM(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("encoding public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// WriteFiles writes <base>.crt (0644) and <base>.key (0600) into dir.
func (kp *KeyPair) WriteFiles(dir, base string) error {
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return err
	}
	if err := fileutil.WriteAtomic(filepath.Join(dir, base+".crt"), kp.CertPEM(), 0o644); err != nil {
		return err
	}
	return fileutil.WriteAtomic(filepath.Join(dir, base+".key"), keyPEM, 0o600)
}

// Load reads <base>.crt and <base>.key from dir.
func Load(dir, base string) (*KeyPair, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, base+".crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, base+".key"))
	if err != nil {
		return nil, err
	}
	return Parse(certPEM, keyPEM)
}

// Parse decodes a PEM certificate and PEM private key and checks they belong together.
func Parse(certPEM, keyPEM []byte) (*KeyPair, error) {
	cb, _ := pem.Decode(certPEM)
	if cb == nil || cb.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM CERTIFICATE block found")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing certificate: %w", err)
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return nil, fmt.Errorf("private key does not match certificate %q", cert.Subject.CommonName)
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// ParseKey decodes a PEM private key in PKCS#8, PKCS#1 or SEC 1 form.
func ParseKey(keyPEM []byte) (crypto.Signer, error) {
	kb, _ := pem.Decode(keyPEM)
	if kb == nil {
		return nil, errors.New("no PEM private key block found")
	}
	if k, err := x509.ParsePKCS8PrivateKey(kb.Bytes); err == nil {
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported private key type %T", k)
		}
		return s, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(kb.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(kb.Bytes); err == nil {
		return k, nil
	}
	return nil, fmt.Errorf("cannot parse %s block as a private key", kb.Type)
}

// randomSerial draws a positive 128-bit serial number.
func randomSerial(r io.Reader) (*big.Int, error) {
	n, err := rand.Int(r, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// KeyID is the subject key identifier of a public key: the first 20 bytes
// of the SHA-256 of its PKIX encoding.
func KeyID(pub crypto.PublicKey) []byte {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(der)
	return sum[:20]
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	ea, ok := a.(equaler)
	return ok && ea.Equal(b)
}
