// Package repository clones or updates a manifest's Git repositories into
// its target path, as `airshipctl document pull` does, with go-git: no git
// binary is needed. It is not part of the document model (internal/document
// reads what it leaves on disk) and needs nothing of the airship config but
// the API types: the caller passes each repository's directory.
//
// A repository is cloned into the directory it is given (the caller takes
// targetPath/<directory named after its URL>, the path rule of
// internal/config) or, when that directory already holds a clone of the
// same URL, fetched and moved to the revision its checkout names: a branch (kept as a local branch at the remote's commit), a tag, a
// commit hash or a remote ref such as refs/changes/04/691202/5; with none,
// the remote's default branch. A working tree with local changes is left
// alone unless checkout.force is set; a clone made with NoCheckout that
// nothing was checked out into since has none. Authentication comes from
// the repository's auth: http-basic, ssh-key or ssh-pass.
//
// Every pull is bounded: Options.Timeout (DefaultTimeout, 10 minutes) is a
// deadline on the whole of it, and Options.MaxFetchBytes
// (DefaultMaxFetchBytes, 512 MiB) caps what it receives, summed: the
// bodies of its HTTP(S) answers, or the bytes read from its ssh
// connections; past it the pull fails with ErrTooLarge. The HTTP client is
// installed into go-git's protocol table once (go-git v5 takes no client
// per call) and finds each pull's cap in the request's context. Over
// ssh:// (and scp-like git@host:path) go-git takes no dialer, but dials
// through an endpoint's proxy: a pull names, as its proxy, a URL scheme
// registered with golang.org/x/net/proxy whose dialer connects (through
// ALL_PROXY when set, as go-git would; TCP connect SSHDialTimeout, 10 s)
// under the pull's deadline, closes the connection when the deadline
// passes (ending a handshake that never completes) and counts what it
// reads against the cap. Messages and errors show a repository's URL
// through redact.URL, and go-git's errors through redact.Error.
package repository
