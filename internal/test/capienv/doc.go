// Package capienv runs the real Cluster API managers for tests, as local
// processes against a control plane from internal/test/testenv.
//
// `clusterctl init` installs a provider's CRDs, webhook configurations and
// Deployments. Under kwok those Deployments become Available, but no
// container runs, so nothing serves the webhooks and every create of a
// Cluster API object fails with "failed calling webhook". Start fixes that
// for the providers clusterctl's inventory lists: it issues a serving
// certificate for 127.0.0.1, points every admission and CRD conversion
// webhook of those providers at https://127.0.0.1:<port>/<path>, scales the
// provider Deployments to 0 and runs the manager binaries
// `make testbin` builds (capi-manager, capi-kubeadm-bootstrap-manager,
// capi-kubeadm-control-plane-manager) with the cluster's admin kubeconfig,
// each on its own ports, until the test ends.
//
// Providers without a local binary are left alone when they have no
// webhooks (a test can play such an infrastructure provider itself), and
// are an error otherwise. Missing binaries skip the test with a message
// naming `make testbin`, or fail it when AIRSHIP_REQUIRE_TESTBIN is set.
package capienv
