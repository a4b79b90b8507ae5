package sops

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/ProtonMail/go-crypto/openpgp"
	pgparmor "github.com/ProtonMail/go-crypto/openpgp/armor"
)

// Environment variables keys are read from. SOPS_IMPORT_PGP and
// SOPS_IMPORT_AGE are the ones upstream's KRM function imports;
// SOPS_AGE_KEY and SOPS_AGE_KEY_FILE are the sops program's own.
const (
	EnvImportPGP  = "SOPS_IMPORT_PGP"
	EnvImportAge  = "SOPS_IMPORT_AGE"
	EnvAgeKey     = "SOPS_AGE_KEY"
	EnvAgeKeyFile = "SOPS_AGE_KEY_FILE"
)

// Keyring holds PGP keys and age identities in memory. The zero value is
// an empty keyring.
type Keyring struct {
	pgp openpgp.EntityList
	age []age.Identity
	// ageRecipients are the public halves of age, for messages.
	ageRecipients []string
}

var pgpBlock = regexp.MustCompile(`(?s)-----BEGIN PGP (PUBLIC|PRIVATE) KEY BLOCK-----.*?-----END PGP (PUBLIC|PRIVATE) KEY BLOCK-----`)

// ImportPGP adds every armored PGP key block (public or private) found in
// text and returns how many keys it added. Text without a key block, such
// as a placeholder comment, adds none and is no error. source names where
// the text came from, for errors. Passphrase-protected private keys are
// refused: nothing could unlock them without a prompt.
func (k *Keyring) ImportPGP(text []byte, source string) (int, error) {
	n := 0
	for i, block := range pgpBlock.FindAll(text, -1) {
		list, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(block))
		if err != nil {
			return n, fmt.Errorf("%s: PGP key block %d: %w", source, i+1, err)
		}
		for _, e := range list {
			if e.PrivateKey != nil && e.PrivateKey.Encrypted {
				return n, fmt.Errorf("%s: PGP key %s is protected by a passphrase; export it without one to use it here", source, fingerprint(e.PrimaryKey.Fingerprint))
			}
			for _, sk := range e.Subkeys {
				if sk.PrivateKey != nil && sk.PrivateKey.Encrypted {
					return n, fmt.Errorf("%s: PGP key %s has a subkey protected by a passphrase; export it without one to use it here", source, fingerprint(e.PrimaryKey.Fingerprint))
				}
			}
		}
		k.pgp = append(k.pgp, list...)
		n += len(list)
	}
	return n, nil
}

// ImportAge adds the age identities (AGE-SECRET-KEY-1…, one a line; empty
// lines and lines starting with # are skipped) in text and returns how
// many it added. Errors give the line number only, never the line.
func (k *Keyring) ImportAge(text []byte, source string) (int, error) {
	n := 0
	for i, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, "AGE-SECRET-KEY-") {
			return n, fmt.Errorf("%s: line %d is not an age identity (AGE-SECRET-KEY-…)", source, i+1)
		}
		// The library's errors quote the line, so only the line number is
		// reported.
		ids, err := age.ParseIdentities(strings.NewReader(line))
		if err != nil || len(ids) != 1 {
			return n, fmt.Errorf("%s: line %d is not a valid age identity", source, i+1)
		}
		k.age = append(k.age, ids[0])
		switch id := ids[0].(type) {
		case *age.X25519Identity:
			k.ageRecipients = append(k.ageRecipients, id.Recipient().String())
		case *age.HybridIdentity:
			k.ageRecipients = append(k.ageRecipients, id.Recipient().String())
		}
		n++
	}
	return n, nil
}

// AddAgeIdentity adds one parsed age identity.
func (k *Keyring) AddAgeIdentity(id *age.X25519Identity) {
	k.age = append(k.age, id)
	k.ageRecipients = append(k.ageRecipients, id.Recipient().String())
}

// AddPGPEntity adds one PGP key (public, or with its private key).
func (k *Keyring) AddPGPEntity(e *openpgp.Entity) { k.pgp = append(k.pgp, e) }

// Empty reports whether the keyring holds no key at all.
func (k *Keyring) Empty() bool { return len(k.pgp) == 0 && len(k.age) == 0 }

// LoadEnv imports keys from the environment: SOPS_IMPORT_PGP,
// SOPS_IMPORT_AGE, SOPS_AGE_KEY and the file SOPS_AGE_KEY_FILE names.
// getenv is os.Getenv in production.
func (k *Keyring) LoadEnv(getenv func(string) string) error {
	if v := getenv(EnvImportPGP); v != "" {
		if _, err := k.ImportPGP([]byte(v), "$"+EnvImportPGP); err != nil {
			return err
		}
	}
	for _, name := range []string{EnvImportAge, EnvAgeKey} {
		if v := getenv(name); v != "" {
			if _, err := k.ImportAge([]byte(v), "$"+name); err != nil {
				return err
			}
		}
	}
	if f := getenv(EnvAgeKeyFile); f != "" {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("$%s: %w", EnvAgeKeyFile, err)
		}
		if _, err := k.ImportAge(data, f); err != nil {
			return err
		}
	}
	return nil
}

// DefaultAgeKeyFile is where the sops program looks for age identities
// when nothing else names them: $XDG_CONFIG_HOME/sops/age/keys.txt, or
// ~/.config/sops/age/keys.txt. Empty when neither can be worked out.
func DefaultAgeKeyFile(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "sops", "age", "keys.txt")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "sops", "age", "keys.txt")
	}
	return ""
}

// fingerprint renders a PGP fingerprint as sops writes it: upper-case hex.
func fingerprint(fp []byte) string { return strings.ToUpper(hex.EncodeToString(fp)) }

func normalizeFingerprint(fp string) string {
	return strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(fp), " ", ""))
}

// pgpEntity finds the key whose primary key or subkey has fingerprint fp
// (or ends with it, for a long key ID).
func (k *Keyring) pgpEntity(fp string) *openpgp.Entity {
	want := normalizeFingerprint(fp)
	if want == "" {
		return nil
	}
	match := func(f []byte) bool { return strings.HasSuffix(fingerprint(f), want) }
	for _, e := range k.pgp {
		if match(e.PrimaryKey.Fingerprint) {
			return e
		}
		for _, sk := range e.Subkeys {
			if match(sk.PublicKey.Fingerprint) {
				return e
			}
		}
	}
	return nil
}

// pgpSecretFingerprints lists the imported keys that can decrypt.
func (k *Keyring) pgpSecretFingerprints() []string {
	var out []string
	for _, e := range k.pgp {
		if e.PrivateKey != nil {
			out = append(out, fingerprint(e.PrimaryKey.Fingerprint))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// wrapPGP encrypts the data key for the PGP key with fingerprint fp,
// armored as sops stores it.
func (k *Keyring) wrapPGP(dataKey []byte, fp string) (string, error) {
	e := k.pgpEntity(fp)
	if e == nil {
		return "", fmt.Errorf("no imported PGP key has fingerprint %s (import the public key with $%s or cmd-import-pgp)", normalizeFingerprint(fp), EnvImportPGP)
	}
	var buf bytes.Buffer
	aw, err := pgparmor.Encode(&buf, "PGP MESSAGE", nil)
	if err != nil {
		return "", fmt.Errorf("PGP key %s: %w", fp, err)
	}
	w, err := openpgp.Encrypt(aw, []*openpgp.Entity{e}, nil, nil, nil)
	if err != nil {
		return "", fmt.Errorf("encrypting for PGP key %s: %w", fp, err)
	}
	if _, err := w.Write(dataKey); err != nil {
		return "", fmt.Errorf("encrypting for PGP key %s: %w", fp, err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("encrypting for PGP key %s: %w", fp, err)
	}
	if err := aw.Close(); err != nil {
		return "", fmt.Errorf("encrypting for PGP key %s: %w", fp, err)
	}
	return strings.TrimRight(buf.String(), "\n") + "\n", nil
}

// unwrapPGP decrypts an armored PGP message holding a data key with the
// keyring's private keys.
func (k *Keyring) unwrapPGP(enc string) ([]byte, error) {
	block, err := pgparmor.Decode(strings.NewReader(enc))
	if err != nil {
		return nil, fmt.Errorf("reading the PGP message: %w", err)
	}
	md, err := openpgp.ReadMessage(block.Body, k.pgp, nil, nil)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(md.UnverifiedBody)
}

// wrapAge encrypts the data key for an age recipient, armored as sops
// stores it.
func wrapAge(dataKey []byte, recipient string) (string, error) {
	rs, err := age.ParseRecipients(strings.NewReader(strings.TrimSpace(recipient)))
	if err != nil || len(rs) != 1 {
		return "", fmt.Errorf("%q is not an age recipient (age1…)", recipient)
	}
	var buf bytes.Buffer
	aw := armor.NewWriter(&buf)
	w, err := age.Encrypt(aw, rs[0])
	if err != nil {
		return "", fmt.Errorf("encrypting for age recipient %s: %w", recipient, err)
	}
	if _, err := w.Write(dataKey); err != nil {
		return "", fmt.Errorf("encrypting for age recipient %s: %w", recipient, err)
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("encrypting for age recipient %s: %w", recipient, err)
	}
	if err := aw.Close(); err != nil {
		return "", fmt.Errorf("encrypting for age recipient %s: %w", recipient, err)
	}
	return strings.TrimRight(buf.String(), "\n") + "\n", nil
}

// unwrapAge decrypts an armored age message holding a data key with the
// keyring's identities.
func (k *Keyring) unwrapAge(enc string) ([]byte, error) {
	if len(k.age) == 0 {
		return nil, errors.New("no age identity imported")
	}
	r, err := age.Decrypt(armor.NewReader(strings.NewReader(strings.TrimSpace(enc)+"\n")), k.age...)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}
