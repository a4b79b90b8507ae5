package fn

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/airshipit/airship-go/internal/secret/sops"
)

// SopsImage is the container image upstream sites name for the SOPS KRM
// function; any tag or digest of it runs the built-in Sops.
const SopsImage = "gcr.io/kpt-fn-contrib/sops"

// Built-in function names BuiltinImage returns.
const (
	BuiltinSops                   = "sops"
	BuiltinTemplater              = "templater"
	BuiltinReplacementTransformer = "replacement-transformer"
)

// BuiltinImage reports which built-in function serves a container image,
// whatever its tag, digest or (for Airship's own functions) registry:
// "sops" for gcr.io/kpt-fn-contrib/sops, "templater" and
// "replacement-transformer" for Airship's templater and
// replacement-transformer images. Executors use it to run such images in
// process instead of in a container runtime.
func BuiltinImage(image string) (string, bool) {
	repo := ImageRepository(image)
	switch {
	case repo == "kpt-fn-contrib/sops" || strings.HasSuffix(repo, "/kpt-fn-contrib/sops"):
		return BuiltinSops, true
	case repo == "templater" || strings.HasSuffix(repo, "/templater"):
		return BuiltinTemplater, true
	case repo == "replacement-transformer" || strings.HasSuffix(repo, "/replacement-transformer"):
		return BuiltinReplacementTransformer, true
	}
	return "", false
}

// ImageRepository strips the digest and tag from an image reference.
func ImageRepository(image string) string {
	image = strings.TrimSpace(image)
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i >= 0 && !strings.Contains(image[i:], "/") {
		image = image[:i]
	}
	return image
}

// The sops function's ConfigMap keys (upstream's names).
const (
	sopsCmd                   = "cmd"
	sopsCmdFilter             = "cmd-json-path-filter"
	sopsCmdTolerateFailures   = "cmd-tolerate-failures"
	sopsCmdExtraParamsFilter  = "cmd-extra-params-json-path-filter"
	sopsCmdImportPGP          = "cmd-import-pgp"
	sopsCmdImportAge          = "cmd-import-age"
	sopsIgnoreMAC             = "ignore-mac"
	sopsVerbose               = "verbose"
	sopsOverridePreexecCmd    = "override-preexec-cmd"
	sopsOverrideImportCmd     = "override-import-cmd"
	sopsOverrideDetachedAnnos = "override-detached-annotations"
	// Passed to sops as --<key> upstream.
	sopsEncryptedRegex    = "encrypted-regex"
	sopsUnencryptedRegex  = "unencrypted-regex"
	sopsEncryptedSuffix   = "encrypted-suffix"
	sopsUnencryptedSuffix = "unencrypted-suffix"
	sopsMACOnlyEncrypted  = "mac-only-encrypted"
	sopsPGP               = "pgp"
	sopsAge               = "age"
)

// sopsUnsupported are sops options that need a cloud service, a key
// service or a feature this implementation does not have.
var sopsUnsupported = map[string]string{
	"kms":                             "AWS KMS",
	"aws-profile":                     "AWS KMS",
	"gcp-kms":                         "GCP KMS",
	"azure-kv":                        "Azure Key Vault",
	"hc-vault-transit":                "Vault transit",
	"hckms":                           "Huawei Cloud KMS",
	"keyservice":                      "key services",
	"enable-local-keyservice":         "key services",
	"shamir-secret-sharing-threshold": "Shamir key groups when encrypting",
	"encrypted-comment-regex":         "comment rules",
	"unencrypted-comment-regex":       "comment rules",
}

// Annotations tools add to documents after they were encrypted (kpt,
// kustomize); they are taken off before decryption, so that the MAC still
// matches, and put back after. Upstream's default list, plus kustomize's
// internal.config.kubernetes.io/ annotations, which are always detached.
var defaultDetachedAnnotations = []string{
	"config.kubernetes.io/index",
	"config.kubernetes.io/path",
	"config.k8s.io/id",
	"kustomize.config.k8s.io/id",
}

const internalAnnotationPrefix = "internal.config.kubernetes.io/"

// Sops is upstream's gcr.io/kpt-fn-contrib/sops KRM function, configured by
// a ConfigMap's data, run in process. See docs/secrets.md.
type Sops struct {
	name      string // ConfigMap/name, for messages
	encrypt   bool
	filter    *jsonFilter
	tolerate  bool
	ignoreMAC bool
	detached  []string
	keys      sops.Keyring
	opts      sops.EncryptOptions
	// extraFilters are cmd-extra-params-json-path-filter values, applied
	// when the items are known.
	extraFilters []*jsonFilter
	getenv       func(string) string
	// Warn receives a line per document left as it was under
	// cmd-tolerate-failures; nil means stderr (which kustomize shows).
	Warn io.Writer
}

// NewSops reads the function's ConfigMap. Keys are imported from the
// environment (SOPS_IMPORT_PGP, SOPS_IMPORT_AGE, SOPS_AGE_KEY,
// SOPS_AGE_KEY_FILE) and from cmd-import-pgp / cmd-import-age values.
func NewSops(config *yaml.RNode) (*Sops, error) {
	return newSops(config, os.Getenv)
}

func newSops(config *yaml.RNode, getenv func(string) string) (*Sops, error) {
	s := &Sops{name: config.GetKind() + "/" + config.GetName(), detached: defaultDetachedAnnotations, getenv: getenv}
	if config.GetKind() != "ConfigMap" {
		return nil, fmt.Errorf("the sops function's config must be a ConfigMap, not %s", config.GetKind())
	}
	for _, f := range []string{"binaryData", "immutable"} {
		if mapValue(config.YNode(), f) != nil {
			return nil, fmt.Errorf("%s: field %s is not a sops function setting", s.name, f)
		}
	}
	data, err := stringMap(config.YNode(), "data", false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	if err := s.keys.LoadEnv(getenv); err != nil {
		return nil, fmt.Errorf("%s: importing keys: %w", s.name, err)
	}
	for _, kv := range data {
		if err := s.set(kv[0], kv[1], "data."+kv[0]); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	if s.encrypt {
		if v := getenv("SOPS_PGP_FP"); v != "" && len(s.opts.PGP) == 0 {
			s.opts.PGP = splitList(v)
		}
		if v := getenv("SOPS_AGE_RECIPIENTS"); v != "" && len(s.opts.Age) == 0 {
			s.opts.Age = splitList(v)
		}
	}
	return s, nil
}

// stringMap reads a map of strings (data, or stringData) in order. Values
// that are YAML booleans or numbers are taken as their text, as upstream's
// ConfigMap data are; decodeBase64 decodes Secret data.
func stringMap(obj *yaml.Node, field string, decodeBase64 bool) ([][2]string, error) {
	m := mapValue(obj, field)
	if m == nil || isNull(m) {
		return nil, nil
	}
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s is %s, not a map", field, kindName(m))
	}
	var out [][2]string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s.%s is %s, not a string", field, k, kindName(v))
		}
		val := v.Value
		if decodeBase64 {
			b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(val))
			if err != nil {
				return nil, fmt.Errorf("%s.%s is not base64", field, k)
			}
			val = string(b)
		}
		out = append(out, [2]string{k, val})
	}
	return out, nil
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseFlag is how upstream reads cmd-tolerate-failures: anything but
// "false" turns it on. ignore-mac and verbose were on whenever present
// upstream; here "false" turns them off too.
func parseFlag(v string) bool { return strings.TrimSpace(strings.ToLower(v)) != "false" }

// set applies one setting; where names it for errors (data.key, or the
// document and key it came from through cmd-extra-params-json-path-filter).
func (s *Sops) set(key, val, where string) error {
	switch key {
	case sopsCmd:
		switch strings.TrimSpace(val) {
		case "decrypt":
			s.encrypt = false
		case "encrypt":
			s.encrypt = true
		default:
			return fmt.Errorf("%s: %q is neither decrypt nor encrypt", where, val)
		}
	case sopsCmdFilter:
		f, err := parseJSONFilter(val)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		s.filter = f
	case sopsCmdExtraParamsFilter:
		f, err := parseJSONFilter(val)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		s.extraFilters = append(s.extraFilters, f)
	case sopsCmdTolerateFailures:
		s.tolerate = parseFlag(val)
	case sopsIgnoreMAC:
		s.ignoreMAC = parseFlag(val)
	case sopsVerbose, sopsOverridePreexecCmd, sopsOverrideImportCmd:
		// Upstream ran these shell commands to import keys into gpg; keys
		// are imported in process here, so there is nothing to run.
	case sopsOverrideDetachedAnnos:
		s.detached = splitList(strings.Join(strings.Fields(val), ""))
	case sopsCmdImportPGP:
		if _, err := s.keys.ImportPGP([]byte(val), where); err != nil {
			return err
		}
	case sopsCmdImportAge:
		if _, err := s.keys.ImportAge([]byte(val), where); err != nil {
			return err
		}
	case sopsEncryptedRegex:
		s.opts.EncryptedRegex = val
	case sopsUnencryptedRegex:
		s.opts.UnencryptedRegex = val
	case sopsEncryptedSuffix:
		s.opts.EncryptedSuffix = val
	case sopsUnencryptedSuffix:
		s.opts.UnencryptedSuffix = val
	case sopsMACOnlyEncrypted:
		s.opts.MACOnlyEncrypted = parseFlag(val)
	case sopsPGP:
		s.opts.PGP = append(s.opts.PGP, splitList(val)...)
	case sopsAge:
		s.opts.Age = append(s.opts.Age, splitList(val)...)
	default:
		if what, ok := sopsUnsupported[key]; ok {
			return fmt.Errorf("%s: %s are not supported by the built-in sops function (PGP and age keys are)", where, what)
		}
		return fmt.Errorf("%s: unknown sops function setting %q", where, key)
	}
	return nil
}

// extraParams applies the settings found in the ConfigMaps and Secrets
// (data, base64-decoded for a Secret, and stringData) among items that
// match cmd-extra-params-json-path-filter.
func (s *Sops) extraParams(items []*yaml.RNode) error {
	for _, f := range s.extraFilters {
		for _, kind := range []string{"ConfigMap", "Secret"} {
			for _, it := range items {
				if it.GetKind() != kind || !f.matches(it) {
					continue
				}
				id := it.GetKind() + "/" + it.GetName()
				var kvs [][2]string
				data, err := stringMap(it.YNode(), "data", kind == "Secret")
				if err != nil {
					return fmt.Errorf("%s (%s): %w", id, sopsCmdExtraParamsFilter, err)
				}
				kvs = append(kvs, data...)
				if kind == "Secret" {
					sd, err := stringMap(it.YNode(), "stringData", false)
					if err != nil {
						return fmt.Errorf("%s (%s): %w", id, sopsCmdExtraParamsFilter, err)
					}
					kvs = append(kvs, sd...)
				}
				for _, kv := range kvs {
					if kv[0] == sopsCmdExtraParamsFilter {
						return fmt.Errorf("%s key %s: nested %s is not allowed", id, kv[0], sopsCmdExtraParamsFilter)
					}
					if err := s.set(kv[0], kv[1], id+" key "+kv[0]); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// Filter decrypts (or encrypts) the matching items, keeping their order.
// With cmd: decrypt only documents with a top-level sops key are touched.
func (s *Sops) Filter(items []*yaml.RNode) ([]*yaml.RNode, error) {
	if err := s.extraParams(items); err != nil {
		return nil, err
	}
	if s.encrypt && len(s.opts.PGP) == 0 && len(s.opts.Age) == 0 {
		return nil, errors.New("cmd: encrypt needs recipients: set pgp or age (in data, through " +
			sopsCmdExtraParamsFilter + ", or $SOPS_PGP_FP / $SOPS_AGE_RECIPIENTS)")
	}
	warn := s.Warn
	if warn == nil {
		warn = os.Stderr
	}
	op := "decrypting"
	if s.encrypt {
		op = "encrypting"
	}
	for _, it := range items {
		if !s.filter.matches(it) {
			continue
		}
		if !s.encrypt && !sops.IsEncrypted(it.YNode()) {
			continue
		}
		err := s.one(it)
		if err == nil {
			continue
		}
		id := it.GetKind() + "/" + it.GetName()
		if ns := it.GetNamespace(); ns != "" {
			id = it.GetKind() + "/" + ns + "/" + it.GetName()
		}
		if p := docPath(it); p != "" {
			id += " (file " + p + ")"
		}
		if s.tolerate {
			fmt.Fprintf(warn, "warning: %s %s left as it is (%s): %s\n", op, id, sopsCmdTolerateFailures, redact(err.Error()))
			continue
		}
		if errors.Is(err, sops.ErrMACMismatch) {
			return nil, fmt.Errorf("%s %s: %w; the function sees the document as the build left it, "+
				"so a transformer that ran before it (a label, a namespace, a patch) changes what the MAC covers: "+
				"set ignore-mac: true, as upstream's decrypt-secrets does, or decrypt before transforming", op, id, err)
		}
		return nil, fmt.Errorf("%s %s: %w", op, id, err)
	}
	return items, nil
}

// one encrypts or decrypts a document in place with the detached
// annotations taken off; on error the document is unchanged.
func (s *Sops) one(it *yaml.RNode) error {
	detached, err := s.detach(it)
	if err != nil {
		return err
	}
	if s.encrypt {
		err = sops.Encrypt(it.YNode(), &s.keys, s.opts)
	} else {
		err = sops.Decrypt(it.YNode(), &s.keys, sops.DecryptOptions{IgnoreMAC: s.ignoreMAC})
	}
	if rerr := reattach(it, detached); rerr != nil && err == nil {
		err = rerr
	}
	return err
}

type detachedAnnotations struct {
	kv [][2]string
}

func (s *Sops) detach(it *yaml.RNode) (detachedAnnotations, error) {
	var d detachedAnnotations
	annos := it.GetAnnotations()
	if len(annos) == 0 {
		return d, nil
	}
	keep := map[string]string{}
	for k, v := range annos {
		if strings.HasPrefix(k, internalAnnotationPrefix) || containsString(s.detached, k) {
			d.kv = append(d.kv, [2]string{k, v})
		} else {
			keep[k] = v
		}
	}
	if len(d.kv) == 0 {
		return d, nil
	}
	if len(keep) == 0 {
		if err := it.PipeE(yaml.Lookup(yaml.MetadataField), yaml.Clear(yaml.AnnotationsField)); err != nil {
			return d, fmt.Errorf("detaching annotations: %w", err)
		}
		return d, nil
	}
	for _, kv := range d.kv {
		if err := it.PipeE(yaml.ClearAnnotation(kv[0])); err != nil {
			return d, fmt.Errorf("detaching annotation %s: %w", kv[0], err)
		}
	}
	return d, nil
}

func reattach(it *yaml.RNode, d detachedAnnotations) error {
	for _, kv := range d.kv {
		if err := it.PipeE(yaml.SetAnnotation(kv[0], kv[1])); err != nil {
			return fmt.Errorf("reattaching annotation %s: %w", kv[0], err)
		}
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
