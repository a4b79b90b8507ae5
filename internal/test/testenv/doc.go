// Package testenv starts real Kubernetes control planes for tests.
//
// Two modes:
//   - API: etcd + kube-apiserver through controller-runtime's envtest, with
//     CRDs loaded from config/. Starts in 2-3 s. Objects are stored and
//     validated, but nothing reconciles built-in workloads.
//   - Full: the local control plane of internal/cluster/local in a temporary
//     state directory: etcd, kube-apiserver, kube-controller-manager,
//     kube-scheduler and kwok with fake Nodes, so Deployments, DaemonSets,
//     StatefulSets and Jobs really progress to Ready or Complete.
//
// RunAs runs an operator as its ServiceAccount with only the roles of its
// config/<operator>/rbac (impersonation), for the operators' RBAC tests;
// Kustomize builds any kustomization under config/.
//
// For the tests of controllers: MainAPI and MainFull are a TestMain that
// shares one control plane; NewManager is a manager for the controllers a
// test sets up itself; Go runs a manager (or an operator) until the test
// ends and fails the test with the error it stops with; Namespace keeps
// the tests that share a control plane apart; HTTPGet reads the probes and
// metrics an operator serves.
//
// Ironic starts a real Ironic (internal/localironic) for a test, in a
// temporary state directory with its image server in the test process; it
// needs Debian's Ironic (`bash hack/setup.sh`), with the same skip-or-fail
// rule as the binaries below. ServeDiskImage serves a small GPT disk
// image from an Ironic's image server (raw or qcow2, with its checksums
// and, if asked, a checksum file) and names it as a BareMetalHost's or a
// Metal3Machine's spec.image; configdrivetest.ProvisionedDisk checks a
// host's disk once Ironic deployed it.
//
// Both modes need the binaries `make testbin` builds. When they are absent a test
// is skipped with a message naming that command, unless
// AIRSHIP_REQUIRE_TESTBIN is set (make test and CI set it), in which case it fails.
package testenv
