package sops

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	pgparmor "github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"go.yaml.in/yaml/v3"

	"github.com/airshipit/airship-go/internal/secret/sops/sopstest"
)

// Keys are generated per test run; no private key is ever committed.

// The secrets in the test document; none may appear in encrypted output
// or in an error.
const (
	secretPassword = "hunter2-correct-horse"
	secretMulti    = "line one of the secret\nline two of the secret\n"
	secretComment  = "comment that is also secret"
)

const plainDoc = `apiVersion: airshipit.org/v1alpha1
kind: VariableCatalogue
metadata:
  name: secrets
  labels:
    airshipit.org/deploy-k8s: 'false'
# ` + secretComment + `
data:
  password: ` + secretPassword + `
  port: 6443
  ratio: 0.75
  enabled: true
  nothing: null
  empty: ""
  cert: |
    line one of the secret
    line two of the secret
  list:
  - name: a
    value: first-list-secret
  - 42
password_unencrypted: visible-by-suffix
`

func parse(t *testing.T, s string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func render(t *testing.T, n *yaml.Node) string {
	t.Helper()
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// plainValues decodes a document into plain Go values for comparison.
func plainValues(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func keyringWith(t *testing.T, pgpKeys []sopstest.PGPKey, ageKeys []sopstest.AgeKey) *Keyring {
	t.Helper()
	var k Keyring
	for _, p := range pgpKeys {
		if n, err := k.ImportPGP([]byte(p.Private), "test"); err != nil || n != 1 {
			t.Fatalf("ImportPGP: %d keys, %v", n, err)
		}
	}
	for _, a := range ageKeys {
		if n, err := k.ImportAge([]byte("# created: now\n"+a.Identity+"\n"), "test"); err != nil || n != 1 {
			t.Fatalf("ImportAge: %d identities, %v", n, err)
		}
	}
	return &k
}

// publicKeyring holds only the public halves, as an encrypting user has.
func publicKeyring(t *testing.T, keys ...sopstest.PGPKey) *Keyring {
	t.Helper()
	var k Keyring
	for _, p := range keys {
		if n, err := k.ImportPGP([]byte(p.Public), "test"); err != nil || n != 1 {
			t.Fatalf("ImportPGP: %d keys, %v", n, err)
		}
	}
	return &k
}

func TestRoundTrip(t *testing.T) {
	p1 := sopstest.NewPGPKey(t, "one")
	a1 := sopstest.NewAgeKey(t)
	fixed := func() time.Time { return time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC) }

	cases := []struct {
		name string
		opts EncryptOptions
		// decryptWith are the keys that decrypt.
		pgp []sopstest.PGPKey
		age []sopstest.AgeKey
		// clear are substrings that stay readable in the encrypted form.
		clear []string
		// hidden must not appear in the encrypted form.
		hidden []string
	}{
		{
			name: "age, default rule", opts: EncryptOptions{Age: []string{a1.Recipient}},
			age:    []sopstest.AgeKey{a1},
			clear:  []string{"visible-by-suffix", "unencrypted_suffix: _unencrypted", "recipient: " + a1.Recipient},
			hidden: []string{secretPassword, "first-list-secret", "line two of the secret", secretComment, "VariableCatalogue", "6443"},
		},
		{
			name: "pgp, encrypted-regex like upstream", opts: EncryptOptions{PGP: []string{p1.Fingerprint}, Rules: Rules{EncryptedRegex: "^(data)$"}},
			pgp:    []sopstest.PGPKey{p1},
			clear:  []string{"kind: VariableCatalogue", "name: secrets", "fp: " + p1.Fingerprint, "encrypted_regex: ^(data)$"},
			hidden: []string{secretPassword, "first-list-secret", "line one of the secret", "6443", "0.75"},
		},
		{
			name: "pgp and age, either decrypts: pgp", opts: EncryptOptions{PGP: []string{p1.Fingerprint}, Age: []string{a1.Recipient}, Rules: Rules{UnencryptedRegex: "^(apiVersion|kind|metadata)$"}},
			pgp:    []sopstest.PGPKey{p1},
			clear:  []string{"kind: VariableCatalogue", "deploy-k8s"},
			hidden: []string{secretPassword, "visible-by-suffix"},
		},
		{
			name: "pgp and age, either decrypts: age", opts: EncryptOptions{PGP: []string{p1.Fingerprint}, Age: []string{a1.Recipient}, Rules: Rules{EncryptedSuffix: "password"}},
			age:    []sopstest.AgeKey{a1},
			clear:  []string{"first-list-secret", "6443", "visible-by-suffix"},
			hidden: []string{secretPassword},
		},
		{
			name: "mac only over encrypted values", opts: EncryptOptions{Age: []string{a1.Recipient}, MACOnlyEncrypted: true, Rules: Rules{EncryptedRegex: "^data$"}},
			age:    []sopstest.AgeKey{a1},
			clear:  []string{"mac_only_encrypted: true", "visible-by-suffix"},
			hidden: []string{secretPassword},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enc := publicKeyring(t, p1)
			doc := parse(t, plainDoc)
			tc.opts.Now = fixed
			if err := Encrypt(doc, enc, tc.opts); err != nil {
				t.Fatal(err)
			}
			out := render(t, doc)
			for _, s := range tc.clear {
				if !strings.Contains(out, s) {
					t.Errorf("encrypted form lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.hidden {
				if strings.Contains(out, s) {
					t.Errorf("encrypted form shows %q:\n%s", s, out)
				}
			}
			if !strings.Contains(out, "lastmodified: \"2026-11-03T10:00:00Z\"") || !strings.Contains(out, "version: "+FormatVersion) {
				t.Errorf("metadata:\n%s", out)
			}
			if !IsEncrypted(doc) {
				t.Error("IsEncrypted is false after Encrypt")
			}
			if err := Encrypt(parse(t, out), enc, tc.opts); err == nil {
				t.Error("encrypting twice was accepted")
			}

			// Decrypt what was written, from text, as another process would.
			back := parse(t, out)
			if err := Decrypt(back, keyringWith(t, tc.pgp, tc.age), DecryptOptions{}); err != nil {
				t.Fatal(err)
			}
			got := render(t, back)
			if IsEncrypted(back) {
				t.Errorf("sops metadata left:\n%s", got)
			}
			want := plainValues(t, plainDoc)
			if g := plainValues(t, got); !equalYAML(t, g, want) {
				t.Errorf("round trip differs:\n--- got\n%s\n--- want\n%s", got, plainDoc)
			}
			if !strings.Contains(got, secretComment) {
				t.Errorf("the comment did not come back:\n%s", got)
			}
		})
	}
}

func equalYAML(t *testing.T, a, b map[string]any) bool {
	t.Helper()
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return bytes.Equal(x, y)
}

// encryptedDoc encrypts plainDoc for the keys and returns the text.
func encryptedDoc(t *testing.T, o EncryptOptions, pub *Keyring) string {
	t.Helper()
	doc := parse(t, plainDoc)
	if err := Encrypt(doc, pub, o); err != nil {
		t.Fatal(err)
	}
	return render(t, doc)
}

func assertNoSecret(t *testing.T, msg string, extra ...string) {
	t.Helper()
	for _, s := range append([]string{secretPassword, "first-list-secret", "line one of the secret", secretComment, "PRIVATE KEY", "AGE-SECRET-KEY"}, extra...) {
		if strings.Contains(msg, s) {
			t.Errorf("error shows %q: %s", s, msg)
		}
	}
}

func TestDecryptFailures(t *testing.T) {
	right := sopstest.NewPGPKey(t, "right")
	wrong := sopstest.NewPGPKey(t, "wrong")
	rightAge, wrongAge := sopstest.NewAgeKey(t), sopstest.NewAgeKey(t)
	pub := publicKeyring(t, right)
	text := encryptedDoc(t, EncryptOptions{PGP: []string{right.Fingerprint}, Age: []string{rightAge.Recipient}}, pub)

	// Tampering: a clear value changed (MAC), an encrypted value moved to
	// another path (AES-GCM additional data), the MAC itself changed.
	clearChanged := strings.Replace(text, "visible-by-suffix", "changed-by-someone", 1)
	if clearChanged == text {
		t.Fatal("fixture: clear value not found")
	}
	encRe := regexp.MustCompile(`(password|port): (ENC\[[^\]]+\])`)
	m := encRe.FindAllStringSubmatch(text, -1)
	if len(m) != 2 {
		t.Fatalf("fixture: %d encrypted password/port values", len(m))
	}
	swapped := strings.Replace(strings.Replace(text, m[0][2], "SWAP", 1), m[1][2], m[0][2], 1)
	swapped = strings.Replace(swapped, "SWAP", m[1][2], 1)
	macRe := regexp.MustCompile(`mac: ENC\[AES256_GCM,data:([^,]+),`)
	mm := macRe.FindStringSubmatch(text)
	if mm == nil {
		t.Fatal("fixture: no mac")
	}
	flipped := []byte(mm[1])
	if flipped[0] == 'A' {
		flipped[0] = 'B'
	} else {
		flipped[0] = 'A'
	}
	macChanged := strings.Replace(text, mm[1], string(flipped), 1)

	cases := []struct {
		name      string
		text      string
		keys      *Keyring
		ignoreMAC bool
		wantIs    error
		want      []string // substrings of the error
		ok        bool
	}{
		{name: "right pgp key", text: text, keys: keyringWith(t, []sopstest.PGPKey{right}, nil), ok: true},
		{name: "right age key", text: text, keys: keyringWith(t, nil, []sopstest.AgeKey{rightAge}), ok: true},
		{
			name: "wrong keys", text: text, keys: keyringWith(t, []sopstest.PGPKey{wrong}, []sopstest.AgeKey{wrongAge}), wantIs: ErrNoKey,
			want: []string{"no key could decrypt", "pgp " + right.Fingerprint, "age " + rightAge.Recipient, "imported private keys: pgp " + wrong.Fingerprint + ", age " + wrongAge.Recipient},
		},
		{
			name: "public key only", text: text, keys: pub, wantIs: ErrNoKey,
			want: []string{"imported private keys: none", "SOPS_IMPORT_PGP"},
		},
		{name: "no keys", text: text, keys: nil, wantIs: ErrNoKey, want: []string{"none (set $SOPS_IMPORT_PGP or $SOPS_IMPORT_AGE)"}},
		{name: "clear value changed", text: clearChanged, keys: keyringWith(t, []sopstest.PGPKey{right}, nil), wantIs: ErrMACMismatch, want: []string{"changed after it was encrypted", "ignore-mac"}},
		{name: "clear value changed, ignore-mac", text: clearChanged, keys: keyringWith(t, []sopstest.PGPKey{right}, nil), ignoreMAC: true, ok: true},
		{name: "mac changed", text: macChanged, keys: keyringWith(t, []sopstest.PGPKey{right}, nil), wantIs: ErrMACMismatch},
		{name: "mac changed, ignore-mac", text: macChanged, keys: keyringWith(t, []sopstest.PGPKey{right}, nil), ignoreMAC: true, ok: true},
		{
			name: "encrypted values swapped", text: swapped, keys: keyringWith(t, []sopstest.PGPKey{right}, nil), ignoreMAC: true,
			want: []string{"data.", "AES-GCM authentication failed"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := parse(t, tc.text)
			before := render(t, doc)
			err := Decrypt(doc, tc.keys, DecryptOptions{IgnoreMAC: tc.ignoreMAC})
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				if out := render(t, doc); !strings.Contains(out, secretPassword) {
					t.Errorf("not decrypted:\n%s", out)
				}
				return
			}
			if err == nil {
				t.Fatalf("decrypted:\n%s", render(t, doc))
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			assertNoSecret(t, err.Error())
			if after := render(t, doc); after != before {
				t.Errorf("a failed decryption changed the document:\n%s", after)
			}
		})
	}
}

func TestEncryptErrors(t *testing.T) {
	p := sopstest.NewPGPKey(t, "p")
	cases := []struct {
		name string
		opts EncryptOptions
		want string
	}{
		{"no recipient", EncryptOptions{}, "no recipient"},
		{"unknown fingerprint", EncryptOptions{PGP: []string{"0123456789ABCDEF0123456789ABCDEF01234567"}}, "no imported PGP key has fingerprint 0123456789ABCDEF0123456789ABCDEF01234567"},
		{"bad age recipient", EncryptOptions{Age: []string{"age1notarecipient"}}, `"age1notarecipient" is not an age recipient`},
		{"two rules", EncryptOptions{PGP: []string{p.Fingerprint}, Rules: Rules{EncryptedRegex: "a", UnencryptedSuffix: "_x"}}, "only one of"},
		{"bad regex", EncryptOptions{PGP: []string{p.Fingerprint}, Rules: Rules{EncryptedRegex: "("}}, "encrypted-regex"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := parse(t, plainDoc)
			err := Encrypt(doc, publicKeyring(t, p), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if render(t, doc) != render(t, parse(t, plainDoc)) {
				t.Error("a failed encryption changed the document")
			}
		})
	}
}

func TestImportErrorsShowNoKeyMaterial(t *testing.T) {
	a := sopstest.NewAgeKey(t)
	p := sopstest.NewPGPKey(t, "p")
	// A typo in a key: the error gives the line, not the text.
	typo := strings.Replace(a.Identity, "AGE-SECRET-KEY-1", "AGE-SECRET-KEY-1X", 1)
	var k Keyring
	_, err := k.ImportAge([]byte("# keys\n"+typo+"\n"), "$SOPS_IMPORT_AGE")
	if err == nil || !strings.Contains(err.Error(), "$SOPS_IMPORT_AGE: line 2") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), typo[20:40]) {
		t.Errorf("error shows the key: %v", err)
	}
	_, err = k.ImportAge([]byte("not-a-key "+a.Identity), "x")
	if err == nil || strings.Contains(err.Error(), a.Identity[20:40]) {
		t.Errorf("error %v", err)
	}

	// A PGP block cut short.
	cut := p.Private[:len(p.Private)/2] + "\n-----END PGP PRIVATE KEY BLOCK-----\n"
	_, err = k.ImportPGP([]byte(cut), "cmd-import-pgp")
	if err == nil || !strings.Contains(err.Error(), "cmd-import-pgp: PGP key block 1") {
		t.Fatalf("error %v", err)
	}
	assertNoSecret(t, err.Error(), p.Private[200:240])

	// Placeholder text, as upstream's manifests/.Private-keys/my.key holds.
	n, err := k.ImportPGP([]byte("# put here your key\n"), "my.key")
	if n != 0 || err != nil {
		t.Errorf("placeholder: %d keys, %v", n, err)
	}
}

func TestPassphraseProtectedKeyRefused(t *testing.T) {
	e, err := openpgp.NewEntity("locked", "", "locked@example.invalid", &packet.Config{RSABits: 2048})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.EncryptPrivateKeys([]byte("pass"), nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := pgparmor.Encode(&buf, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivateWithoutSigning(w, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var k Keyring
	_, err = k.ImportPGP(buf.Bytes(), "$SOPS_IMPORT_PGP")
	if err == nil || !strings.Contains(err.Error(), "passphrase") || !strings.Contains(err.Error(), fingerprint(e.PrimaryKey.Fingerprint)) {
		t.Fatalf("error %v", err)
	}
}

func TestLoadEnv(t *testing.T) {
	p := sopstest.NewPGPKey(t, "env")
	a, b := sopstest.NewAgeKey(t), sopstest.NewAgeKey(t)
	file := t.TempDir() + "/keys.txt"
	if err := writeFile(file, b.Identity+"\n"); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		EnvImportPGP:  p.Private,
		EnvImportAge:  a.Identity,
		EnvAgeKeyFile: file,
	}
	var k Keyring
	if err := k.LoadEnv(func(s string) string { return env[s] }); err != nil {
		t.Fatal(err)
	}
	if got := k.pgpSecretFingerprints(); len(got) != 1 || got[0] != p.Fingerprint {
		t.Errorf("pgp keys %v", got)
	}
	if strings.Join(k.ageRecipients, ",") != a.Recipient+","+b.Recipient {
		t.Errorf("age recipients %v", k.ageRecipients)
	}
	env[EnvAgeKeyFile] = file + ".missing"
	if err := (&Keyring{}).LoadEnv(func(s string) string { return env[s] }); err == nil || !strings.Contains(err.Error(), EnvAgeKeyFile) {
		t.Errorf("missing key file: %v", err)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
