package fn

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"reflect"
	"regexp/syntax"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/pki"
)

// Certificate is what genCAEx and genSignedCertEx return: PEM text of the
// certificate and of its private key, as upstream (and sprig) name them.
type Certificate struct {
	Cert string
	Key  string
}

// SSHKeyPair is what genSSHKeyPair returns: a PEM private key and an
// authorized_keys line.
type SSHKeyPair struct {
	Private string
	Public  string
}

type generator struct {
	e Entropy
}

const rsaBits = 2048

// genCAEx makes a self-signed CA valid for days. subj is a common name, or
// an OpenSSL-style "/CN=x/O=y" distinguished name.
func (g *generator) genCAEx(subj string, days int) (Certificate, error) {
	key, err := rsa.GenerateKey(g.e.Reader(), rsaBits)
	if err != nil {
		return Certificate{}, fmt.Errorf("generating RSA key: %w", err)
	}
	return g.ca(subj, days, key)
}

// genCAWithKeyEx makes a self-signed CA on a given PEM private key.
func (g *generator) genCAWithKeyEx(subj string, days int, keyPEM string) (Certificate, error) {
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return Certificate{}, err
	}
	return g.ca(subj, days, key)
}

func (g *generator) ca(subj string, days int, key crypto.Signer) (Certificate, error) {
	spec, err := g.spec(subj, nil, nil, days)
	if err != nil {
		return Certificate{}, err
	}
	spec.IsCA = true
	return g.sign(spec, key, nil)
}

// genSignedCertEx makes a certificate for subj with IP and DNS alternative
// names, signed by ca (a value from genCAEx, or sprig's genCA).
func (g *generator) genSignedCertEx(subj string, ips, dns []any, days int, ca any) (Certificate, error) {
	key, err := rsa.GenerateKey(g.e.Reader(), rsaBits)
	if err != nil {
		return Certificate{}, fmt.Errorf("generating RSA key: %w", err)
	}
	return g.signed(subj, ips, dns, days, ca, key)
}

// genSignedCertWithKeyEx is genSignedCertEx on a given PEM private key.
func (g *generator) genSignedCertWithKeyEx(subj string, ips, dns []any, days int, ca any, keyPEM string) (Certificate, error) {
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return Certificate{}, err
	}
	return g.signed(subj, ips, dns, days, ca, key)
}

func (g *generator) signed(subj string, ips, dns []any, days int, ca any, key crypto.Signer) (Certificate, error) {
	caCertPEM, caKeyPEM, err := certFields(ca)
	if err != nil {
		return Certificate{}, err
	}
	block, _ := pem.Decode([]byte(caCertPEM))
	if block == nil {
		return Certificate{}, errors.New("the CA certificate is not PEM")
	}
	caCert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return Certificate{}, fmt.Errorf("parsing the CA certificate: %w", err)
	}
	caKey, err := parseKeyPEM(caKeyPEM)
	if err != nil {
		return Certificate{}, fmt.Errorf("the CA key: %w", err)
	}
	spec, err := g.spec(subj, ips, dns, days)
	if err != nil {
		return Certificate{}, err
	}
	spec.Server, spec.Client = true, true
	return g.sign(spec, key, &pki.KeyPair{Cert: caCert, Key: caKey})
}

// certFields reads Cert and Key from our Certificate or any struct or map
// with those fields (sprig's genCA result).
func certFields(v any) (string, string, error) {
	if c, ok := v.(Certificate); ok {
		return c.Cert, c.Key, nil
	}
	if m, ok := v.(map[string]any); ok {
		c, _ := m["Cert"].(string)
		k, _ := m["Key"].(string)
		if c != "" && k != "" {
			return c, k, nil
		}
	}
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.IsValid() && rv.Kind() == reflect.Struct {
		c, k := rv.FieldByName("Cert"), rv.FieldByName("Key")
		if c.IsValid() && k.IsValid() && c.Kind() == reflect.String && k.Kind() == reflect.String {
			return c.String(), k.String(), nil
		}
	}
	return "", "", fmt.Errorf("the CA argument is %T; pass the result of genCAEx", v)
}

// spec reads the Sprig-style arguments into what pki.Sign takes.
func (g *generator) spec(subj string, ips, dns []any, days int) (pki.Spec, error) {
	name, err := parseSubject(subj)
	if err != nil {
		return pki.Spec{}, err
	}
	if days <= 0 {
		return pki.Spec{}, fmt.Errorf("validity of %d days: must be positive", days)
	}
	spec := pki.Spec{Subject: name, Validity: time.Duration(days) * 24 * time.Hour}
	for _, v := range ips {
		s, ok := v.(string)
		if !ok {
			return pki.Spec{}, fmt.Errorf("IP address %v is %T, not a string", v, v)
		}
		ip := net.ParseIP(s)
		if ip == nil {
			return pki.Spec{}, fmt.Errorf("%q is not an IP address", s)
		}
		spec.IPAddresses = append(spec.IPAddresses, ip)
	}
	for _, v := range dns {
		s, ok := v.(string)
		if !ok {
			return pki.Spec{}, fmt.Errorf("DNS name %v is %T, not a string", v, v)
		}
		spec.DNSNames = append(spec.DNSNames, s)
	}
	return spec, nil
}

// sign issues the certificate with the project's one issuer, drawing
// randomness and the time from the Templater's entropy.
func (g *generator) sign(spec pki.Spec, key crypto.Signer, ca *pki.KeyPair) (Certificate, error) {
	kp, err := pki.Sign(spec, key, ca, g.e)
	if err != nil {
		return Certificate{}, err
	}
	keyBlock, err := keyPEMBlock(key)
	if err != nil {
		return Certificate{}, err
	}
	return Certificate{
		Cert: string(kp.CertPEM()),
		Key:  string(pem.EncodeToMemory(keyBlock)),
	}, nil
}

func keyPEMBlock(key crypto.Signer) (*pem.Block, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}, nil
	case *ecdsa.PrivateKey:
		b, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, fmt.Errorf("encoding EC key: %w", err)
		}
		return &pem.Block{Type: "EC PRIVATE KEY", Bytes: b}, nil
	default:
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return nil, fmt.Errorf("encoding %T key: %w", k, err)
		}
		return &pem.Block{Type: "PRIVATE KEY", Bytes: b}, nil
	}
}

// parseKeyPEM reads PKCS#1, SEC 1 or PKCS#8 keys. Its errors never quote
// the key.
func parseKeyPEM(s string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("the private key is not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block %q is not a private key", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", block.Type, err)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
		return k.(crypto.Signer), nil
	}
	return nil, fmt.Errorf("unsupported private key type %T", key)
}

// parseSubject reads a common name, or "/K=v/K=v" with the keys upstream
// accepts (CN, SERIALNUMBER, C, O, OU, L, ST, STREET, POSTALCODE). A
// backslash escapes a separator; + separates like /.
func parseSubject(in string) (pkix.Name, error) {
	if !strings.HasPrefix(in, "/") {
		return pkix.Name{CommonName: in}, nil
	}
	var parts []string
	var cur strings.Builder
	rest := in[1:]
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c == '\\' && i+1 < len(rest):
			cur.WriteByte(rest[i+1])
			i++
		case c == '/' || c == '+':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if rest != "" {
		parts = append(parts, cur.String())
	}
	var name pkix.Name
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return pkix.Name{}, fmt.Errorf("subject %q: %q is not KEY=value", in, p)
		}
		switch strings.ToUpper(k) {
		case "CN":
			if name.CommonName != "" {
				return pkix.Name{}, fmt.Errorf("subject %q: CN is set twice", in)
			}
			name.CommonName = v
		case "SERIALNUMBER":
			name.SerialNumber = v
		case "C":
			name.Country = append(name.Country, v)
		case "O":
			name.Organization = append(name.Organization, v)
		case "OU":
			name.OrganizationalUnit = append(name.OrganizationalUnit, v)
		case "L":
			name.Locality = append(name.Locality, v)
		case "ST":
			name.Province = append(name.Province, v)
		case "STREET":
			name.StreetAddress = append(name.StreetAddress, v)
		case "POSTALCODE":
			name.PostalCode = append(name.PostalCode, v)
		default:
			return pkix.Name{}, fmt.Errorf("subject %q: unsupported attribute %s", in, k)
		}
	}
	return name, nil
}

// genSSHKeyPair makes an RSA key of bits for SSH: the private key as PEM
// (PKCS#1, as upstream) and the public key as an authorized_keys line.
func (g *generator) genSSHKeyPair(bits int) (SSHKeyPair, error) {
	key, err := rsa.GenerateKey(g.e.Reader(), bits)
	if err != nil {
		return SSHKeyPair{}, fmt.Errorf("generating RSA key: %w", err)
	}
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return SSHKeyPair{}, fmt.Errorf("encoding SSH public key: %w", err)
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return SSHKeyPair{Private: string(priv), Public: string(ssh.MarshalAuthorizedKey(pub))}, nil
}

func toUint32(i int) uint32 { return uint32(i) }

// toYaml renders v as YAML; like upstream (and Helm) it yields "" rather
// than failing the template.
func toYaml(v any) string {
	b, err := sigyaml.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// randInt draws uniformly from [0, max).
func randInt(r interface{ Read([]byte) (int, error) }, max *big.Int) (*big.Int, error) {
	n := new(big.Int).Sub(max, big.NewInt(1))
	bitLen := n.BitLen()
	if bitLen == 0 {
		return big.NewInt(0), nil
	}
	k := (bitLen + 7) / 8
	b := make([]byte, k)
	extra := uint(k*8 - bitLen)
	for {
		if _, err := ioReadFull(r, b); err != nil {
			return nil, err
		}
		b[0] &= uint8(int(1<<(8-extra)) - 1)
		v := new(big.Int).SetBytes(b)
		if v.Cmp(max) < 0 {
			return v, nil
		}
	}
}

func ioReadFull(r interface{ Read([]byte) (int, error) }, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			if n == len(b) {
				return n, nil
			}
			return n, err
		}
	}
	return n, nil
}

// regexGen returns a random string that matches regex. Unbounded
// repetitions (*, +, {n,}) repeat at most limit times, as upstream.
func (g *generator) regexGen(regex string, limit int) (string, error) {
	if limit <= 0 {
		return "", errors.New("limit cannot be less than or equal to 0")
	}
	re, err := syntax.Parse(regex, syntax.Perl)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := g.genRegex(&b, re.Simplify(), limit); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (g *generator) intn(n int) (int, error) {
	if n <= 1 {
		return 0, nil
	}
	v, err := randInt(g.e.Reader(), big.NewInt(int64(n)))
	if err != nil {
		return 0, err
	}
	return int(v.Int64()), nil
}

// printable is what "any character" and negated classes draw from.
var printable = []rune{' ', '~'}

func (g *generator) genRegex(b *bytes.Buffer, re *syntax.Regexp, limit int) error {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			b.WriteRune(r)
		}
	case syntax.OpCharClass:
		r, err := g.pickRune(re.Rune)
		if err != nil {
			return err
		}
		b.WriteRune(r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		r, err := g.pickRune(printable)
		if err != nil {
			return err
		}
		b.WriteRune(r)
	case syntax.OpCapture:
		return g.genRegex(b, re.Sub[0], limit)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if err := g.genRegex(b, s, limit); err != nil {
				return err
			}
		}
	case syntax.OpAlternate:
		i, err := g.intn(len(re.Sub))
		if err != nil {
			return err
		}
		return g.genRegex(b, re.Sub[i], limit)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := re.Min, re.Max
		switch re.Op {
		case syntax.OpStar:
			lo, hi = 0, -1
		case syntax.OpPlus:
			lo, hi = 1, -1
		case syntax.OpQuest:
			lo, hi = 0, 1
		}
		if hi < 0 {
			hi = max(lo, limit)
		}
		n, err := g.intn(hi - lo + 1)
		if err != nil {
			return err
		}
		for range lo + n {
			if err := g.genRegex(b, re.Sub[0], limit); err != nil {
				return err
			}
		}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
	case syntax.OpNoMatch:
		return errors.New("the expression matches nothing")
	default:
		return fmt.Errorf("unsupported regular expression construct %v", re.Op)
	}
	return nil
}

// pickRune draws a rune from ranges (pairs lo, hi), keeping to printable
// ASCII when the ranges include any, so "[^a]" yields readable text.
func (g *generator) pickRune(ranges []rune) (rune, error) {
	clipped := clipRanges(ranges, printable[0], printable[1])
	if len(clipped) == 0 {
		clipped = ranges
	}
	total := 0
	for i := 0; i+1 < len(clipped); i += 2 {
		total += int(clipped[i+1]-clipped[i]) + 1
	}
	if total == 0 {
		return 0, errors.New("empty character class")
	}
	n, err := g.intn(total)
	if err != nil {
		return 0, err
	}
	for i := 0; i+1 < len(clipped); i += 2 {
		size := int(clipped[i+1]-clipped[i]) + 1
		if n < size {
			return clipped[i] + rune(n), nil
		}
		n -= size
	}
	return clipped[0], nil
}

func clipRanges(ranges []rune, lo, hi rune) []rune {
	var out []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		a, b := max(ranges[i], lo), min(ranges[i+1], hi)
		if a <= b {
			out = append(out, a, b)
		}
	}
	return out
}
