// Package sip benchmarks SIP's scheduling: a SIPCluster of 3 control-plane
// hosts and 100 workers, one per rack (topologyKey rack for both roles, so
// 103 racks), picked from N BareMetalHosts spread over 500 racks, one in
// ten of them control-plane-flavoured. Run with
//
//	go test ./bench/sip -run '^$' -bench Reconcile -benchtime 1x
//	go test ./bench/sip -run '^$' -bench Schedule
//
// $BENCH_SIZE sets N (default 10,000; `make bench` runs 1,000 and 10,000).
//
// BenchmarkSchedule times the pure function (internal/sip/schedule) alone:
// it has no external peer and records no row. BenchmarkReconcile times one
// full reconcile on a real API server (etcd and kube-apiserver, nothing
// else): sip-operator as its own process, started and synced before the
// clock, from creating the SIPCluster to its Ready=True (seen by a watch
// opened before the create) with the 103 hosts labelled. The peer is what a
// user without SIP does on the same server in the same state: `kubectl get
// bmh -A -l SELECTOR -o json`, a one-per-rack pick in Go, and one `kubectl
// label` per role, writing the same labels on the same hosts. Both sides
// run on one API server; between them the SIP labels are taken off again
// and the SIPCluster removed, and the side that goes first alternates per
// run. The hosts are created before either clock starts, 16 requests at
// once. The cluster asks for no services, so the operator reads no Secret
// and the cluster is Ready as soon as its hosts are labelled.
//
// The row's notes give the operator's own reconcile durations (from its
// controller-runtime log at V(5)), the scheduling function's time and
// allocations at 1,000 and 10,000 hosts, and where the peer's time went.
// Nothing asserts a time.
package sip
