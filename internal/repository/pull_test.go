package repository

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// origin is a repository the tests pull from.
type origin struct {
	t    *testing.T
	dir  string
	repo *git.Repository
}

func newOrigin(t *testing.T) *origin {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "site.git")
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		t.Fatal(err)
	}
	return &origin{t: t, dir: dir, repo: repo}
}

// commit writes file with content and commits it, returning the commit.
func (o *origin) commit(file, content string) plumbing.Hash {
	o.t.Helper()
	if err := os.WriteFile(filepath.Join(o.dir, file), []byte(content), 0o644); err != nil {
		o.t.Fatal(err)
	}
	wt, err := o.repo.Worktree()
	if err != nil {
		o.t.Fatal(err)
	}
	if _, err := wt.Add(file); err != nil {
		o.t.Fatal(err)
	}
	h, err := wt.Commit("change "+file, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(1700000000, 0)}})
	if err != nil {
		o.t.Fatal(err)
	}
	return h
}

func (o *origin) ref(name string, h plumbing.Hash) {
	o.t.Helper()
	if err := o.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(name), h)); err != nil {
		o.t.Fatal(err)
	}
}

func read(t *testing.T, dir, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

func TestPullRevisions(t *testing.T) {
	ctx := context.Background()
	o := newOrigin(t)
	first := o.commit("site.yaml", "v: 1\n")
	tagged := o.commit("site.yaml", "v: 2\n")
	if _, err := o.repo.CreateTag("v2", tagged, &git.CreateTagOptions{Message: "v2", Tagger: &object.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(1700000000, 0)}}); err != nil {
		t.Fatal(err)
	}
	o.ref("refs/heads/feature", first)
	review := o.commit("site.yaml", "v: review\n")
	o.ref("refs/changes/04/691202/5", review)
	wt, _ := o.repo.Worktree()
	if err := wt.Reset(&git.ResetOptions{Commit: tagged, Mode: git.HardReset}); err != nil {
		t.Fatal(err)
	}
	head := o.commit("site.yaml", "v: 3\n")
	url := "file://" + o.dir
	dir := filepath.Join(t.TempDir(), "site")

	pull := func(co *v1.RepoCheckout, opts Options) (*Result, error) {
		return Pull(ctx, "primary", &v1.Repository{URL: url, Checkout: co}, dir, opts)
	}
	tests := []struct {
		name     string
		checkout *v1.RepoCheckout
		action   string
		want     string
		rev      plumbing.Hash
	}{
		{"clone, the default branch", nil, "cloned", "v: 3\n", head},
		{"tag", &v1.RepoCheckout{Tag: "v2"}, "updated", "v: 2\n", tagged},
		{"branch", &v1.RepoCheckout{Branch: "feature"}, "updated", "v: 1\n", first},
		{"commit", &v1.RepoCheckout{CommitHash: tagged.String()}, "updated", "v: 2\n", tagged},
		{"remote ref", &v1.RepoCheckout{RemoteRef: "refs/changes/04/691202/5"}, "updated", "v: review\n", review},
		{"branch main", &v1.RepoCheckout{Branch: "main"}, "updated", "v: 3\n", head},
	}
	for _, tt := range tests {
		res, err := pull(tt.checkout, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if res.Action != tt.action || res.Revision != tt.rev.String() || read(t, dir, "site.yaml") != tt.want {
			t.Errorf("%s: %+v, site.yaml %q; want %s at %s with %q", tt.name, res, read(t, dir, "site.yaml"), tt.action, tt.rev, tt.want)
		}
	}
	// A branch checkout is a local branch at the remote's commit.
	local, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := local.Head(); err != nil || h.Name() != "refs/heads/main" || h.Hash() != head {
		t.Errorf("HEAD after the branch checkout: %v %v", h, err)
	}

	// A new commit upstream arrives with the next pull.
	next := o.commit("site.yaml", "v: 4\n")
	if res, err := pull(&v1.RepoCheckout{Branch: "main"}, Options{}); err != nil || res.Revision != next.String() || read(t, dir, "site.yaml") != "v: 4\n" {
		t.Fatalf("pull after a new commit: %+v %v", res, err)
	}

	// Local changes are kept unless the checkout is forced.
	if err := os.WriteFile(filepath.Join(dir, "site.yaml"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pull(&v1.RepoCheckout{Tag: "v2"}, Options{}); err == nil || !strings.Contains(err.Error(), "local changes") || !strings.Contains(err.Error(), "repository primary") {
		t.Fatalf("pull over local changes: %v", err)
	}
	if read(t, dir, "site.yaml") != "mine\n" {
		t.Fatal("a refused pull changed the working tree")
	}
	if _, err := pull(&v1.RepoCheckout{Tag: "v2", Force: true}, Options{}); err != nil || read(t, dir, "site.yaml") != "v: 2\n" {
		t.Fatalf("forced pull: %v, site.yaml %q", err, read(t, dir, "site.yaml"))
	}

	// Bad input names the repository and the field.
	for _, bad := range []struct {
		co   *v1.RepoCheckout
		want string
	}{
		{&v1.RepoCheckout{Tag: "nope"}, "checkout.tag nope"},
		{&v1.RepoCheckout{Branch: "nope"}, "checkout.branch nope"},
		{&v1.RepoCheckout{CommitHash: strings.Repeat("ab", 20)}, "checkout.commitHash"},
		{&v1.RepoCheckout{RemoteRef: "refs/changes/99/1/1"}, "checkout.remoteRef refs/changes/99/1/1"},
		{&v1.RepoCheckout{Tag: "v2", Branch: "main"}, "mutually exclusive"},
	} {
		if _, err := pull(bad.co, Options{}); err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "repository primary ("+url+")") {
			t.Errorf("checkout %+v: %v, want %q", bad.co, err, bad.want)
		}
	}
	if _, err := Pull(ctx, "other", &v1.Repository{URL: "file:///elsewhere/site.git"}, dir, Options{}); err == nil || !strings.Contains(err.Error(), "is a clone of") {
		t.Errorf("pull of another URL into the clone: %v", err)
	}
}

func TestPullNoCheckoutAndUnreachable(t *testing.T) {
	ctx := context.Background()
	o := newOrigin(t)
	o.commit("site.yaml", "v: 1\n")
	dir := filepath.Join(t.TempDir(), "site")
	res, err := Pull(ctx, "primary", &v1.Repository{URL: "file://" + o.dir}, dir, Options{NoCheckout: true})
	if err != nil || res.Action != "cloned" || res.Revision != "" {
		t.Fatalf("clone without checkout: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "site.yaml")); !os.IsNotExist(err) {
		t.Errorf("--no-checkout wrote the working tree (%v)", err)
	}
	gone := filepath.Join(t.TempDir(), "gone")
	_, err = Pull(ctx, "primary", &v1.Repository{URL: "file:///nowhere/site.git"}, gone, Options{})
	if err == nil || !strings.Contains(err.Error(), "repository primary (file:///nowhere/site.git): clone:") {
		t.Fatalf("unreachable repository: %v", err)
	}
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("a failed clone left %s behind (%v)", gone, err)
	}
	notRepo := t.TempDir()
	if err := os.WriteFile(filepath.Join(notRepo, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Pull(ctx, "primary", &v1.Repository{URL: "file://" + o.dir}, notRepo, Options{}); err == nil || !strings.Contains(err.Error(), "is not a Git repository") {
		t.Errorf("pull into a non-empty directory: %v", err)
	}
	if _, err := Pull(ctx, "primary", &v1.Repository{URL: "file://" + o.dir, Auth: &v1.RepoAuth{Type: "token"}}, gone, Options{}); err == nil || !strings.Contains(err.Error(), `auth.type "token"`) {
		t.Errorf("unknown auth type: %v", err)
	}
}

// TestPullOverHTTPWithBasicAuth serves the origin with git's own smart
// HTTP server (git http-backend) behind basic auth.
func TestPullOverHTTPWithBasicAuth(t *testing.T) {
	o := newOrigin(t)
	want := o.commit("site.yaml", "v: 1\n")
	const user, password = "airship", "s3cret-pull-pw"
	srv := testtool.GitHTTPServer(t, filepath.Dir(o.dir), user, password)
	url := srv.URL + "/" + filepath.Base(o.dir)
	dir := filepath.Join(t.TempDir(), "site")
	_, err := Pull(context.Background(), "primary", &v1.Repository{URL: url, Auth: &v1.RepoAuth{Type: "http-basic", Username: user, HTTPPassword: "wrong-pw-value"}}, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "repository primary") || strings.Contains(err.Error(), "wrong-pw-value") {
		t.Fatalf("wrong password: %v (want an error naming the repository and not the password)", err)
	}
	res, err := Pull(context.Background(), "primary", &v1.Repository{URL: url, Auth: &v1.RepoAuth{Type: "http-basic", Username: user, HTTPPassword: password}}, dir, Options{})
	if err != nil || res.Revision != want.String() || read(t, dir, "site.yaml") != "v: 1\n" {
		t.Fatalf("pull over HTTP: %+v %v", res, err)
	}
}

// TestPullBounds: a server that never answers costs the pull its timeout
// and no more, one that sends more than the cap is cut off, and neither
// error shows the password of the URL.
func TestPullBounds(t *testing.T) {
	o := newOrigin(t)
	// Random content does not compress: the pack is about as big as the blob.
	big := make([]byte, 1<<20)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	o.commit("big.bin", string(big))
	serving := testtool.GitHTTPServer(t, filepath.Dir(o.dir), "", "")
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hanging.Close()
	const password = "pull-bound-pw"
	withCreds := func(srv *httptest.Server) string {
		return strings.Replace(srv.URL, "http://", "http://airship:"+password+"@", 1) + "/" + filepath.Base(o.dir)
	}
	tests := []struct {
		name    string
		url     string
		opts    Options
		wantIs  error
		wantMsg string
	}{
		{"a server that hangs", withCreds(hanging), Options{Timeout: 300 * time.Millisecond}, context.DeadlineExceeded, "stopped after 300ms"},
		{"more than the cap", withCreds(serving), Options{MaxFetchBytes: 64 << 10}, ErrTooLarge, "received more than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "site")
			_, err := Pull(context.Background(), "primary", &v1.Repository{URL: tt.url}, dir, tt.opts)
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("error %v, want one wrapping %v", err, tt.wantIs)
			}
			msg := err.Error()
			if !strings.Contains(msg, "repository primary (http://airship:REDACTED@") || !strings.Contains(msg, tt.wantMsg) || strings.Contains(msg, password) {
				t.Errorf("error %q: want the repository with its URL redacted and %q, never the password", msg, tt.wantMsg)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("a failed clone left %s behind (%v)", dir, err)
			}
		})
	}
	// Under the cap, the same repository arrives.
	dir := filepath.Join(t.TempDir(), "site")
	if _, err := Pull(context.Background(), "primary", &v1.Repository{URL: withCreds(serving)}, dir, Options{MaxFetchBytes: 4 << 20}); err != nil || read(t, dir, "big.bin") != string(big) {
		t.Fatalf("pull under the cap: %v", err)
	}
}

// TestPullAfterNoCheckout: a clone made with --no-checkout has nothing
// checked out, which is no local change: the next pull checks out.
func TestPullAfterNoCheckout(t *testing.T) {
	ctx := context.Background()
	o := newOrigin(t)
	head := o.commit("site.yaml", "v: 1\n")
	url := "file://" + o.dir
	for _, tt := range []struct {
		name     string
		checkout *v1.RepoCheckout
	}{
		{"default branch", nil},
		{"branch", &v1.RepoCheckout{Branch: "main"}},
		{"commit", &v1.RepoCheckout{CommitHash: head.String()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "site")
			r := &v1.Repository{URL: url, Checkout: tt.checkout}
			if _, err := Pull(ctx, "primary", r, dir, Options{NoCheckout: true}); err != nil {
				t.Fatal(err)
			}
			res, err := Pull(ctx, "primary", r, dir, Options{})
			if err != nil || res.Revision != head.String() || read(t, dir, "site.yaml") != "v: 1\n" {
				t.Fatalf("pull after --no-checkout: %+v %v", res, err)
			}
			// A file put into a clone never checked out is a local change.
			dir2 := filepath.Join(t.TempDir(), "site")
			if _, err := Pull(ctx, "primary", r, dir2, Options{NoCheckout: true}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir2, "mine.txt"), []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Pull(ctx, "primary", r, dir2, Options{}); err == nil || !strings.Contains(err.Error(), "has local changes") {
				t.Errorf("pull over a file in a never checked out clone: %v", err)
			}
		})
	}
}
