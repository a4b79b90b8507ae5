package sops

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MetadataKey is the top-level key that holds a document's sops metadata.
const MetadataKey = "sops"

// DefaultUnencryptedSuffix is the rule sops applies when a file names
// none: values under a key ending in it stay in clear.
const DefaultUnencryptedSuffix = "_unencrypted"

// FormatVersion is the sops version written into metadata: the format
// this package writes is that of sops 3.13.
const FormatVersion = "3.13.3"

// nonceSize is the GCM nonce length sops uses (not the usual 12 bytes).
const nonceSize = 32

// macOnlyEncryptedInit starts the MAC hash of files with
// mac_only_encrypted, so that such a MAC never equals a plain one.
var macOnlyEncryptedInit = []byte{0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3,
	0xd1, 0x47, 0xbe, 0xb, 0xb, 0x97, 0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69}

// Value types as the ENC[...] envelope names them.
const (
	typeStr     = "str"
	typeInt     = "int"
	typeFloat   = "float"
	typeBool    = "bool"
	typeBytes   = "bytes"
	typeTime    = "time"
	typeComment = "comment"
)

var encValue = regexp.MustCompile(`^ENC\[AES256_GCM,data:(.+),iv:(.+),tag:(.+),type:(.+)\]`)

// sealValue encrypts plaintext (already rendered as sops renders its type)
// under key with the path as additional data.
func sealValue(key []byte, plaintext []byte, typ, additionalData string) (string, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", fmt.Errorf("AES: %w", err)
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, nonceSize)
	if err != nil {
		return "", fmt.Errorf("AES-GCM: %w", err)
	}
	iv := make([]byte, nonceSize)
	if _, err := rand.Read(iv); err != nil {
		return "", fmt.Errorf("random IV: %w", err)
	}
	out := gcm.Seal(nil, iv, plaintext, []byte(additionalData))
	tag := out[len(out)-gcm.Overhead():]
	data := out[:len(out)-gcm.Overhead()]
	return fmt.Sprintf("ENC[AES256_GCM,data:%s,iv:%s,tag:%s,type:%s]",
		base64.StdEncoding.EncodeToString(data), base64.StdEncoding.EncodeToString(iv),
		base64.StdEncoding.EncodeToString(tag), typ), nil
}

// errNotEncrypted marks a value that is not in the ENC[...] form.
var errNotEncrypted = errors.New("the value is not in sops' ENC[AES256_GCM,...] form")

// openValue decrypts one ENC[...] value; it returns the plaintext and its
// type. Errors never contain the value.
func openValue(key []byte, value, additionalData string) ([]byte, string, error) {
	m := encValue.FindStringSubmatch(value)
	if m == nil {
		return nil, "", errNotEncrypted
	}
	var parts [3][]byte
	for i, name := range []string{"data", "iv", "tag"} {
		b, err := base64.StdEncoding.DecodeString(m[i+1])
		if err != nil {
			return nil, "", fmt.Errorf("the %s of the encrypted value is not base64", name)
		}
		parts[i] = b
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, "", fmt.Errorf("AES: %w", err)
	}
	if len(parts[1]) == 0 {
		return nil, "", errors.New("the encrypted value has an empty IV")
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, len(parts[1]))
	if err != nil {
		return nil, "", fmt.Errorf("AES-GCM: %w", err)
	}
	plain, err := gcm.Open(nil, parts[1], append(parts[0], parts[2]...), []byte(additionalData))
	if err != nil {
		return nil, "", errors.New("AES-GCM authentication failed: the value was changed, moved to another path, or belongs to another data key")
	}
	return plain, m[4], nil
}

// rules are a document's encryption rules.
type rules struct {
	unencryptedSuffix, encryptedSuffix string
	unencryptedRegex, encryptedRegex   *regexp.Regexp
	macOnlyEncrypted                   bool
}

// encrypted reports whether the value at path is (to be) encrypted, as
// sops decides it: each rule that is set looks at every key of the path.
func (r rules) encrypted(path []string) bool {
	enc := true
	if r.unencryptedSuffix != "" {
		for _, p := range path {
			if strings.HasSuffix(p, r.unencryptedSuffix) {
				enc = false
				break
			}
		}
	}
	if r.encryptedSuffix != "" {
		enc = false
		for _, p := range path {
			if strings.HasSuffix(p, r.encryptedSuffix) {
				enc = true
				break
			}
		}
	}
	if r.unencryptedRegex != nil {
		for _, p := range path {
			if r.unencryptedRegex.MatchString(p) {
				enc = false
				break
			}
		}
	}
	if r.encryptedRegex != nil {
		enc = false
		for _, p := range path {
			if r.encryptedRegex.MatchString(p) {
				enc = true
				break
			}
		}
	}
	return enc
}

// leaf is a scalar as sops sees it: its Go value after YAML decoding.
type leaf struct {
	v any // string, int, float64, bool, time.Time; nil for null
}

// decodeLeaf decodes a scalar node the way sops' YAML store does (into an
// interface{}), so that the MAC bytes match.
func decodeLeaf(n *yaml.Node) (leaf, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return leaf{}, fmt.Errorf("decoding the value: %w", err)
	}
	switch x := v.(type) {
	case nil, string, int, float64, bool, time.Time:
		return leaf{v: x}, nil
	case []byte:
		return leaf{v: string(x)}, nil
	default:
		return leaf{}, fmt.Errorf("sops cannot hold a value of Go type %T (%s)", v, n.Tag)
	}
}

// bytes renders the value as sops hashes and encrypts it.
func (l leaf) bytes() ([]byte, error) {
	switch x := l.v.(type) {
	case string:
		return []byte(x), nil
	case int:
		return []byte(strconv.Itoa(x)), nil
	case float64:
		return []byte(strconv.FormatFloat(x, 'f', -1, 64)), nil
	case bool:
		if x {
			return []byte("True"), nil
		}
		return []byte("False"), nil
	case time.Time:
		return x.MarshalText()
	}
	return nil, fmt.Errorf("sops cannot hold a value of Go type %T", l.v)
}

func (l leaf) typ() string {
	switch l.v.(type) {
	case int:
		return typeInt
	case float64:
		return typeFloat
	case bool:
		return typeBool
	case time.Time:
		return typeTime
	}
	return typeStr
}

// setScalar writes a decrypted value of sops type typ into n.
func setScalar(n *yaml.Node, plain []byte, typ string) (leaf, error) {
	s := string(plain)
	n.Kind, n.Style, n.Anchor = yaml.ScalarNode, 0, ""
	switch typ {
	case typeStr, typeBytes:
		n.Tag, n.Value = "!!str", s
		return leaf{v: s}, nil
	case typeInt:
		i, err := strconv.Atoi(s)
		if err != nil {
			return leaf{}, errors.New("the decrypted value is not the integer its type says")
		}
		n.Tag, n.Value = "!!int", strconv.Itoa(i)
		return leaf{v: i}, nil
	case typeFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return leaf{}, errors.New("the decrypted value is not the float its type says")
		}
		v := strconv.FormatFloat(f, 'g', -1, 64)
		if _, err := strconv.Atoi(v); err == nil {
			v += ".0"
		}
		n.Tag, n.Value = "!!float", v
		return leaf{v: f}, nil
	case typeBool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return leaf{}, errors.New("the decrypted value is not the boolean its type says")
		}
		n.Tag, n.Value = "!!bool", strconv.FormatBool(b)
		return leaf{v: b}, nil
	case typeTime:
		var t time.Time
		if err := t.UnmarshalText(plain); err != nil {
			return leaf{}, errors.New("the decrypted value is not the time its type says")
		}
		n.Tag, n.Value = "!!timestamp", t.Format(time.RFC3339Nano)
		return leaf{v: t}, nil
	}
	return leaf{}, fmt.Errorf("unknown sops value type %q", typ)
}

// walker visits a document's values in document order, as sops' tree walk
// does: mapping keys extend the path, list items do not, null values are
// skipped.
type walker struct {
	key   []byte
	rules rules
	mac   hash.Hash
	// decrypt or encrypt.
	decrypt bool
}

func (w *walker) hashLeaf(l leaf, encrypted bool) error {
	if w.rules.macOnlyEncrypted && !encrypted {
		return nil
	}
	b, err := l.bytes()
	if err != nil {
		return err
	}
	w.mac.Write(b)
	return nil
}

func pathString(path []string) string { return strings.Join(path, ":") + ":" }

// where renders a path for errors.
func where(path []string) string {
	if len(path) == 0 {
		return "(document root)"
	}
	return strings.Join(path, ".")
}

// document walks the top-level mapping, skipping the sops metadata.
func (w *walker) document(doc *yaml.Node) error {
	if err := w.comments(doc, nil); err != nil {
		return err
	}
	return w.mapping(doc, nil, true)
}

func (w *walker) mapping(n *yaml.Node, path []string, top bool) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if top && k.Value == MetadataKey && k.Kind == yaml.ScalarNode {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: a key that is not a string cannot be encrypted", where(path))
		}
		var key any
		if err := k.Decode(&key); err != nil {
			return fmt.Errorf("%s: decoding a key: %w", where(path), err)
		}
		ks, ok := key.(string)
		if !ok {
			return fmt.Errorf("%s: key %q is a %T; sops supports only string keys", where(path), k.Value, key)
		}
		// Comments on a key, and on a scalar value, belong to the mapping.
		if err := w.comments(k, path); err != nil {
			return err
		}
		if err := w.value(v, append(path[:len(path):len(path)], ks), path); err != nil {
			return err
		}
	}
	return nil
}

// value visits one value at path; parent is the path of the collection
// holding it (where comments on a scalar belong).
func (w *walker) value(v *yaml.Node, path, parent []string) error {
	switch v.Kind {
	case yaml.MappingNode:
		if err := w.comments(v, path); err != nil {
			return err
		}
		return w.mapping(v, path, false)
	case yaml.SequenceNode:
		if err := w.comments(v, path); err != nil {
			return err
		}
		for _, item := range v.Content {
			if err := w.value(item, path, path); err != nil {
				return err
			}
		}
		return nil
	case yaml.AliasNode:
		return fmt.Errorf("%s: YAML aliases are not supported in encrypted documents", where(path))
	case yaml.ScalarNode:
		if err := w.comments(v, parent); err != nil {
			return err
		}
		return w.scalar(v, path)
	}
	return fmt.Errorf("%s: unexpected YAML node", where(path))
}

func (w *walker) scalar(v *yaml.Node, path []string) error {
	enc := w.rules.encrypted(path)
	if !w.decrypt {
		l, err := decodeLeaf(v)
		if err != nil {
			return fmt.Errorf("%s: %w", where(path), err)
		}
		if l.v == nil {
			return nil
		}
		if err := w.hashLeaf(l, enc); err != nil {
			return fmt.Errorf("%s: %w", where(path), err)
		}
		if !enc {
			return nil
		}
		b, err := l.bytes()
		if err != nil {
			return fmt.Errorf("%s: %w", where(path), err)
		}
		if len(b) == 0 && l.typ() == typeStr {
			return nil // sops leaves empty strings as they are
		}
		sealed, err := sealValue(w.key, b, l.typ(), pathString(path))
		if err != nil {
			return fmt.Errorf("%s: %w", where(path), err)
		}
		v.Tag, v.Value, v.Style = "!!str", sealed, 0
		return nil
	}
	if v.ShortTag() == "!!null" {
		return nil
	}
	if !enc {
		l, err := decodeLeaf(v)
		if err != nil {
			return fmt.Errorf("%s: %w", where(path), err)
		}
		if l.v == nil {
			return nil
		}
		if err := w.hashLeaf(l, false); err != nil {
			return fmt.Errorf("%s: %w", where(path), err)
		}
		return nil
	}
	if v.Value == "" {
		// An empty string is stored as it is.
		return w.hashLeaf(leaf{v: ""}, true)
	}
	if v.ShortTag() != "!!str" {
		return fmt.Errorf("%s: expected an encrypted value (a string), found %s", where(path), v.ShortTag())
	}
	plain, typ, err := openValue(w.key, v.Value, pathString(path))
	if err != nil {
		return fmt.Errorf("%s: %w", where(path), err)
	}
	l, err := setScalar(v, plain, typ)
	if err != nil {
		return fmt.Errorf("%s: %w", where(path), err)
	}
	return w.hashLeaf(l, true)
}

// comments encrypts or decrypts the comments attached to n, which belong
// to the collection at path. Comments take no part in the MAC. Decryption
// is best effort, as in sops: a comment that does not open stays as it is.
func (w *walker) comments(n *yaml.Node, path []string) error {
	if !w.rules.encrypted(path) {
		return nil
	}
	for _, c := range []*string{&n.HeadComment, &n.LineComment, &n.FootComment} {
		if *c == "" {
			continue
		}
		lines := strings.Split(*c, "\n")
		for i, line := range lines {
			trimmed := strings.TrimLeft(line, " \t")
			if !strings.HasPrefix(trimmed, "#") {
				continue
			}
			text := trimmed[1:]
			if w.decrypt {
				plain, typ, err := openValue(w.key, strings.TrimSpace(text), pathString(path))
				if err == nil && typ == typeComment {
					lines[i] = "#" + string(plain)
				}
				continue
			}
			if text == "" || encValue.MatchString(text) {
				continue
			}
			sealed, err := sealValue(w.key, []byte(text), typeComment, pathString(path))
			if err != nil {
				return fmt.Errorf("%s: comment: %w", where(path), err)
			}
			lines[i] = "#" + sealed
		}
		*c = strings.Join(lines, "\n")
	}
	return nil
}
