// Package capilocal runs the real Cluster API managers as local processes
// against a cluster whose Pods never run (the local control plane, where
// kwok plays the kubelets).
//
// `clusterctl init` installs a provider's CRDs, webhook configurations and
// Deployments. Under kwok those Deployments become Available, but no
// container runs, so nothing serves the webhooks and every create of a
// Cluster API object fails with "failed calling webhook". New fixes that
// for the providers clusterctl's inventory lists: it issues a serving
// certificate for 127.0.0.1, points every admission and CRD conversion
// webhook of those providers at https://127.0.0.1:<port>/<path>, scales the
// provider Deployments to 0 and runs the manager binaries `make testbin`
// builds (capi-manager, capi-kubeadm-bootstrap-manager,
// capi-kubeadm-control-plane-manager) with the cluster's admin kubeconfig,
// each on its own ports, until Stop.
//
// Providers without a local binary are left alone when they have no
// webhooks (this project's bare-metal provider runs as metal3-operator),
// and are an error otherwise. internal/test/capienv wraps New for tests;
// `make demo` runs it through hack/capi-managers.
package capilocal
