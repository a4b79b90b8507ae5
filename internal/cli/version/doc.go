// Package version is the `version` command every binary of the project has:
// its version and revision, and the versions of Kubernetes, Helm, kustomize,
// Cluster API and controller-runtime it was built with (-o json|yaml).
package version
