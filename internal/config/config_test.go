package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
)

func TestRepoDir(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://opendev.org/airship/treasuremap", "treasuremap"},
		{"https://opendev.org/airship/treasuremap.git", "treasuremap"},
		{"https://opendev.org/airship/treasuremap/", "treasuremap"},
		{"git@github.com:airshipit/airshipctl.git", "airshipctl"},
		{"ssh://git@host:2222/org/site.git", "site"},
		{"/srv/sites/my-site", "my-site"},
		{"file:///srv/sites/local.git", "local"},
		{"../examples/site", "site"},
		{"git:Scp-pw@example.invalid:org/site.git", "site"},
		{"user:p@ss:word@host:org/repo.git", "repo"},
		{"https://user:p%40ss@host/org/repo.git", "repo"},
	}
	for _, tt := range tests {
		got, err := RepoDir(tt.url)
		if err != nil || got != tt.want {
			t.Errorf("RepoDir(%q) = %q, %v; want %q", tt.url, got, err, tt.want)
		}
	}
	if _, err := RepoDir("/"); err == nil {
		t.Error("RepoDir(/) should fail")
	}
}

func TestPathRules(t *testing.T) {
	dir := t.TempDir()
	site := NewSite("m", &v1.Manifest{
		PhaseRepositoryName:     "primary",
		InventoryRepositoryName: "inv",
		TargetPath:              "sites",
		MetadataPath:            "manifests/site/test/metadata.yaml",
		Repositories: map[string]*v1.Repository{
			"primary": {URL: "https://opendev.org/airship/treasuremap.git"},
			"inv":     {URL: "https://example.invalid/org/inventory"},
		},
	}, dir)
	meta := &v1.ManifestMetadata{
		Phase:     v1.PhaseSpec{Path: "manifests/phases", DocEntryPointPrefix: "manifests/site/test"},
		Inventory: v1.InventorySpec{Path: "hosts"},
	}
	repo := filepath.Join(dir, "sites", "treasuremap")
	check := func(name, got string, err error, want string) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	p, err := site.MetadataPath()
	check("metadata", p, err, filepath.Join(repo, "manifests/site/test/metadata.yaml"))
	p, err = site.PhaseBundlePath(meta)
	check("phase bundle", p, err, filepath.Join(repo, "manifests/phases"))
	p, err = site.ExecutorBundlePath(meta, "ephemeral/initinfra")
	check("executor bundle", p, err, filepath.Join(repo, "manifests/site/test/ephemeral/initinfra"))
	p, err = site.InventoryPath(meta)
	check("inventory", p, err, filepath.Join(dir, "sites", "inventory", "hosts"))

	home, _ := os.UserHomeDir()
	site.Manifest.TargetPath = "~/t"
	p, err = site.TargetPath()
	check("home target", p, err, filepath.Join(home, "t"))

	site.Manifest.PhaseRepositoryName = "nope"
	if _, err := site.PhaseBundlePath(meta); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown phase repository: %v", err)
	}
}

func TestMetadataErrors(t *testing.T) {
	dir := t.TempDir()
	site := NewSite("m", &v1.Manifest{
		PhaseRepositoryName: "p", TargetPath: dir, MetadataPath: "metadata.yaml",
		Repositories: map[string]*v1.Repository{"p": {URL: "/x/site"}},
	}, dir)
	if _, err := site.Metadata(); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing metadata: %v", err)
	}
	mdir := filepath.Join(dir, "site")
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	for content, want := range map[string]string{
		"phase:\n  pth: x\n":          `unknown field "phase.pth"`,
		"inventory:\n  path: hosts\n": "phase.path is required",
		"phase: [\n":                  "metadata.yaml",
		"phase:\n  path: manifests\n": "",
		// Upstream's document form, alone or among other documents.
		"apiVersion: airshipit.org/v1alpha1\nkind: ManifestMetadata\nmetadata: {name: m}\nspec:\n  phase: {path: manifests, docEntryPointPrefix: site}\n  inventory: {path: hosts}\n":                                                 "",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: airshipit.org/v1alpha1\nkind: ManifestMetadata\nmetadata: {name: m}\nspec:\n  phase: {path: manifests}\n":                                             "",
		"apiVersion: airshipit.org/v1alpha1\nkind: ManifestMetadata\nmetadata: {name: m}\nspec:\n  phase: {pth: manifests}\n":                                                                                                         `ManifestMetadata m: unknown field "spec.phase.pth"`,
		"apiVersion: airshipit.org/v1alpha1\nkind: ManifestMetadata\nmetadata: {name: m}\nspec:\n  inventory: {path: hosts}\n":                                                                                                        "ManifestMetadata m: spec.phase.path is required",
		"apiVersion: airshipit.org/v1beta9\nkind: ManifestMetadata\nmetadata: {name: m}\nspec:\n  phase: {path: manifests}\n":                                                                                                         `apiVersion "airshipit.org/v1beta9", want airshipit.org/v1alpha1`,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n":                                                                                                                                                                      "want one document of kind ManifestMetadata",
		"apiVersion: airshipit.org/v1alpha1\nkind: ManifestMetadata\nmetadata: {name: a}\nspec: {phase: {path: x}}\n---\napiVersion: airshipit.org/v1alpha1\nkind: ManifestMetadata\nmetadata: {name: b}\nspec: {phase: {path: y}}\n": "found 2",
	} {
		if err := os.WriteFile(filepath.Join(mdir, "metadata.yaml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		meta, err := site.Metadata()
		if want == "" {
			if err != nil || meta.Phase.Path != "manifests" {
				t.Errorf("%q: %v", content, err)
			}
			if strings.Contains(content, "docEntryPointPrefix: site") && (meta.Phase.DocEntryPointPrefix != "site" || meta.Inventory.Path != "hosts") {
				t.Errorf("%q: read %+v", content, meta)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", content, err, want)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := NewDefault("/tmp/c")
	c.CurrentContext = "gone"
	c.Contexts["bad"] = &v1.Context{Manifest: "missing", ManagementConfiguration: "nomc"}
	m := c.Manifests["default"]
	m.PhaseRepositoryName = "nope"
	m.TargetPath = ""
	m.Repositories["primary"].Checkout = &v1.RepoCheckout{Branch: "a", Tag: "b"}
	m.Repositories["primary"].Auth = &v1.RepoAuth{Type: "http-basic", SSHPassword: "s3cr3t-value"}
	c.ManagementConfiguration["default"].Type = "ipmi"
	errs := c.Validate()
	msg := errs.ToAggregate().Error()
	for _, want := range []string{
		"currentContext", "contexts[bad].manifest", "contexts[bad].managementConfiguration",
		"manifests[default].phaseRepositoryName", "manifests[default].targetPath",
		"manifests[default].repositories[primary].checkout", "manifests[default].repositories[primary].auth",
		"managementConfiguration[default].type",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors lack %s:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "s3cr3t-value") {
		t.Errorf("a password leaked into the error: %s", msg)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "config")
	c := NewDefault(path)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, want 0600", st.Mode().Perm())
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.CurrentContext != "ephemeral-cluster" || back.Manifests["default"].Repositories["primary"].URL != c.Manifests["default"].Repositories["primary"].URL {
		t.Errorf("round trip lost data: %+v", back.Config)
	}

	bad := NewDefault(path)
	bad.CurrentContext = "nope"
	if err := bad.Save(); err == nil {
		t.Fatal("saved an invalid config")
	}
	if again, err := Load(path); err != nil || again.CurrentContext != "ephemeral-cluster" {
		t.Fatalf("a refused save changed the file: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "none")); err == nil || !strings.Contains(err.Error(), "airshipctl config init") {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(dir, "c")
	if err := os.WriteFile(p, []byte("currentContext: x\ncontexs: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "contexs") || !strings.Contains(err.Error(), p) {
		t.Errorf("unknown field: %v", err)
	}
	// A nested unknown field is named by its full path.
	if err := os.WriteFile(p, []byte("currentContext: x\ncontexts: {x: {manifst: m}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), `unknown field "contexts.x.manifst"`) {
		t.Errorf("nested unknown field: %v", err)
	}
}

func TestContextAndManifestLookups(t *testing.T) {
	c := NewDefault(filepath.Join(t.TempDir(), "config"))
	if _, _, err := c.Context("nope"); err == nil || !strings.Contains(err.Error(), "ephemeral-cluster, target-cluster") {
		t.Errorf("unknown context should list contexts: %v", err)
	}
	s, err := c.Manifest("")
	if err != nil || s.Name != "default" {
		t.Fatalf("current manifest: %v", err)
	}
	c.Contexts["empty"] = &v1.Context{}
	if _, err := c.Manifest("empty"); err == nil || !strings.Contains(err.Error(), "set-context empty --manifest") {
		t.Errorf("context without manifest: %v", err)
	}
}

// TestRelativeConfigPath: a config named by a relative path (as
// examples/site/airship-config.yaml is) gives absolute paths, which stay
// right from another working directory (a toolbox script's).
func TestRelativeConfigPath(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "examples", "site"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := NewDefault(filepath.Join(root, "examples", "site", "airship-config.yaml"))
	c.Manifests["default"].TargetPath = "../.."
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	tests := []struct {
		name, path string
	}{
		{"relative", "examples/site/airship-config.yaml"},
		{"dot-relative", "./examples/site/../site/airship-config.yaml"},
		{"absolute", filepath.Join(root, "examples", "site", "airship-config.yaml")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(root, "examples", "site", "airship-config.yaml"); cfg.Path != want {
				t.Errorf("Path = %q, want %q", cfg.Path, want)
			}
			site, err := cfg.Manifest("")
			if err != nil {
				t.Fatal(err)
			}
			target, err := site.TargetPath()
			if err != nil || target != root {
				t.Errorf("TargetPath = %q, %v; want %q", target, err, root)
			}
			repo, err := site.PhaseRepoDir()
			if err != nil || repo != filepath.Join(root, "treasuremap") {
				t.Errorf("PhaseRepoDir = %q, %v", repo, err)
			}
		})
	}
	// NewSite with a relative base directory is absolute too.
	target, err := NewSite("m", &v1.Manifest{TargetPath: "sites"}, "rel").TargetPath()
	if err != nil || target != filepath.Join(root, "rel", "sites") {
		t.Errorf("NewSite(rel).TargetPath = %q, %v", target, err)
	}
}

// TestInvalidURLRedacted: a repository URL the config refuses is quoted
// without its password.
func TestInvalidURLRedacted(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	c := NewDefault(p)
	if err := c.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "https://opendev.org/airship/treasuremap", "https://user:Cfg-pw-4411@host/", 1))
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(p)
	if err == nil || !strings.Contains(err.Error(), "user:REDACTED@host") || strings.Contains(err.Error(), "Cfg-pw-4411") {
		t.Fatalf("Load: %v; want the URL, redacted", err)
	}
}
