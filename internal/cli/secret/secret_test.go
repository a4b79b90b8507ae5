package secret

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/secret/sops/sopstest"
)

const plain = `apiVersion: airshipit.org/v1alpha1
kind: VariableCatalogue
metadata:
  name: first
data:
  password: first-s3cret
---
apiVersion: v1
kind: Secret
metadata:
  name: second
  namespace: ns
stringData:
  token: second-s3cret
`

// run executes the command with args and the environment env.
func run(t *testing.T, env map[string]string, stdin string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := cli.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	cmd := NewCmd(streams, func(verb string, o *Options) error {
		o.Getenv = func(k string) string { return env[k] }
		if verb == "encrypt" {
			return o.Encrypt()
		}
		return o.Decrypt()
	})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

func genKeys(t *testing.T) (ageID, ageRcp, pgpFP, pgpPriv, pgpPub string) {
	t.Helper()
	a, p := sopstest.NewAgeKey(t), sopstest.NewPGPKey(t, "cli")
	return a.Identity, a.Recipient, p.Fingerprint, p.Private, p.Public
}

func TestEncryptDecrypt(t *testing.T) {
	ageID, ageRcp, fp, pgpPriv, pgpPub := genKeys(t)
	otherID, _, _, _, _ := genKeys(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "secrets.yaml")
	pubFile := filepath.Join(dir, "team.pub")
	keyFile := filepath.Join(dir, "keys.txt")
	plainFile := filepath.Join(dir, "plain.yaml")
	for p, c := range map[string]string{file: plain, plainFile: plain, pubFile: pgpPub, keyFile: ageID + "\n"} {
		if err := os.WriteFile(p, []byte(c), 0o640); err != nil {
			t.Fatal(err)
		}
	}

	// Encrypt for both an age recipient and a PGP key, to stdout.
	enc, err := run(t, nil, "", "encrypt", "--age", ageRcp, "--pgp-key", pubFile, "--pgp", fp, "--encrypted-regex", "^(data|stringData)$", file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(enc, "\nsops:\n") != 2 || strings.Contains(enc, "s3cret") || !strings.Contains(enc, "name: second") {
		t.Fatalf("encrypted output:\n%s", enc)
	}
	if err := os.WriteFile(file, []byte(enc), 0o640); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string // substring of output or error
		fail bool
	}{
		{name: "age from SOPS_IMPORT_AGE", env: map[string]string{"SOPS_IMPORT_AGE": ageID}, args: []string{"decrypt", file}, want: "password: first-s3cret"},
		{name: "age from SOPS_AGE_KEY_FILE", env: map[string]string{"SOPS_AGE_KEY_FILE": keyFile}, args: []string{"decrypt", file}, want: "token: second-s3cret"},
		{name: "age from --age-key-file", env: nil, args: []string{"decrypt", "--age-key-file", keyFile, file}, want: "token: second-s3cret"},
		{name: "age from sops' default key file", env: map[string]string{"XDG_CONFIG_HOME": writeDefault(t, ageID)}, args: []string{"decrypt", file}, want: "password: first-s3cret"},
		{name: "pgp from SOPS_IMPORT_PGP", env: map[string]string{"SOPS_IMPORT_PGP": pgpPriv}, args: []string{"decrypt", file}, want: "password: first-s3cret"},
		{name: "stdin", env: map[string]string{"SOPS_IMPORT_AGE": ageID}, args: []string{"decrypt", "-"}, want: "password: first-s3cret"},
		{name: "wrong key", env: map[string]string{"SOPS_IMPORT_AGE": otherID}, args: []string{"decrypt", file}, fail: true,
			want: file + ": document 1 (VariableCatalogue/first): no key could decrypt the data key"},
		{name: "no recipient", args: []string{"encrypt", file}, fail: true, want: "no recipient"},
		{name: "already encrypted", args: []string{"encrypt", "--age", ageRcp, file}, fail: true, want: "document 1 (VariableCatalogue/first): already encrypted"},
		{name: "unknown pgp key", args: []string{"encrypt", "--pgp", fp, plainFile}, fail: true, want: "no imported PGP key has fingerprint " + fp},
		{name: "two rules", args: []string{"encrypt", "--age", ageRcp, "--encrypted-regex", "a", "--unencrypted-regex", "b", file}, fail: true, want: "none of the others can be"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, tc.env, enc, tc.args...)
			if tc.fail {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "AGE-SECRET-KEY") {
					t.Errorf("error shows a secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tc.want) || strings.Contains(out, "sops:") {
				t.Errorf("output lacks %q or keeps sops metadata:\n%s", tc.want, out)
			}
		})
	}

	// In place, keeping the file's mode; a tampered file needs --ignore-mac.
	tampered := strings.Replace(enc, "name: first", "name: first-renamed", 1)
	if err := os.WriteFile(file, []byte(tampered), 0o640); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SOPS_IMPORT_AGE": ageID}
	if _, err := run(t, env, "", "decrypt", "-i", file); err == nil || !strings.Contains(err.Error(), "MAC mismatch") {
		t.Fatalf("tampered file: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != tampered {
		t.Error("a failed decryption wrote the file")
	}
	if _, err := run(t, env, "", "decrypt", "--ignore-mac", "--in-place", file); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	if !strings.Contains(string(b), "password: first-s3cret") || !strings.Contains(string(b), "name: first-renamed") {
		t.Errorf("in place:\n%s", b)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
}

func writeDefault(t *testing.T, id string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sops", "age"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sops", "age", "keys.txt"), []byte(id+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
