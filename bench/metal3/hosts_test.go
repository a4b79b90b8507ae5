package metal3

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/metal3/metal3operator"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/direct"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// The operator's flags. Both sides run with fixedArgs; ours adds tunedArgs
// (then METAL3_BENCH_OPERATOR_ARGS), the peer untunedArgs.
var (
	fixedArgs = []string{"--controllers=baremetalhost", "--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0", "--zap-log-level=error"}
	// tunedArgs are the best of a sweep at 1,000 hosts (docs/benchmarks.md).
	tunedArgs = []string{"--concurrency=16", "--kube-api-qps=500", "--kube-api-burst=1000"}
	// untunedArgs are controller-runtime's and client-go's defaults: one
	// reconcile at a time, 5 requests/s with bursts of 10.
	untunedArgs = []string{"--concurrency=1", "--kube-api-qps=5", "--kube-api-burst=10"}
)

// ns holds the hosts and their Secrets.
const ns = "metal3"

// workers is how many hosts the bench creates or patches at once: its own
// writes must not be what is measured.
const workers = 16

// image is what every host is provisioned with: a live ISO, which the
// operator without Ironic boots from virtual media (it refuses a disk
// image, which needs Ironic's deploy agent: the ironic rows measure that).
// The emulator records it; nothing downloads it.
var image = metal3v1alpha1.Image{
	URL:          "http://images.bench.invalid/host.iso",
	Checksum:     strings.Repeat("ab", 32),
	ChecksumType: metal3v1alpha1.SHA256,
	DiskFormat:   ptr.To(direct.LiveISO),
}

// timeout bounds each phase of one side's run: METAL3_BENCH_TIMEOUT (a
// duration), default 30m.
func timeout() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("METAL3_BENCH_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return 30 * time.Minute
}

// operatorArgs are a side's flags and the options they give: fixedArgs
// then tuning. Ours is tunedArgs then METAL3_BENCH_OPERATOR_ARGS (for
// example "--concurrency=64 --kube-api-qps=100"; a later flag wins).
func operatorArgs(b *testing.B, tuning []string) ([]string, metal3operator.Options) {
	b.Helper()
	o := metal3operator.DefaultOptions()
	fs := flag.NewFlagSet("metal3-operator", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(tuning); err != nil {
		b.Fatalf("operator flags %q: %v", tuning, err)
	}
	return append(append([]string(nil), fixedArgs...), tuning...), o
}

// rate describes an operator's parallelism and client rate.
func rate(o metal3operator.Options) string {
	hosts := fmt.Sprintf("%d hosts at once", o.Concurrency)
	if o.Concurrency == 1 {
		hosts = "1 host at a time"
	}
	return fmt.Sprintf("%s, %g requests/s (burst %s)", hosts, o.QPS, harness.Count(o.Burst))
}

// sideRun is what one side's run measured.
type sideRun struct {
	available, provisioned time.Duration
	peakRSSMiB, cpuSeconds float64
}

// runSide runs the operator as its own process against a fresh API server
// and a fresh emulator of n hosts: it creates the hosts (their Secrets
// first, untimed) and times them until all are available, then sets an
// image, userData and online on all and times them until all are
// provisioned, both counted from a watch opened before the hosts are
// created. The operator's peak RSS is VmHWM, read just before it is
// stopped.
func runSide(b *testing.B, name, bin string, args []string, n int) sideRun {
	b.Helper()
	ctx := context.Background()
	env, err := testenv.NewAPI(testenv.Options{
		CRDDirs:     []string{"config/metal3/crd/bases"},
		AddToScheme: []func(*runtime.Scheme) error{metal3v1alpha1.AddToScheme},
	})
	if err != nil {
		if testenv.MainSkip(err) {
			b.Skip(err)
		}
		b.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			b.Error(err)
		}
	}()
	bm := startBMCs(b, n, ns)
	defer bm.stop()

	// client-go's default 5 requests/s would make creating 1,000 hosts
	// take minutes.
	fast := rest.CopyConfig(env.Config)
	fast.QPS, fast.Burst = 1000, 2000
	c, err := client.New(fast, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	if err := forEach(len(bm.secrets), func(i int) error { return c.Create(ctx, bm.secrets[i]) }); err != nil {
		b.Fatalf("creating the Secrets: %v", err)
	}
	// A dry run first, so the client's discovery of the kind and the API
	// server's first request for it are not on the clock.
	if err := c.Create(ctx, bm.hosts[0].DeepCopy(), client.DryRunAll); err != nil {
		b.Fatalf("creating a BareMetalHost (dry run): %v", err)
	}

	logPath := filepath.Join(b.TempDir(), "operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close() //nolint:errcheck
	op := exec.CommandContext(b.Context(), bin, append(args, "--kubeconfig", env.Kubeconfig)...)
	op.Stdout, op.Stderr = logFile, logFile
	if err := op.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if op.ProcessState == nil {
			_ = op.Process.Kill()
			_ = op.Wait()
		}
	}()
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	tl, err := watchHosts(wctx, env.Config, env.Scheme, ns)
	if err != nil {
		b.Fatal(err)
	}
	reqBefore, err := harness.APIRequests(ctx, fast)
	if err != nil {
		b.Fatal(err)
	}

	var run sideRun
	start := time.Now()
	if err := forEach(n, func(i int) error { return c.Create(ctx, bm.hosts[i]) }); err != nil {
		b.Fatalf("creating the BareMetalHosts: %v", err)
	}
	created := time.Since(start)
	if err := waitFor(ctx, tl, metal3v1alpha1.StateAvailable, n); err != nil {
		b.Logf("%s timeline: %s", name, tl.summary(start, registeringToAvailable...))
		b.Logf("%s log: %s", name, logSummary(logPath))
		b.Fatalf("%s: hosts not all available: %v", name, err)
	}
	run.available = time.Since(start)
	b.Logf("%s, created -> available: %s (creating the hosts took %s); %s", name, harness.Seconds(run.available.Seconds()), harness.Seconds(created.Seconds()), tl.summary(start, registeringToAvailable...))

	start = time.Now()
	if err := forEach(n, func(i int) error { return provision(ctx, c, bm.hosts[i]) }); err != nil {
		b.Fatalf("setting the image: %v", err)
	}
	patched := time.Since(start)
	if err := waitFor(ctx, tl, metal3v1alpha1.StateProvisioned, n); err != nil {
		b.Logf("%s timeline: %s", name, tl.summary(start, provisioningToProvisioned...))
		b.Logf("%s log: %s", name, logSummary(logPath))
		b.Fatalf("%s: hosts not all provisioned: %v", name, err)
	}
	run.provisioned = time.Since(start)
	b.Logf("%s, available -> provisioned: %s (setting the images took %s); %s", name, harness.Seconds(run.provisioned.Seconds()), harness.Seconds(patched.Seconds()), tl.summary(start, provisioningToProvisioned...))

	if reqAfter, err := harness.APIRequests(ctx, fast); err == nil {
		b.Logf("%s, API server requests during the run (all clients): %s", name, reqAfter.Since(reqBefore).Top(10))
	}
	if run.peakRSSMiB, err = harness.VmHWMMiB(op.Process.Pid); err != nil {
		b.Fatal(err)
	}
	_ = op.Process.Signal(syscall.SIGTERM)
	_ = op.Wait()
	run.cpuSeconds = (op.ProcessState.UserTime() + op.ProcessState.SystemTime()).Seconds()
	b.Logf("%s: peak RSS %.0f MiB, CPU %.1f s; log: %s", name, run.peakRSSMiB, run.cpuSeconds, logSummary(logPath))
	return run
}

var (
	registeringToAvailable = []metal3v1alpha1.ProvisioningState{
		metal3v1alpha1.StateRegistering, metal3v1alpha1.StateInspecting, metal3v1alpha1.StatePreparing, metal3v1alpha1.StateAvailable,
	}
	provisioningToProvisioned = []metal3v1alpha1.ProvisioningState{metal3v1alpha1.StateProvisioning, metal3v1alpha1.StateProvisioned}
)

// waitFor waits until n hosts have been seen in state st.
func waitFor(ctx context.Context, tl *timeline, st metal3v1alpha1.ProvisioningState, n int) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout(), true, func(context.Context) (bool, error) {
		got, err := tl.count(st)
		return got == n, err
	})
}

// provision sets the image, the userData Secret and online on a host, as a
// site's phase would.
func provision(ctx context.Context, c client.Client, h *metal3v1alpha1.BareMetalHost) error {
	patch := client.MergeFrom(h.DeepCopy())
	h.Spec.Online = true
	h.Spec.Image = image.DeepCopy()
	h.Spec.UserData = &corev1.SecretReference{Namespace: h.Namespace, Name: userDataSecretName(h.Name)}
	return c.Patch(ctx, h, patch)
}

// forEach runs f for 0..n-1, workers at once, and returns the first error.
func forEach(n int, f func(i int) error) error {
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// BenchmarkHosts takes $BENCH_SIZE emulated hosts (default 1,000) from
// created to available, then from available to provisioned, with
// metal3-operator as its own process, tuned (tunedArgs, then
// METAL3_BENCH_OPERATOR_ARGS) against the same operator at
// controller-runtime's and client-go's defaults (one reconcile at a time,
// 5 requests/s): each side on its own fresh API server and emulator.
// METAL3_BENCH_SKIP_PEER=1 runs ours alone (no row is recorded), for
// sweeping the flags.
func BenchmarkHosts(b *testing.B) {
	n := harness.Size(b, 1000)
	bin := harness.Binary(b, "metal3-operator")
	ourArgs, ourOpts := operatorArgs(b, append(append([]string(nil), tunedArgs...), strings.Fields(os.Getenv("METAL3_BENCH_OPERATOR_ARGS"))...))
	peerArgs, peerOpts := operatorArgs(b, untunedArgs)
	skipPeer := os.Getenv("METAL3_BENCH_SKIP_PEER") != ""
	var oursAvail, oursProv, peerAvail, peerProv harness.Tally
	var cpu, peerRSS float64
	for b.Loop() {
		ours := runSide(b, "ours", bin, ourArgs, n)
		oursAvail.Add(ours.available, ours.peakRSSMiB)
		oursProv.Add(ours.provisioned, ours.peakRSSMiB)
		cpu += ours.cpuSeconds
		if skipPeer {
			continue
		}
		peer := runSide(b, "peer", bin, peerArgs, n)
		peerAvail.Add(peer.available, peer.peakRSSMiB)
		peerProv.Add(peer.provisioned, peer.peakRSSMiB)
		peerRSS = max(peerRSS, peer.peakRSSMiB)
	}
	b.ReportMetric(cpu/float64(oursAvail.Runs), "operator-cpu-s")
	if skipPeer {
		b.ReportMetric(oursAvail.Seconds(), "available-s")
		b.ReportMetric(oursProv.Seconds(), "provisioned-s")
		b.ReportMetric(oursAvail.PeakRSSMiB, "operator-peak-MiB")
		return
	}
	size := harness.Count(n) + " hosts"
	ourSide := fmt.Sprintf("metal3-operator (its own process; %s)", strings.Join(ourArgs, " "))
	peerSide := fmt.Sprintf("metal3-operator untuned (its own process; the same flags but %s)", strings.Join(untunedArgs, " "))
	parallelism := fmt.Sprintf("ours %s; peer %s", rate(ourOpts), rate(peerOpts))
	cluster := "fresh API server (no other workload) and emulator, one per side"
	notes := []string{
		"no upstream peer can run here (metal3's baremetal-operator needs Ironic), so the peer is the same operator untuned: controller-runtime's one reconcile at a time and client-go's 5 requests/s, which hold it: a host takes 5 writes to become available (the finalizer, 4 status writes) and 2 more to be provisioned",
		fmt.Sprintf("each host's BMC is an emulated Redfish endpoint of its own (redfish-virtualmedia, 127.0.0.1, boot delay %s); the hosts and their BMC and networkData Secrets come from the emulator's manifests; every Secret is created before the clock, the hosts 16 at once just after the operator is started", bootDelay),
		fmt.Sprintf("timed until a watch opened before the first host was created has seen every host available; operator CPU %.1f s per run (both phases); the peer's peak RSS %.0f MiB", cpu/float64(oursAvail.Runs), peerRSS),
	}
	harness.Record(b, harness.Row{
		Workload: "BareMetalHosts to available", Size: size,
		Ours: ourSide, Peer: peerSide,
		OursSeconds: oursAvail.Seconds(), PeerSeconds: peerAvail.Seconds(), OursPeakRSSMiB: oursAvail.PeakRSSMiB,
		Parallelism: parallelism, Cluster: cluster, Runs: oursAvail.Runs, Notes: notes,
	})
	harness.Record(b, harness.Row{
		Workload: "BareMetalHosts to provisioned", Size: size,
		Ours: ourSide, Peer: peerSide,
		OursSeconds: oursProv.Seconds(), PeerSeconds: peerProv.Seconds(), OursPeakRSSMiB: oursProv.PeakRSSMiB,
		Parallelism: parallelism, Cluster: cluster, Runs: oursProv.Runs,
		Notes: []string{"the same runs, continued: online, an image (qcow2 by URL) and a userData Secret set on every host, 16 at once, timed until every host was seen provisioned (its BMC took the virtual media and a one-time boot override, and powered it on; the operator does not wait for the boot)"},
	})
}
