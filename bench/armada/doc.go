// Package armada benchmarks the Armada operator: N ArmadaCharts of a small
// chart (a ConfigMap and a one-pod Deployment) from created to all
// satisfied, with the operator as its own process, started and ready (its
// /readyz answers) before the clock (its peak RSS is VmHWM, read before it
// is stopped), against the same N releases installed through the Helm SDK
// at the operator's parallelism and, beside it, one at a time. Each side
// runs on its own fresh local control plane of the same size, into one new
// namespace; each control plane stores and deletes one ArmadaChart first
// (a fresh API server takes about 2 s over its first). Run with
//
//	go test ./bench/armada -run '^$' -bench ChartsToSatisfied -benchtime 1x
//
// $BENCH_SIZE sets N (default 100; `make bench` runs 100 and 1,000).
// ARMADA_BENCH_OPERATOR_ARGS adds operator flags (for example
// "--concurrency=16", which the SDK side then matches);
// ARMADA_BENCH_TIMEOUT bounds a side's run (default 15m);
// ARMADA_BENCH_SKIP_SDK=1 runs the operator alone (no row is recorded);
// ARMADA_BENCH_SKIP_SEQUENTIAL=1 leaves out the one-at-a-time SDK side and
// its row (make bench does at 1,000 charts).
// The log gives a timeline (when releases were recorded, Deployments became
// available and charts satisfied), the API requests made, how long charts
// waited in the operator's work queue and its reconciles took (from its
// metrics endpoint, read before it stops), and the operator's CPU time.
// Nothing asserts a time.
//
// Runs get one kwok Node per 200 charts (at least 3): the local control
// plane's Nodes hold 250 pods each. BenchmarkDeploymentsAvailable creates
// the same Deployments without operator or Helm, to time the control plane
// alone; ARMADA_BENCH_CPUPROFILE=FILE runs the operator inside the
// benchmark process and writes its CPU profile there.
package armada
