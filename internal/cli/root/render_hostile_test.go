package root

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileSite writes a site whose phase "w" renders the kustomization in
// site/w, and returns the --airshipconf flag.
func hostileSite(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	all := map[string]string{
		"airship-config.yaml": "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: t\ncontexts: {t: {manifest: m}}\n" +
			"manifests:\n  m: {phaseRepositoryName: r, repositories: {r: {url: ./site}}, targetPath: ., metadataPath: metadata.yaml}\n",
		"site/metadata.yaml":             "phase: {path: phases}\n",
		"site/phases/kustomization.yaml": "resources: [phases.yaml]\n",
		"site/phases/phases.yaml": phaseDoc("w", "apply") + `apiVersion: airshipit.org/v1alpha1
kind: KubernetesApply
metadata: {name: apply}
config: {waitOptions: {timeout: 30}}
---
apiVersion: airshipit.org/v1alpha1
kind: ClusterMap
metadata: {name: m}
map: {c1: {}}
`,
	}
	for k, v := range files {
		all[k] = v
	}
	writeFiles(t, dir, all)
	t.Setenv("AIRSHIP_RENDER_CACHE_DIR", t.TempDir())
	return "--airshipconf=" + filepath.Join(dir, "airship-config.yaml")
}

// phase render of a site whose kustomization lists an inline transformer
// with an exec function (issue 26's first vector) fails naming the config
// and its file, and runs nothing.
func TestPhaseRenderRunsNoFunction(t *testing.T) {
	for _, cmd := range [][]string{{"phase", "render", "w"}, {"phase", "validate", "w"}, {"plan", "list"}, {"phase", "tree", "w"}} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "MARKER")
			conf := hostileSite(t, dir, map[string]string{
				"site/w/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim}\n",
				"site/w/kustomization.yaml": "resources: [cm.yaml]\ntransformers:\n" +
					`- '{apiVersion: v1, kind: ConfigMap, metadata: {name: fn, annotations: {config.kubernetes.io/function: "exec: {path: /bin/sh, args: [-c, touch ` +
					marker + `]}"}}}'` + "\n",
			})
			stdout, stderr, code := run(t, append([]string{conf, "--no-render-cache"}, cmd...)...)
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the exec function ran: the marker file exists")
			}
			if cmd[0] == "plan" || cmd[1] == "tree" {
				// They do not build the entry point; they must not
				// run anything either.
				return
			}
			if code == 0 {
				t.Fatalf("exit code 0; stdout:\n%s", stdout)
			}
			for _, w := range []string{"ConfigMap/fn", filepath.Join("site", "w", "kustomization.yaml"), "exec functions are never run"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr)
				}
			}
		})
	}
}

// phase render of a site holding a relative symbolic link to a file
// outside its target path fails naming the link, and never prints the
// file's content.
func TestPhaseRenderRefusesLinkOutOfSite(t *testing.T) {
	const secret = "outside-secret-value-0x5EC12E7"
	outside := filepath.Join(t.TempDir(), "stolen.yaml")
	if err := os.WriteFile(outside, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\ndata: {v: "+secret+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// link is created at this path under the site, pointing at
		// target (relative to the link's directory).
		link, target string
		files        map[string]string
	}{
		{name: "file link", link: "site/w/cm.yaml", target: "outside", files: map[string]string{
			"site/w/kustomization.yaml": "resources: [cm.yaml]\n",
		}},
		{name: "directory link", link: "site/w/base", target: "outside-dir", files: map[string]string{
			"site/w/kustomization.yaml": "resources: [base/stolen.yaml]\n",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			conf := hostileSite(t, dir, tc.files)
			link := filepath.Join(dir, tc.link)
			target := outside
			if tc.target == "outside-dir" {
				target = filepath.Dir(outside)
			}
			rel, err := filepath.Rel(filepath.Dir(link), target)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(rel, link); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := run(t, conf, "--no-render-cache", "phase", "render", "w")
			if code == 0 {
				t.Fatalf("exit code 0; stdout:\n%s", stdout)
			}
			if strings.Contains(stdout+stderr, secret) {
				t.Fatalf("the file outside the site was printed:\n%s\n%s", stdout, stderr)
			}
			for _, w := range []string{"symbolic link " + link, "outside the site's target path"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not mention %q:\n%s", w, stderr)
				}
			}
		})
	}
}
