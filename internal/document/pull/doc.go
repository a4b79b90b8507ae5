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
// alone unless checkout.force is set. Authentication comes from the
// repository's auth: http-basic, ssh-key or ssh-pass.
package pull
