package documentcmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/airshipit/airship-go/internal/cli"
	"github.com/airshipit/airship-go/internal/cli/siteflags"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// TestPullNeverPrintsPasswords pulls from repositories whose URLs carry a
// user and password, over HTTP (served by git http-backend behind basic
// auth) and ssh:// (nothing listening): neither the output of a success
// nor the error of a failure shows the password.
func TestPullNeverPrintsPasswords(t *testing.T) {
	dir := t.TempDir()
	origin := filepath.Join(dir, "origins", "site.git")
	repo, err := git.PlainInitWithOptions(origin, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(origin, "metadata.yaml"), []byte("phase: {path: phases}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	if _, err := wt.Add("metadata.yaml"); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Commit("init", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(1700000000, 0)}}); err != nil {
		t.Fatal(err)
	}
	const user, password = "airship", "Pw-9f2c-never-shown"
	srv := testtool.GitHTTPServer(t, filepath.Dir(origin), user, password)
	host := strings.TrimPrefix(srv.URL, "http://")

	tests := []struct {
		name     string
		url      string
		secret   string
		wantCode bool // true: the pull succeeds
		wantOut  string
	}{
		{"http success", "http://" + user + ":" + password + "@" + host + "/site.git", password, true, "site: cloned http://airship:REDACTED@" + host + "/site.git into "},
		{"http wrong password", "http://" + user + ":Wrong-pw-3c1e@" + host + "/site.git", "Wrong-pw-3c1e", false, "repository site (http://airship:REDACTED@" + host + "/site.git)"},
		{"http token as user name", "http://Tok-81aa2f@" + host + "/site.git", "Tok-81aa2f", false, "repository site (http://REDACTED@" + host + "/site.git)"},
		{"ssh refused", "ssh://" + user + ":Ssh-pw-77d0@127.0.0.1:1/site.git", "Ssh-pw-77d0", false, "repository site (ssh://airship:REDACTED@127.0.0.1:1/site.git)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			conf := filepath.Join(work, "config")
			c := "apiVersion: airshipit.org/v1alpha1\nkind: Config\ncurrentContext: c\ncontexts: {c: {manifest: m}}\nmanifests:\n  m:\n    phaseRepositoryName: site\n    targetPath: ./sites\n    metadataPath: metadata.yaml\n    repositories:\n      site: {url: '" + tt.url + "'}\n"
			if err := os.WriteFile(conf, []byte(c), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			cmd := NewCmd(cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, &siteflags.Options{ConfigPath: conf})
			cmd.SetArgs([]string{"pull", "--timeout", "20s"})
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			err := cmd.ExecuteContext(context.Background())
			shown := out.String() + errOut.String()
			if err != nil {
				shown += err.Error()
			}
			if (err == nil) != tt.wantCode {
				t.Fatalf("pull: %v, want success %v\n%s", err, tt.wantCode, shown)
			}
			if !strings.Contains(shown, tt.wantOut) {
				t.Errorf("want %q in:\n%s", tt.wantOut, shown)
			}
			if strings.Contains(shown, tt.secret) {
				t.Errorf("the secret %q is shown:\n%s", tt.secret, shown)
			}
		})
	}
}
