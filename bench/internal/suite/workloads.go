package suite

import "time"

// Workload is a Go benchmark and the sizes `make bench` runs it at. Each
// run of it records one or more rows (harness.Record).
type Workload struct {
	// Name identifies the workload in progress lines and for -run.
	Name string
	// Package holds the benchmark, relative to the repository root.
	Package string
	// Benchmark is the benchmark function's name.
	Benchmark string
	// Short is the run of `make bench SHORT=1`; nil leaves the workload out
	// of it. Full is the run of `make bench`.
	Short, Full *Params
}

// Params are one run of a workload.
type Params struct {
	// Size is handed to the benchmark as $BENCH_SIZE; 0 for a workload of
	// fixed size.
	Size int
	// Runs are averaged (-test.benchtime Nx).
	Runs int
	// Timeout bounds the benchmark's process.
	Timeout time.Duration
}

// Workloads is the registry: the table's rows come from these, in order.
var Workloads = []Workload{
	{
		Name: "render", Package: "bench", Benchmark: "BenchmarkRender",
		Short: &Params{Size: 1000, Runs: 1, Timeout: 5 * time.Minute},
		Full:  &Params{Size: 5000, Runs: 2, Timeout: 20 * time.Minute},
	},
	{
		Name: "apply", Package: "bench", Benchmark: "BenchmarkApply",
		Short: &Params{Size: 200, Runs: 1, Timeout: 10 * time.Minute},
		Full:  &Params{Size: 1000, Runs: 1, Timeout: 30 * time.Minute},
	},
	{
		// airshipctl dashboard watching N BareMetalHosts against kubectl
		// get -o json: about 25 s at 1,000, 1.5 to 2 minutes at 10,000
		// (45 s of it creating the hosts).
		Name: "dashboard", Package: "bench/dashboard", Benchmark: "BenchmarkHostsView",
		Short: &Params{Size: 1000, Runs: 1, Timeout: 10 * time.Minute},
		Full:  &Params{Size: 10000, Runs: 1, Timeout: 20 * time.Minute},
	},
	{
		Name: "armada-100", Package: "bench/armada", Benchmark: "BenchmarkChartsToSatisfied",
		Short: &Params{Size: 100, Runs: 1, Timeout: 15 * time.Minute},
		Full:  &Params{Size: 100, Runs: 1, Timeout: 15 * time.Minute},
	},
	{
		Name: "armada-1000", Package: "bench/armada", Benchmark: "BenchmarkChartsToSatisfied",
		Full: &Params{Size: 1000, Runs: 1, Timeout: 60 * time.Minute},
	},
	{
		// The untuned peer is bound by its 5 requests/s: about 24 minutes
		// at 1,000 hosts, 2.5 at 100.
		Name: "metal3", Package: "bench/metal3", Benchmark: "BenchmarkHosts",
		Short: &Params{Size: 100, Runs: 1, Timeout: 15 * time.Minute},
		Full:  &Params{Size: 1000, Runs: 1, Timeout: 60 * time.Minute},
	},
	{
		// Emulated hosts through a real local Ironic (bench/metal3,
		// ironic_test.go): a few minutes at 100 hosts.
		Name: "ironic-100", Package: "bench/metal3", Benchmark: "BenchmarkIronicHosts",
		Short: &Params{Size: 100, Runs: 1, Timeout: 15 * time.Minute},
		Full:  &Params{Size: 100, Runs: 1, Timeout: 15 * time.Minute},
	},
	{
		Name: "ironic-1000", Package: "bench/metal3", Benchmark: "BenchmarkIronicHosts",
		Full: &Params{Size: 1000, Runs: 1, Timeout: 45 * time.Minute},
	},
	{
		// Machines on emulated hosts under the real Cluster API managers,
		// each side with its own two control planes: about 2.5 minutes at
		// 100 machines, 5.5 at 300. 1,000 takes 15 to 20 minutes, most of
		// it the peer (4.5 minutes of it registering the hosts at 20
		// requests/s before its clock): run by hand (docs/benchmarks.md).
		Name: "capm3-100", Package: "bench/capm3", Benchmark: "BenchmarkMachines",
		Short: &Params{Size: 100, Runs: 1, Timeout: 15 * time.Minute},
		Full:  &Params{Size: 100, Runs: 1, Timeout: 15 * time.Minute},
	},
	{
		Name: "capm3-300", Package: "bench/capm3", Benchmark: "BenchmarkMachines",
		Full: &Params{Size: 300, Runs: 1, Timeout: 30 * time.Minute},
	},
	{
		// About 1 minute a run at 10,000 hosts, most of it kubectl's side
		// (held by its 5 requests/s) and creating the hosts.
		Name: "sip-1000", Package: "bench/sip", Benchmark: "BenchmarkReconcile",
		Short: &Params{Size: 1000, Runs: 1, Timeout: 10 * time.Minute},
		Full:  &Params{Size: 1000, Runs: 2, Timeout: 10 * time.Minute},
	},
	{
		Name: "sip-10000", Package: "bench/sip", Benchmark: "BenchmarkReconcile",
		Full: &Params{Size: 10000, Runs: 2, Timeout: 20 * time.Minute},
	},
	{
		Name: "promenade", Package: "bench/promenade", Benchmark: "BenchmarkCatalog",
		Short: &Params{Runs: 1, Timeout: 5 * time.Minute},
		Full:  &Params{Runs: 3, Timeout: 15 * time.Minute},
	},
}

// Params returns the workload's run in the mode, or nil when the mode
// leaves it out.
func (w Workload) Params(short bool) *Params {
	if short {
		return w.Short
	}
	return w.Full
}
