package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/document"
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
// path taken from the config file's directory.
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
	return filepath.Clean(p), nil
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
	meta := &v1.ManifestMetadata{}
	if err := document.UnmarshalStrict(data, meta); err != nil {
		return nil, fmt.Errorf("site metadata %s: %w", p, err)
	}
	if meta.Phase.Path == "" {
		return nil, fmt.Errorf("site metadata %s: phase.path is required", p)
	}
	return meta, nil
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
