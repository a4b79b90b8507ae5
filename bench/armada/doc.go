// Package armada benchmarks the Armada operator: N ArmadaCharts of a small
// chart (a ConfigMap and a Deployment) from created to all satisfied, with
// the operator running as its own process so its peak RSS can be read, and
// in the same run N sequential installs through the Helm SDK in one process,
// the in-run baseline. Run with
//
//	go test ./bench/armada -run '^$' -bench . -benchtime 1x
//
// ARMADA_BENCH_CHARTS sets N (default 100) and ARMADA_BENCH_OPERATOR_ARGS
// adds operator flags (for example "--concurrency=16"); ARMADA_BENCH_TIMEOUT
// bounds a run (default 15m) and ARMADA_BENCH_SKIP_SDK=1 skips the baseline.
// The log gives a timeline (when releases were recorded, Deployments became
// available and charts satisfied) and the operator's CPU time. Nothing
// asserts a time.
//
// Runs get one kwok Node per 200 charts (at least 3): the local control
// plane's Nodes hold 250 pods each. BenchmarkDeploymentsAvailable creates
// the same Deployments without operator or Helm, to time the control plane
// alone; ARMADA_BENCH_CPUPROFILE=FILE runs the operator inside the
// benchmark process and writes its CPU profile there.
package armada
