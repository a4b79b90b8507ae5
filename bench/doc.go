// Package bench holds the benchmarks `make bench` runs and that need no
// package of their own: render (the airshipctl binary against `kubectl
// kustomize`) and apply + wait (internal/apply against `kubectl apply
// --server-side` + `kubectl wait`). bench/armada and bench/promenade hold
// the others; bench/internal/suite lists every workload and its sizes, and
// bench/internal/harness is what they share (the recorded rows, the table,
// peak RSS).
//
// Every comparison does the same work on both sides, at a stated
// parallelism, on a cluster in a stated state; docs/benchmarks.md says how
// each one is made fair and holds the latest table. Run them all with
// `make bench` (SHORT=1 for the short sizes), or one by hand:
//
//	go test ./bench -run '^$' -bench '^BenchmarkRender$' -benchtime 1x
//
// $BENCH_SIZE sets the size (default: the full one). Nothing here asserts
// a time.
package bench
