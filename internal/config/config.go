package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/fileutil"
	"github.com/airshipit/airship-go/internal/redact"
	"github.com/airshipit/airship-go/internal/strictyaml"
)

// EnvConfigPath names the environment variable that points at the config file.
const EnvConfigPath = "AIRSHIPCONFIG"

// DefaultPath is $AIRSHIPCONFIG, else ~/.airship/config.
func DefaultPath() string {
	if p := os.Getenv(EnvConfigPath); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".airship", "config")
	}
	return filepath.Join(home, ".airship", "config")
}

// Config is a loaded airship config and the file it came from.
type Config struct {
	v1.Config
	// Path is the file the config was read from and is saved to.
	Path string `json:"-"`
}

// ErrNotFound is returned by Load when the file does not exist.
var ErrNotFound = errors.New("airship config not found")

// Load reads and validates the config file at path. A relative path is
// made absolute first, so that what is relative to the config's directory
// (targetPath, and through it mount sources) stays right wherever it is
// used from, such as a toolbox script's temporary working directory.
func Load(path string) (*Config, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s: create one with `airshipctl config init`, or point --airshipconf or $%s at one",
				ErrNotFound, path, EnvConfigPath)
		}
		return nil, fmt.Errorf("reading airship config: %w", err)
	}
	return Parse(data, path)
}

// Parse decodes and validates a config file's content, strictly (an
// unknown field is an error); path names it in messages and is where Save
// writes.
func Parse(data []byte, path string) (*Config, error) {
	c := &Config{Path: path}
	if err := strictyaml.Unmarshal(data, &c.Config); err != nil {
		return nil, fmt.Errorf("airship config %s: %w", path, err)
	}
	if errs := c.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("airship config %s is invalid: %w", path, errs.ToAggregate())
	}
	return c, nil
}

// NewDefault returns the config `config init` writes.
func NewDefault(path string) *Config {
	return &Config{Path: path, Config: v1.Config{
		TypeMeta:       typeMeta(),
		CurrentContext: "ephemeral-cluster",
		Contexts: map[string]*v1.Context{
			"ephemeral-cluster": {Manifest: "default", ManagementConfiguration: "default"},
			"target-cluster":    {Manifest: "default", ManagementConfiguration: "default"},
		},
		Manifests: map[string]*v1.Manifest{
			"default": {
				PhaseRepositoryName: "primary",
				Repositories: map[string]*v1.Repository{
					"primary": {URL: "https://opendev.org/airship/treasuremap", Checkout: &v1.RepoCheckout{Branch: "master"}},
				},
				TargetPath:   "~/.airship/sites",
				MetadataPath: "manifests/site/test-site/metadata.yaml",
			},
		},
		ManagementConfiguration: map[string]*v1.ManagementConfiguration{
			"default": {Type: "redfish", SystemActionRetries: 30, SystemRebootDelay: 30},
		},
		Permissions: &v1.Permissions{DirectoryPermission: 0o750, FilePermission: 0o640},
	}}
}

func typeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: v1.GroupVersion.String(), Kind: "Config"}
}

// Save validates the config and writes it atomically with mode 0600 (it
// may hold repository passwords).
func (c *Config) Save() error {
	if errs := c.Validate(); len(errs) > 0 {
		return fmt.Errorf("not saving invalid airship config %s: %w", c.Path, errs.ToAggregate())
	}
	c.TypeMeta = typeMeta()
	data, err := yaml.Marshal(&c.Config)
	if err != nil {
		return fmt.Errorf("encoding airship config: %w", err)
	}
	if err := fileutil.WriteAtomic(c.Path, data, 0o600); err != nil {
		return fmt.Errorf("saving airship config: %w", err)
	}
	return nil
}

// Validate reports every problem of the config at once, by field path.
func (c *Config) Validate() field.ErrorList {
	var errs field.ErrorList
	if c.APIVersion != "" && c.APIVersion != v1.GroupVersion.String() {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{v1.GroupVersion.String()}))
	}
	if c.Kind != "" && c.Kind != "Config" {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{"Config"}))
	}
	if c.CurrentContext != "" {
		if _, ok := c.Contexts[c.CurrentContext]; !ok {
			errs = append(errs, field.NotFound(field.NewPath("currentContext"), c.CurrentContext))
		}
	}
	for _, name := range sortedKeys(c.Contexts) {
		ctx := c.Contexts[name]
		p := field.NewPath("contexts").Key(name)
		if ctx == nil {
			errs = append(errs, field.Required(p, "context is empty"))
			continue
		}
		if ctx.Manifest != "" {
			if _, ok := c.Manifests[ctx.Manifest]; !ok {
				errs = append(errs, field.NotFound(p.Child("manifest"), ctx.Manifest))
			}
		}
		if ctx.ManagementConfiguration != "" {
			if _, ok := c.ManagementConfiguration[ctx.ManagementConfiguration]; !ok {
				errs = append(errs, field.NotFound(p.Child("managementConfiguration"), ctx.ManagementConfiguration))
			}
		}
	}
	for _, name := range sortedKeys(c.Manifests) {
		errs = append(errs, validateManifest(field.NewPath("manifests").Key(name), c.Manifests[name])...)
	}
	for _, name := range sortedKeys(c.ManagementConfiguration) {
		m := c.ManagementConfiguration[name]
		p := field.NewPath("managementConfiguration").Key(name)
		if m == nil {
			continue
		}
		if m.Type != "" && m.Type != "redfish" && m.Type != "redfish-dell" {
			errs = append(errs, field.NotSupported(p.Child("type"), m.Type, []string{"redfish", "redfish-dell"}))
		}
		if m.SystemActionRetries < 0 {
			errs = append(errs, field.Invalid(p.Child("systemActionRetries"), m.SystemActionRetries, "must not be negative"))
		}
		if m.SystemRebootDelay < 0 {
			errs = append(errs, field.Invalid(p.Child("systemRebootDelay"), m.SystemRebootDelay, "must not be negative"))
		}
	}
	return errs
}

var authTypes = []string{"ssh-key", "ssh-pass", "http-basic"}

func validateManifest(p *field.Path, m *v1.Manifest) field.ErrorList {
	var errs field.ErrorList
	if m == nil {
		return append(errs, field.Required(p, "manifest is empty"))
	}
	if m.PhaseRepositoryName == "" {
		errs = append(errs, field.Required(p.Child("phaseRepositoryName"), "names the repository that holds the phases"))
	} else if _, ok := m.Repositories[m.PhaseRepositoryName]; !ok {
		errs = append(errs, field.NotFound(p.Child("phaseRepositoryName"), m.PhaseRepositoryName))
	}
	if m.InventoryRepositoryName != "" {
		if _, ok := m.Repositories[m.InventoryRepositoryName]; !ok {
			errs = append(errs, field.NotFound(p.Child("inventoryRepositoryName"), m.InventoryRepositoryName))
		}
	}
	if m.TargetPath == "" {
		errs = append(errs, field.Required(p.Child("targetPath"), "the local directory holding the repositories"))
	}
	if m.MetadataPath == "" {
		errs = append(errs, field.Required(p.Child("metadataPath"), "the site's metadata.yaml, relative to the phase repository"))
	}
	for _, name := range sortedKeys(m.Repositories) {
		r := m.Repositories[name]
		rp := p.Child("repositories").Key(name)
		if r == nil || r.URL == "" {
			errs = append(errs, field.Required(rp.Child("url"), ""))
			continue
		}
		if _, err := RepoDir(r.URL); err != nil {
			errs = append(errs, field.Invalid(rp.Child("url"), redact.URL(r.URL), err.Error()))
		}
		if err := r.Checkout.Validate(); err != nil {
			errs = append(errs, field.Invalid(rp.Child("checkout"), "", err.Error()))
		}
		if a := r.Auth; a != nil {
			ap := rp.Child("auth")
			if !slices.Contains(authTypes, a.Type) {
				errs = append(errs, field.NotSupported(ap.Child("type"), a.Type, authTypes))
			}
			// Values of secret fields never go into messages.
			switch a.Type {
			case "ssh-key":
				if a.HTTPPassword != "" || a.SSHPassword != "" {
					errs = append(errs, field.Forbidden(ap, "ssh-key auth takes sshKey and keyPass, not httpPass or sshPass"))
				}
			case "ssh-pass":
				if a.KeyPath != "" || a.KeyPassword != "" || a.HTTPPassword != "" {
					errs = append(errs, field.Forbidden(ap, "ssh-pass auth takes sshPass, not sshKey, keyPass or httpPass"))
				}
			case "http-basic":
				if a.KeyPath != "" || a.KeyPassword != "" || a.SSHPassword != "" {
					errs = append(errs, field.Forbidden(ap, "http-basic auth takes username and httpPass, not sshKey, keyPass or sshPass"))
				}
			}
		}
	}
	return errs
}

// RepoDir is the directory a clone of the repository URL creates: the last
// path element without ".git". It accepts URLs, scp-like addresses
// (git@host:org/repo.git) and local paths.
func RepoDir(repoURL string) (string, error) {
	s := strings.TrimRight(repoURL, "/")
	if u, err := url.Parse(s); err == nil && u.Scheme != "" && len(u.Scheme) > 1 && u.Opaque == "" {
		s = u.Path
	} else if at := strings.LastIndex(s, "@"); at >= 0 {
		// scp-like: [user[:password]@]host:path, the password maybe holding ':'.
		if colon := strings.Index(s[at+1:], ":"); colon >= 0 {
			s = s[at+1+colon+1:]
		}
	}
	dir := strings.TrimSuffix(path.Base(s), ".git")
	if dir == "" || dir == "." || dir == "/" || dir == ".." {
		return "", fmt.Errorf("cannot tell a directory name from repository URL %q", redact.URL(repoURL))
	}
	return dir, nil
}

// Context returns the named context, or the current one when name is empty.
func (c *Config) Context(name string) (string, *v1.Context, error) {
	if name == "" {
		name = c.CurrentContext
		if name == "" {
			return "", nil, fmt.Errorf("airship config %s has no currentContext: set one with `airshipctl config use-context NAME`", c.Path)
		}
	}
	ctx, ok := c.Contexts[name]
	if !ok {
		return "", nil, fmt.Errorf("context %q not found in airship config %s; contexts: %s", name, c.Path, strings.Join(sortedKeys(c.Contexts), ", "))
	}
	return name, ctx, nil
}

// Manifest returns the manifest of the named context (current when empty).
func (c *Config) Manifest(contextName string) (*Site, error) {
	name, ctx, err := c.Context(contextName)
	if err != nil {
		return nil, err
	}
	if ctx.Manifest == "" {
		return nil, fmt.Errorf("context %q of airship config %s names no manifest: set one with `airshipctl config set-context %s --manifest NAME`", name, c.Path, name)
	}
	m, ok := c.Manifests[ctx.Manifest]
	if !ok {
		return nil, fmt.Errorf("manifest %q of context %q not found in airship config %s", ctx.Manifest, name, c.Path)
	}
	return &Site{Name: ctx.Manifest, Manifest: m, configDir: filepath.Dir(c.Path)}, nil
}

// Management returns the managementConfiguration of the named context
// (current when empty): how BMCs are reached. nil when the context names
// none, which means the defaults: no proxy, certificates verified.
func (c *Config) Management(contextName string) (*v1.ManagementConfiguration, error) {
	name, ctx, err := c.Context(contextName)
	if err != nil {
		return nil, err
	}
	if ctx.ManagementConfiguration == "" {
		return nil, nil
	}
	m, ok := c.ManagementConfiguration[ctx.ManagementConfiguration]
	if !ok {
		return nil, fmt.Errorf("managementConfiguration %q of context %q not found in airship config %s", ctx.ManagementConfiguration, name, c.Path)
	}
	return m, nil
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
