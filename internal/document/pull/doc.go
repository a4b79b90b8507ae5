// Package pull clones or updates a manifest's Git repositories into its
// target path, as `airshipctl document pull` does, with go-git: no git
// binary is needed.
//
// A repository is cloned into targetPath/<directory named after its URL>
// (the path rule of internal/config) or, when that directory already holds
// a clone of the same URL, fetched and moved to the revision its checkout
// names: a branch (kept as a local branch at the remote's commit), a tag, a
// commit hash or a remote ref such as refs/changes/04/691202/5; with none,
// the remote's default branch. A working tree with local changes is left
// alone unless checkout.force is set; a clone made with NoCheckout that
// nothing was checked out into since has none. Authentication comes from
// the repository's auth: http-basic, ssh-key or ssh-pass.
//
// Every pull is bounded: Options.Timeout (DefaultTimeout, 10 minutes) is a
// deadline on the whole of it, and Options.MaxFetchBytes
// (DefaultMaxFetchBytes, 512 MiB) caps what its HTTP(S) answers carry,
// summed; past it the pull fails with ErrTooLarge. The HTTP client is
// installed into go-git's protocol table once (go-git v5 takes no client
// per call) and finds each pull's cap in the request's context. Over ssh://
// the deadline bounds reading the answer (go-git connects and shakes hands
// without it) and there is no size cap. Messages and errors show a repository's URL
// through redact.URL, and go-git's errors through redact.Error.
package pull
