package configcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
)

// TestGetManifestRedacts shows manifests whose repository URLs and auth
// carry secrets in every output format: no secret is shown, REDACTED is.
func TestGetManifestRedacts(t *testing.T) {
	secrets := []string{"Http-pw-1a2b", "Ssh-pw-3c4d", "Scp-pw-5e6f", "Tok-7a8b", "Query-9c0d", "Auth-pw-1e2f"}
	conf := filepath.Join(t.TempDir(), "config")
	c := `apiVersion: airshipit.org/v1alpha1
kind: Config
currentContext: c
contexts: {c: {manifest: https}}
manifests:
  https:
    phaseRepositoryName: site
    targetPath: ./sites
    metadataPath: metadata.yaml
    repositories:
      site: {url: 'https://user:Http-pw-1a2b@example.invalid/org/site.git'}
      auth: {url: 'https://example.invalid/org/auth.git', auth: {type: http-basic, username: u, httpPass: Auth-pw-1e2f}}
  ssh:
    phaseRepositoryName: site
    targetPath: ./sites
    metadataPath: metadata.yaml
    repositories:
      site: {url: 'ssh://git:Ssh-pw-3c4d@example.invalid:2222/org/site.git'}
  scp:
    phaseRepositoryName: site
    targetPath: ./sites
    metadataPath: metadata.yaml
    repositories:
      site: {url: 'git:Scp-pw-5e6f@example.invalid:org/site.git'}
  token:
    phaseRepositoryName: site
    targetPath: ./sites
    metadataPath: metadata.yaml
    repositories:
      site: {url: 'https://Tok-7a8b@example.invalid/org/site.git?access_token=Query-9c0d'}
`
	if err := os.WriteFile(conf, []byte(c), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"table", []string{"get-manifest"}, []string{"https://user:REDACTED@example.invalid/org/site.git", "ssh://git:REDACTED@example.invalid:2222/org/site.git", "git:REDACTED@example.invalid:org/site.git", "https://REDACTED@example.invalid/org/site.git?REDACTED"}},
		{"yaml", []string{"get-manifest", "-o", "yaml"}, []string{"https://user:REDACTED@example.invalid/org/site.git", "httpPass: REDACTED", "ssh://git:REDACTED@", "git:REDACTED@example.invalid:org/site.git", "site.git?REDACTED"}},
		{"json", []string{"get-manifest", "-o", "json"}, []string{"https://user:REDACTED@example.invalid/org/site.git", `"httpPass": "REDACTED"`, "ssh://git:REDACTED@", "git:REDACTED@example.invalid:org/site.git", "site.git?REDACTED"}},
		{"one manifest, yaml", []string{"get-manifest", "token", "-o", "yaml"}, []string{"https://REDACTED@example.invalid/org/site.git?REDACTED"}},
		{"one manifest, table", []string{"get-manifest", "ssh"}, []string{"ssh://git:REDACTED@example.invalid:2222/org/site.git"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			cmd := NewCmd(cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &siteflags.Options{ConfigPath: conf})
			cmd.SetArgs(tt.args)
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			if err := cmd.Execute(); err != nil {
				t.Fatalf("%v: %v\n%s", tt.args, err, errOut.String())
			}
			shown := out.String() + errOut.String()
			for _, w := range tt.want {
				if !strings.Contains(shown, w) {
					t.Errorf("want %q in:\n%s", w, shown)
				}
			}
			for _, s := range secrets {
				if strings.Contains(shown, s) {
					t.Errorf("secret %q shown:\n%s", s, shown)
				}
			}
		})
	}
}
