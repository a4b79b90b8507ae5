package root

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/airshipit/airship-go/internal/test/testtool"
)

// TestDocumentPull pulls a manifest's two repositories (one pinned to a
// tag) from local origins, twice, and refuses a manifest with a bad
// repository before fetching any.
func TestDocumentPull(t *testing.T) {
	dir := t.TempDir()
	origin := func(name, content string, tag string) string {
		t.Helper()
		p := filepath.Join(dir, "origins", name)
		repo, err := git.PlainInitWithOptions(p, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "metadata.yaml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		wt, _ := repo.Worktree()
		if _, err := wt.Add("metadata.yaml"); err != nil {
			t.Fatal(err)
		}
		h, err := wt.Commit("init", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(1700000000, 0)}})
		if err != nil {
			t.Fatal(err)
		}
		if tag != "" {
			if _, err := repo.CreateTag(tag, h, nil); err != nil {
				t.Fatal(err)
			}
		}
		return "file://" + p
	}
	site := origin("site", "phase: {path: phases}\n", "")
	shared := origin("shared.git", "shared\n", "v1")
	conf := filepath.Join(dir, "config")
	write := func(extra string) {
		t.Helper()
		c := `apiVersion: airshipit.org/v1alpha1
kind: Config
currentContext: c
contexts: {c: {manifest: m}}
manifests:
  m:
    phaseRepositoryName: site
    targetPath: ./sites
    metadataPath: metadata.yaml
    repositories:
      site: {url: ` + site + `}
      shared: {url: ` + shared + `, checkout: {tag: v1}}
` + extra
		if err := os.WriteFile(conf, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	out, errOut, code := run(t, "--airshipconf", conf, "document", "pull")
	if code != 0 {
		t.Fatalf("document pull: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"shared: cloned " + shared + " into " + filepath.Join(dir, "sites", "shared") + " at ", "site: cloned " + site + " into " + filepath.Join(dir, "sites", "site") + " at "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "sites", "shared", "metadata.yaml")); err != nil || string(data) != "shared\n" {
		t.Errorf("sites/shared/metadata.yaml: %q %v", data, err)
	}
	out, _, code = run(t, "--airshipconf", conf, "document", "pull")
	if code != 0 || strings.Count(out, ": updated ") != 2 {
		t.Errorf("second pull: exit %d:\n%s", code, out)
	}

	// A third repository whose SSH key cannot be read: nothing is fetched.
	write("      third: {url: " + origin("third", "x\n", "") + ", auth: {type: ssh-key, sshKey: " + filepath.Join(dir, "no-such-key") + "}}\n")
	_, errOut, code = run(t, "--airshipconf", conf, "document", "pull")
	if code == 0 || !strings.Contains(errOut, `repository third`) || !strings.Contains(errOut, "auth.sshKey "+filepath.Join(dir, "no-such-key")) {
		t.Fatalf("bad repository: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "sites", "third")); !os.IsNotExist(err) {
		t.Errorf("a refused pull cloned a repository (%v)", err)
	}
}

// TestRenderPhaseWithoutEntryPoint: `phase render` of the example's
// Clusterctl phase, which has no documentEntryPoint, shows the provider
// components clusterctl init would install.
func TestRenderPhaseWithoutEntryPoint(t *testing.T) {
	requireCAPILink(t)
	out, errOut, code := run(t, exampleConfig, "phase", "render", "clusterctl-init-ephemeral", "-k", "Deployment")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"name: capi-controller-manager", "name: capi-kubeadm-bootstrap-controller-manager", "name: capi-kubeadm-control-plane-controller-manager", "name: metal3-operator", "name: ironic\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("render lacks %q", want)
		}
	}
	if n := strings.Count(out, "kind: Deployment"); n != 5 {
		t.Errorf("render has %d Deployments, want the four providers' and the Metal3 provider's Ironic", n)
	}
}

// requireCAPILink fails (or skips) a test of the example site without the
// link to Cluster API's components `make testbin` writes: the site's
// Clusterctl phase does not validate without it.
func requireCAPILink(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("../../../examples/site/function/capi/upstream/core"); err != nil {
		testtool.Missing(t, "the example site's link to Cluster API's components is missing (%v); `make testbin` writes it", err)
	}
}
