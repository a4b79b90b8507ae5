package repository

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	git "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/redact"
)

// Options configure Pull.
type Options struct {
	// NoCheckout fetches (or clones) without touching the working tree.
	NoCheckout bool
	// Progress receives git's progress messages; nil discards them.
	Progress io.Writer
	// Timeout bounds the pull of one repository; 0 is DefaultTimeout.
	Timeout time.Duration
	// MaxFetchBytes caps what the pull of one repository receives over
	// HTTP(S) or ssh; 0 is DefaultMaxFetchBytes.
	MaxFetchBytes int64
}

// Result is what Pull did to one repository.
type Result struct {
	// Action is "cloned" or "updated".
	Action string
	// Revision is the commit checked out (empty with NoCheckout).
	Revision string
}

// Pull brings the repository named name (for messages) into dir: a clone
// when dir does not exist or is empty, else a fetch into the clone there,
// then the checkout r names. It stops at opts.Timeout and when more than
// opts.MaxFetchBytes arrive. Its errors show the URL redacted.
func Pull(ctx context.Context, name string, r *v1.Repository, dir string, opts Options) (*Result, error) {
	if err := Check(name, r); err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxFetchBytes <= 0 {
		opts.MaxFetchBytes = DefaultMaxFetchBytes
	}
	installTransport()
	b := &budget{limit: opts.MaxFetchBytes}
	pctx, cancel := context.WithTimeout(withBudget(ctx, b), opts.Timeout)
	defer cancel()
	px, forget := sshProxy(pctx, r.URL, b)
	defer forget()
	res, err := pull(pctx, name, r, dir, opts, px)
	if err == nil {
		return res, nil
	}
	// The cause go-git may hide, named plainly.
	prefix := fmt.Sprintf("repository %s (%s)", name, redact.URL(r.URL))
	switch {
	case b.exceeded.Load():
		return nil, fmt.Errorf("%s: received more than %d bytes (the fetch size cap): %w", prefix, opts.MaxFetchBytes, ErrTooLarge)
	case ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%s: stopped after %s (the pull's timeout): %w", prefix, opts.Timeout, pctx.Err())
	}
	return nil, err
}

// px leads go-git's ssh transport to the dialer of sshdial.go (none for
// other URLs).
func pull(ctx context.Context, name string, r *v1.Repository, dir string, opts Options, px transport.ProxyOptions) (*Result, error) {
	// fail names the repository, its URL redacted; a go-git error that
	// may quote the URL is redacted too.
	fail := func(format string, args ...any) error {
		for i, a := range args {
			if err, ok := a.(error); ok {
				args[i] = redact.Error(err)
			}
		}
		return fmt.Errorf("repository %s (%s): %w", name, redact.URL(r.URL), fmt.Errorf(format, args...))
	}
	co := r.Checkout
	if co == nil {
		co = &v1.RepoCheckout{}
	}
	auth, err := authMethod(r.Auth)
	if err != nil {
		return nil, fail("%w", err)
	}
	g := &gitPull{ctx: ctx, r: r, dir: dir, opts: opts, px: px, auth: auth, fail: fail}
	repo, action, err := g.cloneOrFetch()
	if err != nil {
		return nil, err
	}
	res := &Result{Action: action}
	if err := g.fetchRemoteRef(repo, co); err != nil {
		return nil, err
	}
	if opts.NoCheckout {
		return res, nil
	}
	if res.Revision, err = g.checkout(repo, co, action == "updated"); err != nil {
		return nil, err
	}
	return res, nil
}

// gitPull is one pull's settings, shared by its stages.
type gitPull struct {
	ctx  context.Context
	r    *v1.Repository
	dir  string
	opts Options
	px   transport.ProxyOptions
	auth transport.AuthMethod
	fail func(format string, args ...any) error
}

// cloneOrFetch clones the repository into an empty or missing dir, or
// fetches into the clone dir holds (of the same URL only). The action is
// "cloned" or "updated".
func (g *gitPull) cloneOrFetch() (*git.Repository, string, error) {
	dir, fail := g.dir, g.fail
	repo, err := git.PlainOpen(dir)
	switch {
	case errors.Is(err, git.ErrRepositoryNotExists):
		if entries, rerr := os.ReadDir(dir); rerr == nil && len(entries) > 0 {
			return nil, "", fail("%s exists and is not a Git repository; move it away first", dir)
		}
		repo, err = git.PlainCloneContext(g.ctx, dir, false, &git.CloneOptions{URL: g.r.URL, Auth: g.auth, NoCheckout: true, Progress: g.opts.Progress, ProxyOptions: g.px})
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, "", fail("clone: %w", err)
		}
		return repo, "cloned", nil
	case err != nil:
		return nil, "", fail("opening %s: %w", dir, err)
	}
	remote, err := repo.Remote(git.DefaultRemoteName)
	if err != nil {
		return nil, "", fail("%s has no remote %q: %w", dir, git.DefaultRemoteName, err)
	}
	if urls := remote.Config().URLs; len(urls) == 0 || urls[0] != g.r.URL {
		shown := make([]string, len(urls))
		for i, u := range urls {
			shown[i] = redact.URL(u)
		}
		return nil, "", fail("%s is a clone of %v, not of this URL; move it away or fix the URL", dir, shown)
	}
	err = repo.FetchContext(g.ctx, &git.FetchOptions{Auth: g.auth, Progress: g.opts.Progress, Force: true, Tags: git.AllTags, ProxyOptions: g.px,
		RefSpecs: []gitconfig.RefSpec{"+refs/heads/*:refs/remotes/origin/*"}})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, "", fail("fetch: %w", err)
	}
	return repo, "updated", nil
}

// fetchRemoteRef fetches checkout.remoteRef, when set, to the same name.
func (g *gitPull) fetchRemoteRef(repo *git.Repository, co *v1.RepoCheckout) error {
	if co.RemoteRef == "" {
		return nil
	}
	spec := gitconfig.RefSpec("+" + co.RemoteRef + ":" + co.RemoteRef)
	if err := spec.Validate(); err != nil {
		return g.fail("checkout.remoteRef %q: %w", co.RemoteRef, err)
	}
	err := repo.FetchContext(g.ctx, &git.FetchOptions{Auth: g.auth, Progress: g.opts.Progress, Force: true, RefSpecs: []gitconfig.RefSpec{spec}, ProxyOptions: g.px})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return g.fail("fetching checkout.remoteRef %s: %w", co.RemoteRef, err)
	}
	return nil
}

// checkout checks out the revision co names and returns its commit. An
// updated clone with local changes is left alone unless checkout.force.
func (g *gitPull) checkout(repo *git.Repository, co *v1.RepoCheckout, updated bool) (string, error) {
	fail := g.fail
	hash, branch, err := resolve(repo, co)
	if err != nil {
		return "", fail("%w", err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", fail("%w", err)
	}
	fresh, err := neverCheckedOut(repo, g.dir)
	if err != nil {
		return "", fail("%w", err)
	}
	if updated && !co.Force && !fresh {
		st, err := wt.Status()
		if err != nil {
			return "", fail("reading the working tree's status: %w", err)
		}
		if !st.IsClean() {
			return "", fail("%s has local changes; commit or discard them, or set checkout.force", g.dir)
		}
	}
	if branch != "" {
		// The branch is a local branch at the remote's commit.
		ref := plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), hash)
		if err := repo.Storer.SetReference(ref); err != nil {
			return "", fail("setting branch %s: %w", branch, err)
		}
		err = wt.Checkout(&git.CheckoutOptions{Branch: ref.Name(), Force: true})
	} else {
		err = wt.Checkout(&git.CheckoutOptions{Hash: hash, Force: true})
	}
	if err != nil {
		return "", fail("checkout of %s: %w", hash, err)
	}
	return hash.String(), nil
}

// Check reports what is wrong with a repository's settings before
// anything is fetched: no URL, more than one revision in its checkout, an
// unknown auth type or an unreadable SSH key.
func Check(name string, r *v1.Repository) error {
	if r == nil || r.URL == "" {
		return fmt.Errorf("repository %s: url is required", name)
	}
	if err := r.Checkout.Validate(); err != nil {
		return fmt.Errorf("repository %s (%s): checkout: %w", name, redact.URL(r.URL), err)
	}
	if _, err := authMethod(r.Auth); err != nil {
		return fmt.Errorf("repository %s (%s): %w", name, redact.URL(r.URL), err)
	}
	return nil
}

// neverCheckedOut reports a clone made with NoCheckout that nothing was
// checked out into since: an empty index and nothing but .git in dir. Its
// status lists every file as deleted, which are no local changes.
func neverCheckedOut(repo *git.Repository, dir string) (bool, error) {
	idx, err := repo.Storer.Index()
	if err != nil {
		return false, fmt.Errorf("reading the index: %w", err)
	}
	if len(idx.Entries) > 0 {
		return false, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(git.GitDirName) {
			return false, nil
		}
	}
	return true, nil
}

// resolve finds the commit the checkout names, and the branch to keep at
// it (empty for a detached checkout).
func resolve(repo *git.Repository, co *v1.RepoCheckout) (plumbing.Hash, string, error) {
	switch {
	case co.CommitHash != "":
		h := plumbing.NewHash(co.CommitHash)
		if _, err := repo.CommitObject(h); err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("checkout.commitHash %s: %w", co.CommitHash, err)
		}
		return h, "", nil
	case co.Tag != "":
		ref, err := repo.Tag(co.Tag)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("checkout.tag %s: %w", co.Tag, err)
		}
		h, err := repo.ResolveRevision(plumbing.Revision(ref.Name().String() + "^{commit}"))
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("checkout.tag %s: %w", co.Tag, err)
		}
		return *h, "", nil
	case co.RemoteRef != "":
		ref, err := repo.Reference(plumbing.ReferenceName(co.RemoteRef), true)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("checkout.remoteRef %s: %w", co.RemoteRef, err)
		}
		return ref.Hash(), "", nil
	case co.Branch != "":
		name := plumbing.NewRemoteReferenceName(git.DefaultRemoteName, co.Branch)
		if co.LocalBranch {
			name = plumbing.NewBranchReferenceName(co.Branch)
		}
		ref, err := repo.Reference(name, true)
		if err != nil {
			return plumbing.ZeroHash, "", fmt.Errorf("checkout.branch %s: %w", co.Branch, err)
		}
		return ref.Hash(), co.Branch, nil
	default:
		// The remote's default branch, as a clone checks it out.
		ref, err := repo.Reference(plumbing.NewRemoteHEADReferenceName(git.DefaultRemoteName), true)
		if err != nil {
			// A clone's HEAD names the default branch.
			head, herr := repo.Storer.Reference(plumbing.HEAD)
			if herr != nil || head.Type() != plumbing.SymbolicReference {
				return plumbing.ZeroHash, "", fmt.Errorf("the remote's default branch is unknown; name checkout.branch")
			}
			ref, err = repo.Reference(plumbing.NewRemoteReferenceName(git.DefaultRemoteName, head.Target().Short()), true)
			if err != nil {
				return plumbing.ZeroHash, "", fmt.Errorf("default branch %s: %w", head.Target().Short(), err)
			}
			return ref.Hash(), head.Target().Short(), nil
		}
		return ref.Hash(), "", nil
	}
}

// authMethod turns a repository's auth into go-git's. Passwords and key
// passphrases go nowhere else.
func authMethod(a *v1.RepoAuth) (transport.AuthMethod, error) {
	if a == nil || a.Type == "" {
		return nil, nil
	}
	user := a.Username
	switch a.Type {
	case "http-basic":
		return &githttp.BasicAuth{Username: user, Password: a.HTTPPassword}, nil
	case "ssh-key":
		if user == "" {
			user = "git"
		}
		k, err := gitssh.NewPublicKeysFromFile(user, a.KeyPath, a.KeyPassword)
		if err != nil {
			return nil, fmt.Errorf("auth.sshKey %s: %w", a.KeyPath, err)
		}
		return k, nil
	case "ssh-pass":
		if user == "" {
			user = "git"
		}
		return &gitssh.Password{User: user, Password: a.SSHPassword}, nil
	default:
		return nil, fmt.Errorf("auth.type %q: want ssh-key, ssh-pass or http-basic", a.Type)
	}
}
