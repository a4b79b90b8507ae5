// Package armada benchmarks the Armada operator: N ArmadaCharts of a small
// chart (a ConfigMap and a Deployment) from created to all satisfied, with
// the operator running as its own process so its peak RSS can be read, and
// in the same run N sequential installs through the Helm SDK in one process,
// the in-run baseline. Run with
//
//	go test ./bench/armada -run '^$' -bench . -benchtime 1x
//
// ARMADA_BENCH_CHARTS sets N (default 100) and ARMADA_BENCH_OPERATOR_ARGS
// adds operator flags (for example "--concurrency=16"). Nothing asserts a
// time.
package armada
