package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/strictyaml"
)

// Site is the manifest of a context, with the path rules applied.
type Site struct {
	// Name of the manifest in the config.
	Name     string
	Manifest *v1.Manifest

	configDir string
}

// NewSite returns a Site for a manifest whose relative targetPath is taken
// from baseDir.
func NewSite(name string, m *v1.Manifest, baseDir string) *Site {
	return &Site{Name: name, Manifest: m, configDir: baseDir}
}

// TargetPath is the manifest's targetPath with ~ expanded and a relative
// path taken from the config file's directory; it is always absolute.
func (s *Site) TargetPath() (string, error) {
	p := s.Manifest.TargetPath
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("expanding targetPath %q: %w", p, err)
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.configDir, p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("manifest %q: targetPath %q: %w", s.Name, s.Manifest.TargetPath, err)
	}
	return abs, nil
}

// PhaseRepoDir is targetPath/<directory of the phase repository>.
func (s *Site) PhaseRepoDir() (string, error) {
	return s.repoDir(s.Manifest.PhaseRepositoryName, "phaseRepositoryName")
}

// InventoryRepoDir is targetPath/<directory of the inventory repository>,
// which is the phase repository when none is named.
func (s *Site) InventoryRepoDir() (string, error) {
	if s.Manifest.InventoryRepositoryName == "" {
		return s.PhaseRepoDir()
	}
	return s.repoDir(s.Manifest.InventoryRepositoryName, "inventoryRepositoryName")
}

// RepositoryDir is targetPath/<directory of the named repository>, where
// `airshipctl document pull` puts it.
func (s *Site) RepositoryDir(name string) (string, error) {
	return s.repoDir(name, "repository")
}

func (s *Site) repoDir(name, fieldName string) (string, error) {
	repo, ok := s.Manifest.Repositories[name]
	if !ok || repo == nil {
		return "", fmt.Errorf("manifest %q: %s %q is not among its repositories", s.Name, fieldName, name)
	}
	dir, err := RepoDir(repo.URL)
	if err != nil {
		return "", fmt.Errorf("manifest %q, repository %q: %w", s.Name, name, err)
	}
	target, err := s.TargetPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(target, dir), nil
}

// MetadataPath is targetPath/<phase repository>/metadataPath.
func (s *Site) MetadataPath() (string, error) {
	repo, err := s.PhaseRepoDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(repo, s.Manifest.MetadataPath), nil
}

// Metadata reads and checks the site's metadata.yaml.
func (s *Site) Metadata() (*v1.ManifestMetadata, error) {
	p, err := s.MetadataPath()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("site metadata %s (targetPath + phase repository + metadataPath of manifest %q) does not exist", p, s.Name)
		}
		return nil, fmt.Errorf("reading site metadata: %w", err)
	}
	meta, field, err := parseMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("site metadata %s: %w", p, err)
	}
	if meta.Phase.Path == "" {
		return nil, fmt.Errorf("site metadata %s: %s is required", p, field)
	}
	return meta, nil
}

// metadataDocument is the document form of metadata.yaml upstream
// airshipctl reads since 2021: kind ManifestMetadata, the settings under
// spec.
type metadataDocument struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Phase     v1.PhaseSpec     `json:"phase,omitempty"`
		Inventory v1.InventorySpec `json:"inventory,omitempty"`
	} `json:"spec"`
}

// parseMetadata reads either form of metadata.yaml: the plain one (phase,
// inventory at the top) or one ManifestMetadata document among others of
// a YAML stream (spec.phase, spec.inventory). It returns the name of the
// phase path field of the form it read, for messages.
func parseMetadata(data []byte) (*v1.ManifestMetadata, string, error) {
	nodes, err := kio.FromBytes(data)
	if err != nil {
		return nil, "", err
	}
	var docs []*kyaml.RNode
	for _, n := range nodes {
		if n.GetKind() != "" || n.GetApiVersion() != "" {
			docs = append(docs, n)
		}
	}
	if len(docs) == 0 {
		meta := &v1.ManifestMetadata{}
		if err := strictyaml.Unmarshal(data, meta); err != nil {
			return nil, "", err
		}
		return meta, "phase.path", nil
	}
	var found []*kyaml.RNode
	for _, n := range docs {
		if n.GetKind() == "ManifestMetadata" {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		return nil, "", fmt.Errorf("want one document of kind ManifestMetadata (%s), found %d", v1.GroupVersion, len(found))
	}
	if av := found[0].GetApiVersion(); av != v1.GroupVersion.String() {
		return nil, "", fmt.Errorf("ManifestMetadata %s: apiVersion %q, want %s", found[0].GetName(), av, v1.GroupVersion)
	}
	text, err := found[0].String()
	if err != nil {
		return nil, "", err
	}
	doc := &metadataDocument{}
	if err := strictyaml.Unmarshal([]byte(text), doc); err != nil {
		return nil, "", fmt.Errorf("ManifestMetadata %s: %w", found[0].GetName(), err)
	}
	return &v1.ManifestMetadata{TypeMeta: doc.TypeMeta, ObjectMeta: doc.ObjectMeta, Phase: doc.Spec.Phase, Inventory: doc.Spec.Inventory},
		"ManifestMetadata " + doc.Name + ": spec.phase.path", nil
}

// PhaseBundlePath is targetPath/<phase repository>/phase.path.
func (s *Site) PhaseBundlePath(meta *v1.ManifestMetadata) (string, error) {
	repo, err := s.PhaseRepoDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(repo, meta.Phase.Path), nil
}

// ExecutorBundlePath is targetPath/<phase repository>/docEntryPointPrefix/entryPoint.
func (s *Site) ExecutorBundlePath(meta *v1.ManifestMetadata, entryPoint string) (string, error) {
	repo, err := s.PhaseRepoDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(repo, meta.Phase.DocEntryPointPrefix, entryPoint), nil
}

// InventoryPath is targetPath/<inventory repository>/inventory.path, or ""
// when the metadata names no inventory.
func (s *Site) InventoryPath(meta *v1.ManifestMetadata) (string, error) {
	if meta.Inventory.Path == "" {
		return "", nil
	}
	repo, err := s.InventoryRepoDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(repo, meta.Inventory.Path), nil
}
