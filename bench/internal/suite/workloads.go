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
	// Short is the run of `make bench SHORT=1`, Full the run of `make
	// bench`; nil leaves the workload out of that mode.
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
	// Env are NAME=VALUE settings of the benchmark's process, beside
	// $BENCH_SIZE: a workload's own switches (a peer row left out).
	Env []string
}

// Workloads is the registry: the table's rows come from these, in order.
//
// Sizes and runs keep `make bench` under 20 minutes and `make bench
// SHORT=1` under 5 on a 2-core machine (docs/benchmarks.md gives the
// durations measured). What the peer's rate or Ironic's CPU makes slow
// runs at a size that gives stable rows in a minute or two, and the large
// sizes run by hand (each benchmark takes $BENCH_SIZE): metal3 and
// ironic at 1,000 hosts (about 25 and 30 minutes). bench/capm3's
// BenchmarkMachines is not in the registry: its Metal3Machines ask for a
// qcow2 image, which metal3-operator without Ironic refuses, so no
// machine gets to Running; it needs its hosts provisioned through a local
// Ironic, as the ironic rows' are (docs/benchmarks.md).
var Workloads = []Workload{
	{
		// Two trees, each against kubectl kustomize: about 30 s at
		// 1,000 documents, 1.5 to 2 minutes at 5,000 (kubectl's 27 to
		// 57 s a tree).
		Name: "render", Package: "bench", Benchmark: "BenchmarkRender",
		Short: &Params{Size: 1000, Runs: 1, Timeout: 5 * time.Minute},
		Full:  &Params{Size: 5000, Runs: 1, Timeout: 20 * time.Minute},
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
		// The one-at-a-time Helm SDK row is left out at 1,000 charts (it
		// took 202 s of the workload's 7 minutes; the 100-chart workload
		// has it): the goal is against the SDK at the same parallelism.
		Name: "armada-1000", Package: "bench/armada", Benchmark: "BenchmarkChartsToSatisfied",
		Full: &Params{Size: 1000, Runs: 1, Timeout: 60 * time.Minute, Env: []string{"ARMADA_BENCH_SKIP_SEQUENTIAL=1"}},
	},
	{
		// The untuned peer is bound by its 5 requests/s (7 writes a host):
		// about 40 s at 20 hosts, 1.3 minutes at 50, 2.5 at 100, 24 at
		// 1,000.
		Name: "metal3", Package: "bench/metal3", Benchmark: "BenchmarkHosts",
		Short: &Params{Size: 20, Runs: 1, Timeout: 10 * time.Minute},
		Full:  &Params{Size: 50, Runs: 1, Timeout: 15 * time.Minute},
	},
	{
		// Emulated hosts through a real local Ironic (bench/metal3,
		// ironic_test.go): about 3.5 minutes at 100 hosts, Ironic's CPU
		// bound; 30 at 1,000.
		Name: "ironic-100", Package: "bench/metal3", Benchmark: "BenchmarkIronicHosts",
		Full: &Params{Size: 100, Runs: 1, Timeout: 15 * time.Minute},
	},
	{
		// About 1 minute a run at 1,000 hosts and at 10,000, most of it
		// kubectl's side (held by its 5 requests/s) and creating the
		// hosts.
		Name: "sip-1000", Package: "bench/sip", Benchmark: "BenchmarkReconcile",
		Short: &Params{Size: 1000, Runs: 1, Timeout: 10 * time.Minute},
	},
	{
		Name: "sip-10000", Package: "bench/sip", Benchmark: "BenchmarkReconcile",
		Full: &Params{Size: 10000, Runs: 1, Timeout: 20 * time.Minute},
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
