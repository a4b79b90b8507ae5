// Package schedule decides which BareMetalHosts a SIPCluster gets: a pure
// function of the cluster's spec.nodes and the hosts, with no API calls,
// so it is tested by tables and fuzzing and measured alone.
//
// Hosts already labelled for the cluster count first: they keep their
// role while they are usable, still match their role's selector and keep
// to the topology rule. Then, role by role (ControlPlane, then Worker),
// active hosts are filled from the cluster's kept actives, then its kept
// standbys (a promotion), then new candidates; standbys from kept standbys,
// then new candidates. New candidates are taken in name order. A host is
// a candidate when no other SIPCluster claims it, it is usable, it
// matches the role's labelSelector and it carries the role's topologyKey
// label with a value no other host of the cluster has (the rule holds
// across the roles of a cluster that share a key). Hosts of the cluster
// that are not kept, or exceed the counts, are released; a smaller active
// count releases actives in reverse name order rather than demoting them.
//
// When a role cannot get all its hosts, Schedule returns an
// *UnschedulableError saying how many hosts matched and why the others
// were left out, and no plan: the caller labels nothing.
package schedule
