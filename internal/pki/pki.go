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

// NewCA creates a self-signed certificate authority.
func NewCA(commonName string, validity time.Duration, keyType KeyType) (*KeyPair, error) {
	key, err := NewKey(keyType)
	if err != nil {
		return nil, fmt.Errorf("generating key for CA %q: %w", commonName, err)
	}
	if validity == 0 {
		validity = 10 * DefaultValidity
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		SubjectKeyId:          keyID(key.Public()),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("signing CA %q: %w", commonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA %q: %w", commonName, err)
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// Issue creates a certificate signed by the CA.
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
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:   serial,
		Subject:        pkix.Name{CommonName: req.CommonName, Organization: req.Organizations},
		NotBefore:      now.Add(-5 * time.Minute),
		NotAfter:       now.Add(validity),
		KeyUsage:       x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		AuthorityKeyId: ca.Cert.SubjectKeyId,
		SubjectKeyId:   keyID(key.Public()),
	}
	if req.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if req.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	for _, h := range req.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, fmt.Errorf("signing certificate %q: %w", req.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing certificate %q: %w", req.CommonName, err)
	}
	return &KeyPair{Cert: cert, Key: key}, nil
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

func newSerial() (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), 127)
	n, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return nil, fmt.Errorf("generating serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

func keyID(pub crypto.PublicKey) []byte {
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
