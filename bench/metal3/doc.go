// Package metal3 benchmarks metal3-operator, the BareMetalHost controller:
// N emulated hosts from created to available, then from available to
// provisioned, in one operator running as its own process (its peak RSS is
// VmHWM, read before it is stopped). Run with
//
//	go test ./bench/metal3 -run '^$' -bench Hosts -benchtime 1x
//
// $BENCH_SIZE sets N (default 1,000; `make bench` runs 1,000 and, with
// SHORT=1, 100).
//
// There is no upstream peer to run: metal3's baremetal-operator needs
// Ironic. The peer is the same operator untuned, at controller-runtime's
// and client-go's defaults (one host reconciled at a time, 5 API requests
// per second, bursts of 10); ours runs with the flags a sweep at 1,000
// hosts found best (tunedArgs). Each side gets its own fresh API server
// (etcd and kube-apiserver; nothing else runs on it) and its own emulator
// (internal/redfish/emulator) of the same N hosts, each host's BMC on an
// endpoint of its own. The hosts and their BMC and networkData Secrets
// come from the emulator's manifests; every Secret (and one host, as a dry
// run) is created before the clock starts. docs/benchmarks.md gives the
// sweep that chose tunedArgs.
//
// METAL3_BENCH_OPERATOR_ARGS adds flags to ours (for example
// "--concurrency=64 --kube-api-qps=100"; a later flag wins), to sweep;
// METAL3_BENCH_SKIP_PEER=1 runs ours alone (no row is recorded);
// METAL3_BENCH_TIMEOUT bounds each phase of a side (default 30m). The log
// gives, per side and phase, when hosts reached each state, the API
// requests made (conflicts among them), and the operator's CPU time and
// log errors. Nothing asserts a time.
//
// BenchmarkIronicHosts (rows ironic-100 and ironic-1000) takes N hosts
// through a real local Ironic (internal/localironic, its image server in
// the bench process) and the same operator with --ironic-endpoint: to
// available (inspection, automated cleaning by the deploy agent) and to
// provisioned (a 4 MiB raw image written by the agent, a config drive
// with the host's user-data). The emulator runs in a child process (the
// test binary as $BENCH_CHILD=ironic-emulator, disks as sparse files), so
// the peak RSS of the operator, of Ironic and of the emulator are each
// their own (VmHWM). There is no peer to run: the peer column is upstream
// BMO's published enrolment rate (800 hosts in 328 s), scaled to N and
// labelled as such. ironic_test.go says what limits it and what was
// measured; IRONIC_BENCH_TUNING, IRONIC_BENCH_HEARTBEAT and
// METAL3_BENCH_OPERATOR_ARGS sweep the settings.
package metal3
