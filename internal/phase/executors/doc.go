// Package executors is the list of every executor the phase engine runs,
// in one place: All maps each executor document's group/version/kind to
// its factory, and Register puts them into the registry of
// internal/phase/executor. The executor packages do not register
// themselves; what loads a site (internal/cli/siteflags, test helpers)
// calls Register first, so adding an executor is one line in All.
package executors
