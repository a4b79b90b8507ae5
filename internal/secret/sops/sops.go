package sops

import (
	"crypto/rand"
	"crypto/sha512"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/getsops/sops/v3/shamir"
	"go.yaml.in/yaml/v3"
)

// Errors a caller may test for with errors.Is.
var (
	// ErrNoKey: none of the keyring's keys could decrypt the data key.
	ErrNoKey = errors.New("no key could decrypt the data key")
	// ErrMACMismatch: the document was changed after it was encrypted.
	ErrMACMismatch = errors.New("MAC mismatch")
)

type pgpKey struct {
	CreatedAt   string `yaml:"created_at"`
	Enc         string `yaml:"enc"`
	Fingerprint string `yaml:"fp"`
}

type ageKey struct {
	Recipient string `yaml:"recipient"`
	Enc       string `yaml:"enc"`
}

// keyGroup is one group of master keys; any one of them yields the
// group's data key (or, with several groups, its Shamir share).
type keyGroup struct {
	KMS     []map[string]any `yaml:"kms"`
	GCPKMS  []map[string]any `yaml:"gcp_kms"`
	HCKMS   []map[string]any `yaml:"hckms"`
	AzureKV []map[string]any `yaml:"azure_kv"`
	Vault   []map[string]any `yaml:"hc_vault"`
	Age     []ageKey         `yaml:"age"`
	PGP     []pgpKey         `yaml:"pgp"`
}

// metadata is the "sops" mapping as it is read. Unknown fields are
// ignored, so files from newer sops versions still decrypt.
type metadata struct {
	ShamirThreshold         int        `yaml:"shamir_threshold"`
	KeyGroups               []keyGroup `yaml:"key_groups"`
	keyGroup                `yaml:",inline"`
	LastModified            string `yaml:"lastmodified"`
	MAC                     string `yaml:"mac"`
	UnencryptedSuffix       string `yaml:"unencrypted_suffix"`
	EncryptedSuffix         string `yaml:"encrypted_suffix"`
	UnencryptedRegex        string `yaml:"unencrypted_regex"`
	EncryptedRegex          string `yaml:"encrypted_regex"`
	UnencryptedCommentRegex string `yaml:"unencrypted_comment_regex"`
	EncryptedCommentRegex   string `yaml:"encrypted_comment_regex"`
	MACOnlyEncrypted        bool   `yaml:"mac_only_encrypted"`
	Version                 string `yaml:"version"`
}

// writtenMetadata is the "sops" mapping as this package writes it, in
// sops' field order.
type writtenMetadata struct {
	Age               []ageKey `yaml:"age,omitempty"`
	LastModified      string   `yaml:"lastmodified"`
	MAC               string   `yaml:"mac"`
	PGP               []pgpKey `yaml:"pgp,omitempty"`
	UnencryptedSuffix string   `yaml:"unencrypted_suffix,omitempty"`
	EncryptedSuffix   string   `yaml:"encrypted_suffix,omitempty"`
	UnencryptedRegex  string   `yaml:"unencrypted_regex,omitempty"`
	EncryptedRegex    string   `yaml:"encrypted_regex,omitempty"`
	MACOnlyEncrypted  bool     `yaml:"mac_only_encrypted,omitempty"`
	Version           string   `yaml:"version"`
}

// Rules choose which values are encrypted. At most one may be set; none
// means UnencryptedSuffix "_unencrypted", as with sops.
type Rules struct {
	// UnencryptedSuffix leaves values under keys ending with it in clear.
	UnencryptedSuffix string
	// EncryptedSuffix encrypts only values under keys ending with it.
	EncryptedSuffix string
	// UnencryptedRegex leaves values under keys matching it in clear.
	UnencryptedRegex string
	// EncryptedRegex encrypts only values under keys matching it.
	EncryptedRegex string
}

func (r Rules) compile() (rules, error) {
	set := 0
	for _, v := range []string{r.UnencryptedSuffix, r.EncryptedSuffix, r.UnencryptedRegex, r.EncryptedRegex} {
		if v != "" {
			set++
		}
	}
	if set > 1 {
		return rules{}, errors.New("only one of unencrypted-suffix, encrypted-suffix, unencrypted-regex and encrypted-regex may be set")
	}
	out := rules{unencryptedSuffix: r.UnencryptedSuffix, encryptedSuffix: r.EncryptedSuffix}
	if set == 0 {
		out.unencryptedSuffix = DefaultUnencryptedSuffix
	}
	var err error
	if r.UnencryptedRegex != "" {
		if out.unencryptedRegex, err = regexp.Compile(r.UnencryptedRegex); err != nil {
			return rules{}, fmt.Errorf("unencrypted-regex: %w", err)
		}
	}
	if r.EncryptedRegex != "" {
		if out.encryptedRegex, err = regexp.Compile(r.EncryptedRegex); err != nil {
			return rules{}, fmt.Errorf("encrypted-regex: %w", err)
		}
	}
	return out, nil
}

// EncryptOptions say for whom and what to encrypt.
type EncryptOptions struct {
	// PGP are fingerprints of PGP keys in the keyring (public keys are
	// enough).
	PGP []string
	// Age are age recipients (age1…).
	Age []string
	Rules
	// MACOnlyEncrypted makes the MAC cover only encrypted values, so that
	// the clear ones may change.
	MACOnlyEncrypted bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DecryptOptions tune decryption.
type DecryptOptions struct {
	// IgnoreMAC decrypts a document whose MAC does not match its content.
	IgnoreMAC bool
}

// root returns the top-level mapping of a document or mapping node.
func root(doc *yaml.Node) (*yaml.Node, error) {
	if doc == nil {
		return nil, errors.New("no document")
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) != 1 {
			return nil, errors.New("empty document")
		}
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil, errors.New("the document is not a mapping")
	}
	return doc, nil
}

func metadataIndex(m *yaml.Node) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == MetadataKey {
			return i
		}
	}
	return -1
}

// IsEncrypted reports whether doc carries sops metadata.
func IsEncrypted(doc *yaml.Node) bool {
	m, err := root(doc)
	return err == nil && metadataIndex(m) >= 0
}

// Encrypt encrypts doc in place for the recipients o names and adds its
// sops metadata. Comments in places that are encrypted are encrypted too.
func Encrypt(doc *yaml.Node, keys *Keyring, o EncryptOptions) error {
	m, err := root(doc)
	if err != nil {
		return err
	}
	if metadataIndex(m) >= 0 {
		return errors.New("the document is already encrypted (it has a sops key)")
	}
	if len(o.PGP) == 0 && len(o.Age) == 0 {
		return errors.New("no recipient: name at least one PGP fingerprint or age recipient")
	}
	r, err := o.Rules.compile()
	if err != nil {
		return err
	}
	r.macOnlyEncrypted = o.MACOnlyEncrypted
	if keys == nil {
		keys = &Keyring{}
	}
	dataKey := make([]byte, 32)
	if _, err := rand.Read(dataKey); err != nil {
		return fmt.Errorf("generating the data key: %w", err)
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	out := writtenMetadata{
		LastModified:      now().UTC().Format(time.RFC3339),
		UnencryptedSuffix: r.unencryptedSuffix,
		EncryptedSuffix:   r.encryptedSuffix,
		UnencryptedRegex:  o.UnencryptedRegex,
		EncryptedRegex:    o.EncryptedRegex,
		MACOnlyEncrypted:  o.MACOnlyEncrypted,
		Version:           FormatVersion,
	}
	for _, rcp := range o.Age {
		enc, err := wrapAge(dataKey, rcp)
		if err != nil {
			return err
		}
		out.Age = append(out.Age, ageKey{Recipient: strings.TrimSpace(rcp), Enc: enc})
	}
	for _, fp := range o.PGP {
		enc, err := keys.wrapPGP(dataKey, fp)
		if err != nil {
			return err
		}
		out.PGP = append(out.PGP, pgpKey{CreatedAt: out.LastModified, Enc: enc, Fingerprint: normalizeFingerprint(fp)})
	}

	work := deepCopy(m)
	w := &walker{key: dataKey, rules: r, mac: sha512.New()}
	if r.macOnlyEncrypted {
		w.mac.Write(macOnlyEncryptedInit)
	}
	if err := w.document(work); err != nil {
		return err
	}
	mac := fmt.Sprintf("%X", w.mac.Sum(nil))
	if out.MAC, err = sealValue(dataKey, []byte(mac), typeStr, out.LastModified); err != nil {
		return fmt.Errorf("encrypting the MAC: %w", err)
	}
	var meta yaml.Node
	if err := meta.Encode(out); err != nil {
		return fmt.Errorf("writing the sops metadata: %w", err)
	}
	work.Content = append(work.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: MetadataKey}, &meta)
	*m = *work
	return nil
}

// Decrypt decrypts doc in place with the keyring's keys and removes its
// sops metadata. On error doc is left as it was; the error never holds a
// decrypted value.
func Decrypt(doc *yaml.Node, keys *Keyring, o DecryptOptions) error {
	m, err := root(doc)
	if err != nil {
		return err
	}
	mi := metadataIndex(m)
	if mi < 0 {
		return errors.New("the document is not encrypted (it has no sops key)")
	}
	var md metadata
	if err := m.Content[mi+1].Decode(&md); err != nil {
		return fmt.Errorf("reading the sops metadata: %w", err)
	}
	if md.UnencryptedCommentRegex != "" || md.EncryptedCommentRegex != "" {
		return errors.New("the document uses unencrypted_comment_regex or encrypted_comment_regex, which this sops implementation does not support")
	}
	r, err := Rules{
		UnencryptedSuffix: md.UnencryptedSuffix, EncryptedSuffix: md.EncryptedSuffix,
		UnencryptedRegex: md.UnencryptedRegex, EncryptedRegex: md.EncryptedRegex,
	}.compile()
	if err != nil {
		return fmt.Errorf("the sops metadata: %w", err)
	}
	r.macOnlyEncrypted = md.MACOnlyEncrypted
	if keys == nil {
		keys = &Keyring{}
	}
	dataKey, err := keys.dataKey(&md)
	if err != nil {
		return err
	}

	work := deepCopy(m)
	w := &walker{key: dataKey, rules: r, mac: sha512.New(), decrypt: true}
	if r.macOnlyEncrypted {
		w.mac.Write(macOnlyEncryptedInit)
	}
	if err := w.document(work); err != nil {
		return err
	}
	if !o.IgnoreMAC {
		if err := checkMAC(dataKey, &md, fmt.Sprintf("%X", w.mac.Sum(nil))); err != nil {
			return err
		}
	}
	work.Content = append(work.Content[:mi:mi], work.Content[mi+2:]...)
	*m = *work
	return nil
}

func checkMAC(dataKey []byte, md *metadata, computed string) error {
	lm, err := time.Parse(time.RFC3339, md.LastModified)
	if err != nil {
		return fmt.Errorf("%w: the sops metadata's lastmodified %q is not an RFC 3339 time", ErrMACMismatch, md.LastModified)
	}
	if md.MAC == "" {
		return fmt.Errorf("%w: the sops metadata has no mac (ignore-mac skips this check)", ErrMACMismatch)
	}
	stored, _, err := openValue(dataKey, md.MAC, lm.Format(time.RFC3339))
	if err != nil {
		return fmt.Errorf("%w: the stored MAC does not decrypt (%w); the metadata was changed (ignore-mac skips this check)", ErrMACMismatch, err)
	}
	if string(stored) != computed {
		return fmt.Errorf("%w: the document was changed after it was encrypted (ignore-mac skips this check)", ErrMACMismatch)
	}
	return nil
}

// NoKeyError says which keys a document was encrypted for and which the
// keyring had; errors.Is(err, ErrNoKey) holds.
type NoKeyError struct {
	// For are the master keys in the document: "pgp FINGERPRINT" or
	// "age RECIPIENT", and cloud KMS keys by kind.
	For []string
	// SecretPGP are the fingerprints of the imported PGP private keys.
	SecretPGP []string
	// Age are the recipients of the imported age identities.
	Age []string
	// Reasons are the failures per key, without secrets.
	Reasons []string
}

func (e *NoKeyError) Error() string {
	var b strings.Builder
	b.WriteString(ErrNoKey.Error())
	b.WriteString(": the document is encrypted for ")
	if len(e.For) == 0 {
		b.WriteString("no key")
	} else {
		b.WriteString(strings.Join(e.For, ", "))
	}
	b.WriteString("; imported private keys: ")
	var have []string
	for _, fp := range e.SecretPGP {
		have = append(have, "pgp "+fp)
	}
	for _, r := range e.Age {
		have = append(have, "age "+r)
	}
	if len(have) == 0 {
		b.WriteString("none (set $" + EnvImportPGP + " or $" + EnvImportAge + ")")
	} else {
		b.WriteString(strings.Join(have, ", "))
	}
	if len(e.Reasons) > 0 {
		b.WriteString(" (" + strings.Join(e.Reasons, "; ") + ")")
	}
	return b.String()
}

func (e *NoKeyError) Is(target error) bool { return target == ErrNoKey }

// dataKey recovers the document's data key with the keyring.
func (k *Keyring) dataKey(md *metadata) ([]byte, error) {
	groups := md.KeyGroups
	if len(groups) == 0 {
		groups = []keyGroup{md.keyGroup}
	}
	nke := &NoKeyError{SecretPGP: k.pgpSecretFingerprints(), Age: k.ageRecipients}
	var parts [][]byte
	for _, g := range groups {
		if key := k.groupKey(g, nke); key != nil {
			parts = append(parts, key)
		}
	}
	if len(groups) == 1 {
		if len(parts) == 1 {
			if len(parts[0]) != 32 {
				return nil, fmt.Errorf("the decrypted data key has %d bytes, want 32", len(parts[0]))
			}
			return parts[0], nil
		}
		return nil, nke
	}
	threshold := md.ShamirThreshold
	if threshold == 0 {
		threshold = len(groups)
	}
	if len(parts) < threshold {
		nke.Reasons = append(nke.Reasons, fmt.Sprintf("%d of %d key groups opened, %d needed", len(parts), len(groups), threshold))
		return nil, nke
	}
	key, err := shamir.Combine(parts)
	if err != nil {
		return nil, fmt.Errorf("combining the data key from %d key groups: %w", len(parts), err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("the combined data key has %d bytes, want 32", len(key))
	}
	return key, nil
}

// groupKey opens one key group with the first key that works, noting
// what was tried in nke.
func (k *Keyring) groupKey(g keyGroup, nke *NoKeyError) []byte {
	for _, p := range g.PGP {
		nke.For = append(nke.For, "pgp "+normalizeFingerprint(p.Fingerprint))
		key, err := k.unwrapPGP(p.Enc)
		if err == nil {
			return key
		}
		nke.Reasons = append(nke.Reasons, "pgp "+normalizeFingerprint(p.Fingerprint)+": "+err.Error())
	}
	for _, a := range g.Age {
		nke.For = append(nke.For, "age "+a.Recipient)
		key, err := k.unwrapAge(a.Enc)
		if err == nil {
			return key
		}
		nke.Reasons = append(nke.Reasons, "age "+a.Recipient+": "+err.Error())
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"AWS KMS", len(g.KMS)}, {"GCP KMS", len(g.GCPKMS)}, {"Huawei Cloud KMS", len(g.HCKMS)}, {"Azure Key Vault", len(g.AzureKV)}, {"Vault transit", len(g.Vault)}} {
		if c.n > 0 {
			nke.For = append(nke.For, fmt.Sprintf("%d %s key(s) (not supported: only PGP and age keys decrypt here)", c.n, c.name))
		}
	}
	return nil
}

// deepCopy copies a node tree (aliases point into the copy's original
// targets, which sops documents do not have).
func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = deepCopy(ch)
	}
	return &c
}
