package secret

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/secret/sops"
)

// Options are the flags and dependencies of both verbs.
type Options struct {
	Streams cli.IOStreams
	// Getenv reads the environment (keys); os.Getenv in production.
	Getenv func(string) string

	File    string
	InPlace bool

	// encrypt
	Age              []string
	PGP              []string
	PGPKeyFiles      []string
	EncryptedRegex   string
	UnencryptedRegex string
	EncryptedSuffix  string
	UnencryptedSuff  string
	MACOnlyEncrypted bool

	// decrypt
	IgnoreMAC    bool
	AgeKeyFiles  []string
	NoDefaultAge bool
}

// NewCmd returns the secret command with its encrypt and decrypt verbs.
// run replaces the verbs' behaviour in tests of flag parsing; nil runs
// them.
func NewCmd(streams cli.IOStreams, run func(verb string, o *Options) error) *cobra.Command {
	if run == nil {
		run = func(verb string, o *Options) error {
			if verb == "encrypt" {
				return o.Encrypt()
			}
			return o.Decrypt()
		}
	}
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Encrypt and decrypt site secrets with SOPS (age and PGP keys)",
		Long: `Encrypt and decrypt the documents of a YAML file in the SOPS format that
the built-in sops function (image gcr.io/kpt-fn-contrib/sops) decrypts
during a build. Each document is encrypted on its own, with its own sops
metadata, as the function does.

Keys for decryption (and PGP public keys for encryption) come from
$SOPS_IMPORT_PGP (armored keys), $SOPS_IMPORT_AGE and $SOPS_AGE_KEY (age
identities), $SOPS_AGE_KEY_FILE, sops' default age key file
($XDG_CONFIG_HOME/sops/age/keys.txt), --pgp-key and --age-key-file. No gpg
program, agent or keyserver is used.`,
	}
	newOpts := func() *Options { return &Options{Streams: streams, Getenv: os.Getenv} }

	eo := newOpts()
	enc := &cobra.Command{
		Use:   "encrypt FILE",
		Short: "Encrypt the documents of a YAML file for age recipients and PGP keys",
		Example: `  airshipctl secret encrypt --age age1... secrets.yaml > secrets.enc.yaml
  SOPS_IMPORT_PGP="$(cat team.pub)" airshipctl secret encrypt --pgp FBC7B9E2A4F9289AC0C1D4843D16CEE4A27381B4 \
      --encrypted-regex '^(data)$' --in-place catalogue.yaml
  airshipctl secret encrypt --pgp-key team.pub --pgp FBC7B9E2... - < secrets.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			eo.File = args[0]
			return run("encrypt", eo)
		},
	}
	f := enc.Flags()
	f.StringArrayVar(&eo.Age, "age", nil, "age recipient (age1…) to encrypt for; repeat or separate with commas (default $SOPS_AGE_RECIPIENTS)")
	f.StringArrayVar(&eo.PGP, "pgp", nil, "fingerprint of a PGP key to encrypt for; repeat or separate with commas (default $SOPS_PGP_FP)")
	f.StringArrayVar(&eo.PGPKeyFiles, "pgp-key", nil, "file of armored PGP public keys to import for --pgp")
	f.StringVar(&eo.EncryptedRegex, "encrypted-regex", "", "encrypt only values under keys matching this regular expression")
	f.StringVar(&eo.UnencryptedRegex, "unencrypted-regex", "", "leave values under keys matching this regular expression in clear")
	f.StringVar(&eo.EncryptedSuffix, "encrypted-suffix", "", "encrypt only values under keys ending with this suffix")
	f.StringVar(&eo.UnencryptedSuff, "unencrypted-suffix", "", "leave values under keys ending with this suffix in clear (the default rule: _unencrypted)")
	f.BoolVar(&eo.MACOnlyEncrypted, "mac-only-encrypted", false, "compute the MAC over encrypted values only, so clear values may change")
	f.BoolVarP(&eo.InPlace, "in-place", "i", false, "write the result back to FILE instead of stdout")
	enc.MarkFlagsMutuallyExclusive("encrypted-regex", "unencrypted-regex", "encrypted-suffix", "unencrypted-suffix")

	do := newOpts()
	dec := &cobra.Command{
		Use:   "decrypt FILE",
		Short: "Decrypt the SOPS-encrypted documents of a YAML file",
		Example: `  SOPS_IMPORT_AGE="$(cat key.txt)" airshipctl secret decrypt secrets.enc.yaml
  SOPS_IMPORT_PGP="$(cat my.key)" airshipctl secret decrypt --in-place catalogue.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			do.File = args[0]
			return run("decrypt", do)
		},
	}
	f = dec.Flags()
	f.BoolVar(&do.IgnoreMAC, "ignore-mac", false, "decrypt even when the MAC shows the document was changed after encryption")
	f.StringArrayVar(&do.PGPKeyFiles, "pgp-key", nil, "file of armored PGP private keys to decrypt with")
	f.StringArrayVar(&do.AgeKeyFiles, "age-key-file", nil, "file of age identities to decrypt with")
	f.BoolVarP(&do.InPlace, "in-place", "i", false, "write the result back to FILE instead of stdout")

	cmd.AddCommand(enc, dec)
	return cmd
}

func splitAll(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// keyring loads the environment's keys and the files named by flags.
func (o *Options) keyring(defaultAgeFile bool) (*sops.Keyring, error) {
	var k sops.Keyring
	if err := k.LoadEnv(o.Getenv); err != nil {
		return nil, err
	}
	for _, f := range o.PGPKeyFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--pgp-key: %w", err)
		}
		n, err := k.ImportPGP(b, f)
		if err != nil {
			return nil, fmt.Errorf("--pgp-key: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("--pgp-key %s: no armored PGP key block in the file", f)
		}
	}
	for _, f := range o.AgeKeyFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--age-key-file: %w", err)
		}
		if _, err := k.ImportAge(b, f); err != nil {
			return nil, fmt.Errorf("--age-key-file: %w", err)
		}
	}
	if defaultAgeFile && o.Getenv(sops.EnvAgeKeyFile) == "" {
		if f := sops.DefaultAgeKeyFile(o.Getenv); f != "" {
			if b, err := os.ReadFile(f); err == nil {
				if _, err := k.ImportAge(b, f); err != nil {
					return nil, err
				}
			} else if !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
	}
	return &k, nil
}

// Encrypt encrypts every document of the file.
func (o *Options) Encrypt() error {
	age := splitAll(o.Age)
	if len(age) == 0 {
		age = splitAll([]string{o.Getenv("SOPS_AGE_RECIPIENTS")})
	}
	pgp := splitAll(o.PGP)
	if len(pgp) == 0 {
		pgp = splitAll([]string{o.Getenv("SOPS_PGP_FP")})
	}
	if len(age) == 0 && len(pgp) == 0 {
		return errors.New("no recipient: give --age or --pgp (or set $SOPS_AGE_RECIPIENTS or $SOPS_PGP_FP)")
	}
	k, err := o.keyring(false)
	if err != nil {
		return err
	}
	opts := sops.EncryptOptions{
		Age: age, PGP: pgp, MACOnlyEncrypted: o.MACOnlyEncrypted,
		Rules: sops.Rules{
			EncryptedRegex: o.EncryptedRegex, UnencryptedRegex: o.UnencryptedRegex,
			EncryptedSuffix: o.EncryptedSuffix, UnencryptedSuffix: o.UnencryptedSuff,
		},
	}
	return o.transform(func(doc *yaml.Node) error {
		if sops.IsEncrypted(doc) {
			return errors.New("already encrypted (it has a sops key)")
		}
		return sops.Encrypt(doc, k, opts)
	})
}

// Decrypt decrypts every encrypted document of the file; documents
// without sops metadata are written as they are.
func (o *Options) Decrypt() error {
	k, err := o.keyring(true)
	if err != nil {
		return err
	}
	return o.transform(func(doc *yaml.Node) error {
		if !sops.IsEncrypted(doc) {
			return nil
		}
		return sops.Decrypt(doc, k, sops.DecryptOptions{IgnoreMAC: o.IgnoreMAC})
	})
}

// transform reads the file's documents, applies f to each and writes them
// to stdout or back to the file. Nothing is written when a document fails.
func (o *Options) transform(f func(*yaml.Node) error) error {
	var in []byte
	var err error
	if o.File == "-" {
		if o.InPlace {
			return errors.New("--in-place needs a file, not -")
		}
		in, err = io.ReadAll(o.Streams.In)
	} else {
		in, err = os.ReadFile(o.File)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", o.File, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(in))
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	for i := 1; ; i++ {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("%s: document %d: %w", o.File, i, err)
		}
		if len(doc.Content) == 0 || (len(doc.Content) == 1 && doc.Content[0].ShortTag() == "!!null") {
			continue
		}
		if err := f(&doc); err != nil {
			return fmt.Errorf("%s: document %d (%s): %w", o.File, i, describe(&doc), err)
		}
		if err := enc.Encode(&doc); err != nil {
			return fmt.Errorf("%s: document %d: %w", o.File, i, err)
		}
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if !o.InPlace {
		_, err := o.Streams.Out.Write(out.Bytes())
		return err
	}
	return writeAtomic(o.File, out.Bytes())
}

// describe names a document by kind and name, as errors do.
func describe(doc *yaml.Node) string {
	var m struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name      string `yaml:"name"`
			Namespace string `yaml:"namespace"`
		} `yaml:"metadata"`
	}
	if err := doc.Decode(&m); err != nil || m.Kind == "" {
		return "no kind"
	}
	if m.Metadata.Namespace != "" {
		return m.Kind + "/" + m.Metadata.Namespace + "/" + m.Metadata.Name
	}
	return m.Kind + "/" + m.Metadata.Name
}

// writeAtomic replaces path with data, keeping its mode (0600 for a new file).
func writeAtomic(path string, data []byte) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return fileutil.WriteAtomic(path, data, mode)
}
