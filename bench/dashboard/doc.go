// Package dashboard benchmarks the hosts view of `airshipctl dashboard`
// against what a user would otherwise run to see every host, `kubectl get
// baremetalhosts -A -o json`. Run with
//
//	go test ./bench/dashboard -run '^$' -bench '^BenchmarkHostsView$' -benchtime 1x
//
// $BENCH_SIZE sets N (default 10,000; `make bench` runs 10,000, and 1,000
// with SHORT=1).
//
// One API server (etcd and kube-apiserver, nothing else) holds N
// BareMetalHosts in one namespace, 40 to a rack, created before either
// clock 32 at a time: each with a spec (online, a BMC address and
// credentialsName, bootMACAddress, labels with the rack and role; an
// image, userData and consumerRef on the three in four provisioned) and a
// status written through the status subresource (provisioned or
// available, poweredOn, operationalStatus OK, hardware details with 4 NICs
// and 3 disks), about 3.5 KiB of JSON each as the API server serves them.
//
// Ours is the built airshipctl (from $BENCH_BIN_DIR, else built now), a
// fresh process: `airshipctl --airshipconf CONFIG --kubeconfig KUBECONFIG
// dashboard --listen 127.0.0.1:0` on a one-phase site whose ClusterMap is
// the one cluster c1 (writeSite), timed from its start until GET
// /api/hosts, polled every 100 ms by the bench, answers with all N hosts;
// the poll's own request and decoding are part of that time. Then 5 more
// GETs are timed (a note). Its peak RSS is VmHWM, read after those GETs,
// just before it is stopped. The peer is `kubectl get baremetalhosts -A -o
// json` into a file, a fresh process with a discovery cache warmed before
// the clock, 2 runs averaged per run. Both answers are checked to hold
// exactly the N hosts.
//
// DASHBOARD_BENCH_ENV adds environment variables to the dashboard's (for
// example "GOMEMLIMIT=48MiB" or "GODEBUG=gctrace=1"; its stderr is logged
// when it wrote any), to sweep; DASHBOARD_BENCH_SKIP_PEER=1 runs ours alone
// and records no row. Nothing asserts a time.
package dashboard
