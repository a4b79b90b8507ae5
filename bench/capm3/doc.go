// Package capm3 benchmarks the Cluster API infrastructure provider for
// bare metal (the Metal3Machine controller of metal3-operator): N Machines
// and their Metal3Machines created at once on N emulated hosts, timed until
// Cluster API reports every Machine Running with a nodeRef. Run with
//
//	go test ./bench/capm3 -run '^$' -bench Machines -benchtime 1x -timeout 60m
//
// $BENCH_SIZE sets N (default 1,000). `make bench` runs 100 and 300, with
// SHORT=1 only 100; 1,000 (15 to 20 minutes) is run by hand.
//
// Each side gets an environment of its own, built before its clock starts:
// a management control plane (internal/test/testenv full mode) where
// `clusterctl init` installed Cluster API core, the kubeadm providers and
// this provider (config/metal3/default), with the real Cluster API managers
// running as processes (internal/test/capienv); a workload control plane; a
// Redfish emulator of N+1 hosts in a process of its own (this test binary
// re-executed, each host's BMC on an endpoint of its own, booted hosts
// becoming kwok Nodes of the workload cluster); and metal3-operator as its
// own process with every controller. The hosts are registered and brought
// to available, and a Cluster (a Metal3Cluster with noCloudProvider: true)
// gets one control-plane Machine, Running before the clock starts: without
// a control-plane provider Cluster API counts the cluster initialized, and
// watches its Nodes, only once a control-plane Machine has a nodeRef. The N
// measured Machines are workers.
//
// The Machines share one bootstrap data Secret: a #cloud-config writing a
// kubeadm JoinConfiguration (nodeRegistration.name from the meta-data's
// name, the kubelet label metal3.io/uuid from its uuid, the workload API
// server as the discovery endpoint). The emulator reads it when a host
// boots and registers the Node; the provider finds the Node by its label
// and sets its providerID; Cluster API matches it and sets the nodeRef.
//
// Ours is metal3-operator with its default flags; the peer is the same
// binary at the defaults of upstream cluster-api-provider-metal3's manager
// (metal3machine concurrency 10, 20 requests/s with bursts of 30, per
// kind: controller-runtime gives each resource's client its own limiter).
// Upstream CAPM3 itself cannot be built here: its API module cannot
// coexist with Cluster API v1.14 in one build, and its BareMetalHost side
// needs Ironic. Both sides' writers are the same 16 workers.
//
// CAPM3_BENCH_OPERATOR_ARGS adds flags to ours and CAPM3_BENCH_PEER_ARGS
// to the peer (a later flag wins); CAPM3_BENCH_SKIP_PEER=1 runs ours alone
// (no row); CAPM3_BENCH_TIMEOUT bounds each wait of a side (default 30m);
// CAPM3_BENCH_LOG_DIR keeps every process's log there (default: a
// temporary directory, removed).
//
// Every run checks that each host was claimed by one machine and each
// machine holds one host, that every Machine is Running with a nodeRef and
// the providerID of its host, and that the workload cluster has one Node
// per host with that providerID; the benchmark fails otherwise. Nothing
// asserts a time. Besides the times, a run logs when machines reached each
// stage (owned by their Machine, host claimed, host provisioned,
// Metal3Machine ready, Running), the operator's reconciles and requests
// (from its own metrics), the management API server's requests, the CPU
// each process spent and every process's peak RSS (VmHWM).
package capm3
