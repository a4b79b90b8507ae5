package genericcontainer

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/document"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// Render shows how each kind of image would run, then the input
// documents; golden files under testdata/render/ (-update rewrites them).
func TestRenderGolden(t *testing.T) {
	bin := t.TempDir()
	writeExecutable(t, filepath.Join(bin, "podman"), "#!/bin/sh\nexit 1\n")
	cases := []struct {
		name     string
		executor string
		bundle   string
		cluster  string
		path     string
		selector document.Selector
	}{
		{name: "toolbox", cluster: "target-cluster", path: bin,
			executor: gc("kubectl-wait-cluster", "  type: krm\n  image: localhost/toolbox\n  hostNetwork: true\n  timeout: 600\n  envVars:\n  - RESOURCE_KIND_FILTER=Secret\n  - HTTPS_PROXY\n  - TGT_KUBECONFIG=/tmp-kubeconfig\n  mounts:\n  - type: bind\n    src: ~/.airship/kubeconfig\n    dst: /tmp-kubeconfig\n    rw: true\n") +
				"configRef:\n  kind: ConfigMap\n  name: kubectl-get-node\n  apiVersion: v1\n",
			bundle: toolboxConfigMap},
		{name: "builtin-sops-sink", path: bin,
			executor: gc("noop-sink", "  type: krm\n  sinkOutputDir: ./\n  image: gcr.io/kpt-fn-contrib/sops:v0.3.0\nconfig: |\n  apiVersion: v1\n  kind: ConfigMap\n  data:\n    cmd: decrypt\n")},
		{name: "runtime-podman", cluster: "ephemeral-cluster", path: bin,
			executor: gc("iso-build-image", "  image: quay.io/airshipit/image-builder:latest\n  airship:\n    privileged: true\n    cmd: [/bin/bash, -c, /usr/bin/local/entrypoint.sh]\n  mounts:\n  - type: bind\n    src: /srv/images\n    dst: /config\n    rw: true\n  envVars:\n  - IMAGE_TYPE=iso\n  - http_proxy\n")},
		{name: "runtime-none", path: t.TempDir(),
			executor: gc("applier", "  type: krm\n  image: localhost/applier:latest\n  hostNetwork: true\n")},
		{name: "selector-secrets-only", path: bin, selector: document.Selector{Kind: "Secret"},
			executor: gc("noop-show", "  type: krm\n  image: gcr.io/kpt-fn-contrib/sops:v0.3.0\nconfig: |\n  apiVersion: v1\n  kind: ConfigMap\n  data:\n    cmd: decrypt\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			t.Setenv("HTTPS_PROXY", "http://must-not-show.invalid")
			target := "/sites"
			ex := newExecutor(t, site{executor: tc.executor, phaseBundle: tc.executor + tc.bundle, phaseDocs: phaseDocs, cluster: tc.cluster, targetPath: target})
			ex.cfg.SiteDir = "/sites/airshipctl/manifests/site/test-site"
			var buf bytes.Buffer
			if err := ex.Render(context.Background(), &buf, executor.RenderOptions{Selector: tc.selector}); err != nil {
				t.Fatal(err)
			}
			home, _ := os.UserHomeDir()
			got := strings.ReplaceAll(buf.String(), home, "$HOME")
			user := fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
			got = strings.ReplaceAll(strings.ReplaceAll(got, `"`+user+`"`, user), user, "UID:GID")
			if strings.Contains(got, "must-not-show") {
				t.Errorf("render shows a value from the environment:\n%s", got)
			}
			golden := filepath.Join("testdata", "render", tc.name+".yaml")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("render differs from %s:\n--- got ---\n%s\n--- want ---\n%s", golden, got, want)
			}
		})
	}
}
