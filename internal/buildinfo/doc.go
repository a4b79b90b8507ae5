// Package buildinfo says what a binary of this project was built from: its
// own version and revision, the Go toolchain, and the versions of the
// libraries whose behaviour users compare with their own tools (Kubernetes
// client libraries, Helm, kustomize, Cluster API, controller-runtime), read
// from the module information Go embeds in every binary.
package buildinfo
