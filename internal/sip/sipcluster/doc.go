// Package sipcluster is the SIPCluster controller. One SIPCluster is
// reconciled at a time, as the seed requires, and every step is
// idempotent. The whole object is checked first (name, spec.nodes,
// spec.services): an invalid one gets Ready False and Stalled True, reason
// InvalidSpec, naming each bad field, and no finalizer, so it can always be
// deleted; one already finalized (it held hosts, or an older operator
// added it) keeps its hosts until deleted, and one whose name is no label
// value, which no host or object can carry, just loses its finalizer when
// deleted. A pass over a valid cluster follows the seed's algorithm:
//
//   - gather: every BareMetalHost, each marked usable or not (in error,
//     being deprovisioned or deleted, detached, or provisioned and
//     powered off while online);
//   - schedule: internal/sip/schedule picks the cluster's hosts; when it
//     cannot, the cluster is Unschedulable and nothing is labelled;
//   - extract: each picked host's addresses from its networkData Secret
//     and its BMC credentials, both read in the host's own namespace (a
//     host whose networkData names another namespace is not usable); the
//     jump hosts' key Secrets and the Dex connectors' Secrets, read in the
//     SIPCluster's namespace;
//   - deploy services: the objects internal/sip/services builds, applied
//     server-side, and the cluster's objects no longer wanted deleted;
//   - label: released hosts lose SIP's labels, picked hosts get them.
//
// A pass that fails part-way leaves the cluster's labels as they were or
// partly written: the next pass counts the cluster's labelled hosts first
// and so finishes the same plan, or, when a cluster that was never
// scheduled can no longer be, removes them. Deleting a SIPCluster deletes
// its services and releases its hosts before its finalizer goes.
//
// Every pass ends in one place, finish: the pass's outcome (operatorkit's
// wait for hosts, a host's data or the services; stall on an invalid
// spec; failure, retried with backoff) sets Ready, and Stalled beside
// InvalidSpec; an event is recorded when Ready changes; and the status is
// written once, as a patch locked on the version the pass read, only when
// it changed.
package sipcluster
