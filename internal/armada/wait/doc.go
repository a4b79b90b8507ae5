// Package wait decides whether a release's workloads are ready, with
// Armada's wait semantics: every entry of wait.resources (job, pod,
// deployment, daemonset, statefulset) selects objects in the release
// namespace by wait.labels plus its own labels, controllers must have
// min_ready of their pods ready on the current revision, jobs must have
// completed, and a required entry that selects nothing is not ready.
//
// Check looks once and returns; the controller calls it again on every
// change of a watched object or after a short requeue, and enforces the
// timeout itself, so no worker blocks while workloads start.
package wait
