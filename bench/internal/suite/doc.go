// Package suite is `make bench`: the one registry of workloads (Workloads)
// and the runner that builds the project's binaries and each benchmark
// package's test binary once, runs every workload's Go benchmark at the
// mode's size, and ends with one table of every row the benchmarks
// recorded (harness.Markdown), headed by the machine it ran on.
//
// Adding a row to the table is adding a Workload here and, in its
// benchmark, a harness.Record call.
package suite
