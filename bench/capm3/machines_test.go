package capm3

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/metal3/metal3operator"
	"github.com/airshipit/airship-go/internal/test/capienv"
)

// The operator's flags. Both sides run with fixedArgs; ours adds nothing
// (its defaults) but CAPM3_BENCH_OPERATOR_ARGS, the peer upstreamArgs
// then CAPM3_BENCH_PEER_ARGS.
var (
	// The metrics address (loopback, a free port) is added when the
	// operator starts: the run reads its reconciles and requests there.
	fixedArgs = []string{"--leader-elect=false", "--health-probe-bind-address=0", "--zap-log-level=error"}
	// upstreamArgs are the defaults of upstream cluster-api-provider-metal3's
	// manager (main.go at metal3-io/cluster-api-provider-metal3 2f6d76b,
	// 2026-08-21): --metal3machine-concurrency 10, --kube-api-qps 20,
	// --kube-api-burst 30.
	upstreamArgs = []string{"--machine-concurrency=10", "--kube-api-qps=20", "--kube-api-burst=30"}
)

// operatorArgs are a side's flags and the options they give: fixedArgs
// then tuning (a later flag wins).
func operatorArgs(b *testing.B, tuning []string) ([]string, metal3operator.Options) {
	b.Helper()
	o := metal3operator.DefaultOptions()
	fs := flag.NewFlagSet("metal3-operator", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(tuning); err != nil {
		b.Fatalf("operator flags %q: %v", tuning, err)
	}
	return append(slices.Clone(fixedArgs), tuning...), o
}

// rate describes an operator's parallelism and client rate. The rate is
// per kind: controller-runtime gives each resource's REST client a token
// bucket of its own (rest.Config.RateLimiter is nil), in upstream CAPM3's
// manager as in ours.
func rate(o metal3operator.Options) string {
	return fmt.Sprintf("%d machines and %d hosts at once, %g requests/s per kind (burst %s)", o.MachineConcurrency, o.Concurrency, o.QPS, harness.Count(o.Burst))
}

// sideRun is what one side's run measured.
type sideRun struct {
	// running is from the first create to every Machine seen Running;
	// ready to every Metal3Machine seen ready (the provider's share).
	running, ready time.Duration
	// created is how long creating the objects took.
	created time.Duration
	// prep is the untimed set-up: control planes, clusterctl init, hosts
	// available, the control-plane Machine.
	prep       time.Duration
	peaks      peaks
	cpuSeconds float64
	requests   harness.Requests
	stages     string
	// cpu says where the machine's CPU went during the run.
	cpu string
	// load is the load average before and after the run.
	load string
	// p50 is the median machine's time to Running.
	p50 time.Duration
	// op is what the operator counted during the run.
	op opMetrics
}

// runSide builds a side's environment with n+1 hosts, the operator (bin
// with args) and an initialized Cluster, then creates n worker Machines
// and their Metal3Machines, 16 at once, and times them until watches
// opened before the first create have seen every Machine Running with a
// nodeRef. It then checks the end state and reads every process's peak
// RSS before stopping them.
func runSide(b *testing.B, name, bin string, args []string, n int) sideRun {
	b.Helper()
	s := newSite(b, name, n+1)
	defer s.close()
	s.startOperator(bin, args)
	s.registerHosts()
	s.initCluster()
	s.warmUp()

	var run sideRun
	run.prep = time.Since(s.began)
	wctx, stopWatch := context.WithCancel(s.ctx)
	defer stopWatch()
	tl, err := watchMachines(wctx, s.c, ns)
	if err != nil {
		b.Fatal(err)
	}
	before, err := harness.APIRequests(s.ctx, s.fast)
	if err != nil {
		b.Fatal(err)
	}
	opBefore, err := scrapeOperator(s.ctx, s.metrics)
	if err != nil {
		b.Fatal(err)
	}
	procs := s.processes()
	cpuBefore := cpuTimes(procs)
	loadBefore := loadAverage()

	start := time.Now()
	if err := forEach(n, func(i int) error { return s.createMachine(workerName(i), false) }); err != nil {
		b.Fatalf("%s: creating the machines: %v", name, err)
	}
	run.created = time.Since(start)
	err = s.poll("Machines Running", 100*time.Millisecond, func() (bool, string, error) {
		got, err := tl.count(stageRunning)
		return got == n, fmt.Sprintf("%d of %d Running", got, n), err
	})
	if err != nil {
		b.Logf("%s timeline: %s", name, tl.summary(start))
		b.Logf("%s operator log: %s", name, tail(s.opLog, 20))
		b.Fatal(err)
	}
	run.running = time.Since(start)
	run.cpu = cpuSpent(cpuBefore, cpuTimes(procs), run.running)
	if opAfter, err := scrapeOperator(s.ctx, s.metrics); err == nil {
		run.op = opAfter.since(opBefore)
	} else {
		b.Logf("%s: %v", name, err)
	}
	run.load = loadBefore + " before, " + loadAverage() + " after"
	run.stages = tl.summary(start)
	if v := tl.times(start, stageRunning); len(v) > 0 {
		run.p50 = v[len(v)/2]
	}
	if v := tl.times(start, stageInfraReady); len(v) == n {
		run.ready = v[n-1]
	} else {
		b.Fatalf("%s: %d of %d Metal3Machines seen ready when every Machine was Running", name, len(v), n)
	}
	b.Logf("%s, created -> Running: %s for %s machines (creating them took %s); %s", name, harness.Seconds(run.running.Seconds()),
		harness.Count(n), harness.Seconds(run.created.Seconds()), run.stages)
	b.Logf("%s, CPU during the run: %s; load average %s", name, run.cpu, run.load)
	b.Logf("%s, metal3-operator during the run: %s", name, run.op.describe(n))
	if after, err := harness.APIRequests(s.ctx, s.fast); err == nil {
		run.requests = after.Since(before)
		b.Logf("%s, management API server requests during the run (all clients): %s; %s answered 409", name, run.requests.Top(12), harness.Count(int(run.requests.Conflicts())))
	}

	if err := s.check(n); err != nil {
		b.Fatal(err)
	}
	s.step("checked: every host claimed once, every Machine Running with its host's providerID and Node")
	if run.peaks, err = s.readPeaks(); err != nil {
		b.Fatal(err)
	}
	if err := s.stopOperator(); err != nil {
		b.Error(err)
	}
	run.cpuSeconds = (s.op.ProcessState.UserTime() + s.op.ProcessState.SystemTime()).Seconds()
	b.Logf("%s: peak RSS metal3-operator %.0f MiB (CPU %.1f s), emulator %.0f MiB, Cluster API managers %s", name, run.peaks.operator, run.cpuSeconds, run.peaks.emulator, managerPeaks(run.peaks))
	return run
}

// managerPeaks lists the Cluster API managers' peak RSS.
func managerPeaks(p peaks) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(p.managers)) {
		parts = append(parts, fmt.Sprintf("%s %.0f MiB", name, p.managers[name]))
	}
	return strings.Join(parts, ", ")
}

// perMachine is milliseconds per machine.
func perMachine(d time.Duration, n int) float64 {
	return float64(d.Milliseconds()) / float64(n)
}

// BenchmarkMachines creates $BENCH_SIZE worker Machines (default 1,000)
// with their Metal3Machines on as many emulated hosts, and times them from
// created to Running under the real Cluster API managers: metal3-operator
// with its defaults (then CAPM3_BENCH_OPERATOR_ARGS) against the same
// operator at upstream CAPM3's defaults (then CAPM3_BENCH_PEER_ARGS), each
// side in an environment of its own. CAPM3_BENCH_SKIP_PEER=1 runs ours
// alone (no row is recorded).
func BenchmarkMachines(b *testing.B) {
	n := harness.Size(b, 1000)
	bin := harness.Binary(b, "metal3-operator")
	ourArgs, ourOpts := operatorArgs(b, strings.Fields(os.Getenv("CAPM3_BENCH_OPERATOR_ARGS")))
	peerTuning := append(slices.Clone(upstreamArgs), strings.Fields(os.Getenv("CAPM3_BENCH_PEER_ARGS"))...)
	peerArgs, peerOpts := operatorArgs(b, peerTuning)
	skipPeer := os.Getenv("CAPM3_BENCH_SKIP_PEER") != ""
	var oursRunning, oursReady, peerRunning, peerReady harness.Tally
	var our, their sideRun
	for b.Loop() {
		our = runSide(b, "ours", bin, ourArgs, n)
		oursRunning.Add(our.running, our.peaks.operator)
		oursReady.Add(our.ready, our.peaks.operator)
		if skipPeer {
			continue
		}
		their = runSide(b, "peer", bin, peerArgs, n)
		peerRunning.Add(their.running, their.peaks.operator)
		peerReady.Add(their.ready, their.peaks.operator)
	}
	b.ReportMetric(perMachine(our.running, n), "ours-ms/machine")
	b.ReportMetric(our.cpuSeconds, "operator-cpu-s")
	b.ReportMetric(our.peaks.emulator, "emulator-peak-MiB")
	for name, mib := range our.peaks.managers {
		b.ReportMetric(mib, name+"-peak-MiB")
	}
	if skipPeer {
		b.ReportMetric(oursRunning.Seconds(), "running-s")
		b.ReportMetric(oursReady.Seconds(), "ready-s")
		b.ReportMetric(oursRunning.PeakRSSMiB, "operator-peak-MiB")
		return
	}
	b.ReportMetric(perMachine(their.running, n), "peer-ms/machine")
	b.ReportMetric(peerRunning.PeakRSSMiB, "peer-operator-peak-MiB")

	ourSide := "metal3-operator with every controller at its defaults (its own process; leader election and probes off, log level error)"
	if extra := os.Getenv("CAPM3_BENCH_OPERATOR_ARGS"); extra != "" {
		ourSide = fmt.Sprintf("metal3-operator with every controller, %s (its own process; leader election and probes off, log level error)", extra)
	}
	peerSide := fmt.Sprintf("the same metal3-operator at upstream CAPM3's defaults, %s", strings.Join(peerTuning, " "))
	size := harness.Count(n) + " machines"
	parallelism := fmt.Sprintf("bench 16 writers each; ours %s; peer %s", rate(ourOpts), rate(peerOpts))
	cluster := fmt.Sprintf("fresh management (Cluster API %s) and workload control planes, %s hosts available, 1 control-plane Machine Running; one per side",
		capienv.Version, harness.Count(n+1))
	harness.Record(b, harness.Row{
		Workload: "Metal3 Machines to Running", Size: size, Ours: ourSide, Peer: peerSide,
		OursSeconds: oursRunning.Seconds(), PeerSeconds: peerRunning.Seconds(), OursPeakRSSMiB: oursRunning.PeakRSSMiB,
		Parallelism: parallelism, Cluster: cluster, Runs: oursRunning.Runs,
		Notes: []string{
			fmt.Sprintf("created -> Running (Cluster API's phase, with a nodeRef) per machine: ours %.0f ms, peer %.0f ms; median machine ours %s, peer %s; creating the objects (16 at once) took ours %s, peer %s",
				perMachine(our.running, n), perMachine(their.running, n), harness.Seconds(our.p50.Seconds()), harness.Seconds(their.p50.Seconds()),
				harness.Seconds(our.created.Seconds()), harness.Seconds(their.created.Seconds())),
			fmt.Sprintf("peak RSS: metal3-operator ours %.0f MiB, peer %.0f MiB; Cluster API managers %s (ours' run), %s (peer's); emulator %.0f MiB; operator CPU ours %.1f s, peer %.1f s",
				our.peaks.operator, their.peaks.operator, managerPeaks(our.peaks), managerPeaks(their.peaks), our.peaks.emulator, our.cpuSeconds, their.cpuSeconds),
			"ours: " + our.stages,
			"peer: " + their.stages,
			"ours, metal3-operator: " + our.op.describe(n),
			"peer, metal3-operator: " + their.op.describe(n),
			"ours, CPU: " + our.cpu + "; load average " + our.load,
			"peer, CPU: " + their.cpu + "; load average " + their.load,
			fmt.Sprintf("management API server, all clients, during the run: ours %s, %s answered 409; peer %s, %s answered 409",
				our.requests.Top(4), harness.Count(int(our.requests.Conflicts())), their.requests.Top(4), harness.Count(int(their.requests.Conflicts()))),
			fmt.Sprintf("untimed set-up per side (control planes, clusterctl init, %s hosts available, the control-plane Machine Running): ours %s, peer %s",
				harness.Count(n+1), harness.Seconds(our.prep.Seconds()), harness.Seconds(their.prep.Seconds())),
			"upstream CAPM3 cannot be built here (its API module cannot coexist with Cluster API v1.14, and its hosts need baremetal-operator with Ironic): the peer is this operator at upstream CAPM3's defaults, its host choice being ours",
		},
	})
	harness.Record(b, harness.Row{
		Workload: "Metal3Machines to ready", Size: size, Ours: ourSide, Peer: peerSide,
		OursSeconds: oursReady.Seconds(), PeerSeconds: peerReady.Seconds(), OursPeakRSSMiB: oursReady.PeakRSSMiB,
		Parallelism: parallelism, Cluster: cluster, Runs: oursReady.Runs,
		Notes: []string{
			fmt.Sprintf("the same runs, until every Metal3Machine was seen ready (host claimed and provisioned, the workload Node's and the Metal3Machine's providerID set): the provider's share of the row above; per machine ours %.0f ms, peer %.0f ms",
				perMachine(our.ready, n), perMachine(their.ready, n)),
		},
	})
}
