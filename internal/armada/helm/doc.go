// Package helm runs Helm v4 SDK actions (install, upgrade, rollback,
// uninstall, test, history) for the Armada operator against the cluster a
// rest.Config reaches, with release records stored as Secrets in the release
// namespace as the helm CLI does, so `helm list` sees the same releases.
// An install refused because the release exists says so (ErrNameInUse);
// Options.Applied records what an install or upgrade applied, as the API
// server answered each create and update.
package helm
