package dashboard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// The dashboard side's timings.
const (
	// pollEvery is how often GET /api/hosts is asked until it holds every
	// host.
	pollEvery = 100 * time.Millisecond
	// syncedGets are the GETs timed once the dashboard holds every host.
	syncedGets = 5
	// syncTimeout bounds the wait for every host.
	syncTimeout = 5 * time.Minute
	// peerRuns are the kubectl runs averaged per run of the benchmark.
	peerRuns = 2
)

// extraEnv adds environment variables to the dashboard's (for example
// "GOGC=50 GOMEMLIMIT=48MiB" or "GODEBUG=gctrace=1": its stderr is logged
// when it wrote any), to sweep.
const extraEnv = "DASHBOARD_BENCH_ENV"

// skipPeer, when set, runs ours alone and records no row.
const skipPeer = "DASHBOARD_BENCH_SKIP_PEER"

// apiHost is what the bench reads of an element of GET /api/hosts.
type apiHost struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	State     string `json:"state"`
}

// dashRun is what one run of the dashboard measured.
type dashRun struct {
	// synced is from starting the process to the first answer of GET
	// /api/hosts holding every host; listening is when it printed its URL
	// and first when an answer first held any host.
	synced, listening, first time.Duration
	polls                    int
	// gets are the timed GETs once synced (request to the body's last byte).
	gets []time.Duration
	// bytes is the size of the last answer.
	bytes      int
	peakRSSMiB float64
	cpuSeconds float64
	// rss is the resident set by kind just before the stop.
	rss string
	// requests are what the API server served from the start to the stop.
	requests string
}

// rssSplit reads a running process's resident set by kind (anonymous,
// file-backed: the binary's pages) from /proc/PID/status, for the log.
func rssSplit(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, line := range strings.Split(string(data), "\n") {
		for _, k := range []string{"VmRSS", "RssAnon", "RssFile"} {
			if v, ok := strings.CutPrefix(line, k+":"); ok {
				parts = append(parts, k+" "+strings.Join(strings.Fields(v), " "))
			}
		}
	}
	return strings.Join(parts, ", ")
}

func (r dashRun) meanGet() time.Duration {
	var sum time.Duration
	for _, d := range r.gets {
		sum += d
	}
	return sum / time.Duration(max(1, len(r.gets)))
}

var listening = regexp.MustCompile(`listening on (http://\S+/)`)

// runDashboard starts `airshipctl dashboard` on the site and times it
// until GET /api/hosts holds all n hosts, polling every pollEvery (each
// poll's request and decoding in this process are in the time); then it
// times syncedGets more GETs, checks the last holds exactly the n hosts,
// reads the process's peak RSS (VmHWM) and CPU, and stops it.
func runDashboard(b *testing.B, env *testenv.Env, airshipctl, config string, n int) dashRun {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	cmd := exec.CommandContext(b.Context(), airshipctl,
		"--airshipconf", config, "--kubeconfig", env.Kubeconfig,
		"dashboard", "--listen", "127.0.0.1:0",
		"--audit-log", filepath.Join(dir, "audit.jsonl"), "--run-log", filepath.Join(dir, "runs.jsonl"))
	cmd.Env = append(os.Environ(),
		"AIRSHIP_PHASE_STATE_DIR="+filepath.Join(dir, "phases"),
		"AIRSHIP_RENDER_CACHE_DIR="+filepath.Join(dir, "render-cache"))
	cmd.Env = append(cmd.Env, strings.Fields(os.Getenv(extraEnv))...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	logPath := filepath.Join(dir, "stderr")
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close() //nolint:errcheck
	cmd.Stderr = logFile
	reqBefore, err := harness.APIRequests(ctx, env.Config)
	if err != nil {
		b.Fatal(err)
	}

	var run dashRun
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	}()
	fail := func(format string, args ...any) {
		b.Helper()
		log, _ := os.ReadFile(logPath)
		b.Fatalf("%s\nairshipctl dashboard's stderr:\n%s", fmt.Sprintf(format, args...), tail(string(log), 4000))
	}
	urls := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		m := listening.FindStringSubmatch(line)
		if m != nil {
			urls <- m[1]
		}
		close(urls)
		_, _ = io.Copy(io.Discard, r)
	}()
	var url string
	select {
	case u, ok := <-urls:
		if !ok {
			fail("airshipctl dashboard printed no URL on its first line")
		}
		url = u
	case <-time.After(time.Minute):
		fail("airshipctl dashboard printed no URL within a minute")
	}
	run.listening = time.Since(start)

	hc := &http.Client{Timeout: time.Minute}
	get := func() ([]byte, error) {
		req, err := http.NewRequestWithContext(b.Context(), http.MethodGet, url+"api/hosts", nil)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close() //nolint:errcheck
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET /api/hosts: %s: %s", resp.Status, tail(string(body), 500))
		}
		return body, err
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	deadline := time.After(syncTimeout)
	var hosts []apiHost
	for {
		body, err := get()
		if err != nil {
			fail("%v", err)
		}
		run.polls++
		hosts = hosts[:0]
		if err := json.Unmarshal(body, &hosts); err != nil {
			fail("GET /api/hosts: %v", err)
		}
		if len(hosts) > 0 && run.first == 0 {
			run.first = time.Since(start)
		}
		if len(hosts) >= n {
			run.synced = time.Since(start)
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			fail("GET /api/hosts held %d of %d hosts after %s", len(hosts), n, syncTimeout)
		case <-exited:
			fail("airshipctl dashboard exited: %v", cmd.ProcessState)
		}
	}

	var last []byte
	for range syncedGets {
		t := time.Now()
		body, err := get()
		if err != nil {
			fail("%v", err)
		}
		run.gets = append(run.gets, time.Since(t))
		last = body
	}
	run.bytes = len(last)
	if err := json.Unmarshal(last, &hosts); err != nil {
		fail("GET /api/hosts: %v", err)
	}
	if err := sameHosts(hosts, n); err != nil {
		fail("GET /api/hosts: %v", err)
	}

	if run.peakRSSMiB, err = harness.VmHWMMiB(cmd.Process.Pid); err != nil {
		b.Fatal(err)
	}
	if run.cpuSeconds, err = harness.CPUSeconds(cmd.Process.Pid); err != nil {
		b.Fatal(err)
	}
	run.rss = rssSplit(cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		b.Logf("airshipctl dashboard did not stop within 20 s of SIGTERM: killed")
	}
	// The API server counts a watch when it ends, which it notices a
	// moment after the process is gone.
	for wait := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		reqAfter, err := harness.APIRequests(ctx, env.Config)
		if err != nil {
			break
		}
		d := reqAfter.Since(reqBefore)
		run.requests = d.Top(10)
		if d["WATCH baremetalhosts 200"] > 0 || time.Since(wait) > 5*time.Second {
			break
		}
	}
	if log, _ := os.ReadFile(logPath); len(log) > 0 {
		b.Logf("airshipctl dashboard's stderr:\n%s", tail(string(log), 8000))
	}
	return run
}

// sameHosts checks the dashboard's hosts are exactly the n created: each
// name once, in cluster c1 and the hosts' namespace, each in its state.
func sameHosts(hosts []apiHost, n int) error {
	if len(hosts) != n {
		return fmt.Errorf("%d hosts, want %d", len(hosts), n)
	}
	seen := make(map[string]bool, n)
	for _, h := range hosts {
		if h.Cluster != "c1" || h.Namespace != namespace {
			return fmt.Errorf("host %s/%s in cluster %q, want %s in c1", h.Namespace, h.Name, h.Cluster, namespace)
		}
		seen[h.Name] = true
	}
	var errs []error
	for i := range n {
		if !seen[hostName(i)] {
			errs = append(errs, fmt.Errorf("host %s missing", hostName(i)))
		}
	}
	if len(seen) != n {
		errs = append(errs, fmt.Errorf("%d distinct names among %d hosts", len(seen), n))
	}
	for _, h := range hosts {
		var i int
		if _, err := fmt.Sscanf(h.Name, "bmh-%d", &i); err != nil || i >= n {
			continue
		}
		want := "available"
		if provisioned(i) {
			want = "provisioned"
		}
		if h.State != want {
			errs = append(errs, fmt.Errorf("host %s in state %q, want %q", h.Name, h.State, want))
			break
		}
	}
	return errors.Join(errs...)
}

// peerRun is what one kubectl run measured.
type peerRun struct {
	proc       harness.Proc
	bytes      int
	compactLen int
}

// runKubectl runs `kubectl get baremetalhosts -A -o json` into a file, a
// fresh process with cacheDir as its (warm) discovery cache, and checks it
// listed exactly the n hosts.
func runKubectl(b *testing.B, env *testenv.Env, kubectl, cacheDir string, n int) peerRun {
	b.Helper()
	out := filepath.Join(b.TempDir(), "hosts.json")
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.CommandContext(b.Context(), kubectl, "--kubeconfig", env.Kubeconfig, "--cache-dir", cacheDir, "get", "baremetalhosts", "-A", "-o", "json")
	cmd.Stdout = f
	p, err := harness.Run(cmd)
	_ = f.Close()
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	var list struct {
		Items []struct {
			Metadata struct{ Namespace, Name string }
			Status   struct{ Provisioning struct{ State string } }
		}
	}
	if err := json.Unmarshal(data, &list); err != nil {
		b.Fatalf("kubectl get: %v", err)
	}
	hosts := make([]apiHost, len(list.Items))
	for i, it := range list.Items {
		hosts[i] = apiHost{Cluster: "c1", Namespace: it.Metadata.Namespace, Name: it.Metadata.Name, State: it.Status.Provisioning.State}
	}
	if err := sameHosts(hosts, n); err != nil {
		b.Fatalf("kubectl get: %v", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		b.Fatal(err)
	}
	return peerRun{proc: p, bytes: len(data), compactLen: compact.Len()}
}

// BenchmarkHostsView times `airshipctl dashboard` (the built binary, a
// fresh process) from its start until GET /api/hosts answers with all
// $BENCH_SIZE BareMetalHosts (default 10,000), against `kubectl get
// baremetalhosts -A -o json` (a fresh process, discovery cache warm), on
// one API server holding the hosts with their status.
func BenchmarkHostsView(b *testing.B) {
	n := harness.Size(b, defaultSize)
	airshipctl := harness.Binary(b, "airshipctl")
	kubectl := harness.Kubectl(b)
	config := writeSite(b, b.TempDir())

	env := startAPI(b)
	defer func() {
		if err := env.Stop(); err != nil {
			b.Error(err)
		}
	}()
	ctx := context.Background()
	setup := time.Now()
	if err := createHosts(ctx, b, fastClient(b, env), n); err != nil {
		b.Fatal(err)
	}
	created := time.Since(setup)
	b.Logf("%s BareMetalHosts created with their status in %s (%d at once, untimed)", harness.Count(n), harness.Seconds(created.Seconds()), createWorkers)

	// kubectl's discovery cache, warmed before either clock.
	cacheDir := b.TempDir()
	warm := exec.CommandContext(b.Context(), kubectl, "--kubeconfig", env.Kubeconfig, "--cache-dir", cacheDir, "get", "baremetalhosts", "-A", "--request-timeout", "30s", "-o", "name")
	warm.Stdout = io.Discard
	if _, err := harness.Run(warm); err != nil {
		b.Fatal(err)
	}

	var ours, peer, gets harness.Tally
	var last dashRun
	var lastPeer peerRun
	for run := 0; b.Loop(); run++ {
		oursSide := func() {
			r := runDashboard(b, env, airshipctl, config, n)
			ours.Add(r.synced, r.peakRSSMiB)
			gets.Add(r.meanGet(), r.peakRSSMiB)
			last = r
			b.Logf("dashboard: all %s hosts in GET /api/hosts %s after the start (URL printed at %s, first hosts at %s, %d polls); %d GETs once synced: %s (mean %s), %.1f MiB each; peak RSS %.0f MiB (at the stop: %s), CPU %.2f s; API requests: %s",
				harness.Count(n), fmtDuration(r.synced), fmtDuration(r.listening), fmtDuration(r.first), r.polls,
				len(r.gets), fmtDurations(r.gets), fmtDuration(r.meanGet()), mib(r.bytes), r.peakRSSMiB, r.rss, r.cpuSeconds, r.requests)
		}
		peerSide := func() {
			if os.Getenv(skipPeer) != "" {
				return
			}
			for range peerRuns {
				r := runKubectl(b, env, kubectl, cacheDir, n)
				peer.AddProc(r.proc)
				lastPeer = r
				b.Logf("kubectl get baremetalhosts -A -o json: %s, %.1f MiB of JSON (%.1f MiB compact), peak RSS %.0f MiB, CPU %.2f s",
					fmtDuration(r.proc.Wall), mib(r.bytes), mib(r.compactLen), r.proc.PeakRSSMiB, r.proc.CPUSeconds())
			}
		}
		sides := []func(){oursSide, peerSide}
		if run%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			side()
		}
	}

	b.ReportMetric(gets.Seconds(), "synced-get-s")
	if os.Getenv(skipPeer) != "" {
		b.ReportMetric(ours.Seconds(), "ours-s")
		b.ReportMetric(ours.PeakRSSMiB, "ours-peak-RSS-MiB")
		return
	}
	b.ReportMetric(peer.PeakRSSMiB, "peer-peak-RSS-MiB")
	notes := []string{
		fmt.Sprintf("%s BareMetalHosts in one namespace, %d to a rack, each with a spec (online, BMC address and credentialsName, bootMACAddress, UEFI, root device hints; image, userData and consumerRef on the three in four provisioned) and a status set through the status subresource (provisioned or available, poweredOn, operationalStatus OK, hardware details with 4 NICs and 3 disks): %.1f KiB of compact JSON each as the API server serves them; created before either clock, %d at once (a create and a status update each), in %s",
			harness.Count(n), hostsPerRack, float64(lastPeer.compactLen)/float64(n)/1024, createWorkers, harness.Seconds(created.Seconds())),
		fmt.Sprintf("ours is timed from starting the process (it loads the airship config and renders the one-phase site, then watches c1 with one informer per kind it shows) to the first GET /api/hosts answer holding all %s, polled every %s by the bench: each poll's request and its decoding in the bench are in the time; it printed its URL at %s and first answered with hosts at %s (%d polls)",
			harness.Count(n), pollEvery, fmtDuration(last.listening), fmtDuration(last.first), last.polls),
		fmt.Sprintf("once synced, GET /api/hosts took %s (mean of %d, request to the last byte) against kubectl's %s, %.0f× less",
			harness.Seconds(gets.Seconds()), len(last.gets), harness.Seconds(peer.Seconds()), peer.Seconds()/gets.Seconds()),
		fmt.Sprintf("the dashboard's peak RSS is VmHWM, read after those GETs (%s at that moment: the file-backed part is the binary's pages); its CPU %.2f s; kubectl's peak RSS %.0f MiB (the largest of its runs), CPU %.2f s",
			last.rss, last.cpuSeconds, peer.PeakRSSMiB, lastPeer.proc.CPUSeconds()),
		fmt.Sprintf("GET /api/hosts answers %.1f MiB of JSON (the fields the hosts page shows, joined with Machines and Nodes); kubectl prints %.1f MiB (%.1f MiB compact): every field of every host; both checked to hold exactly the %s hosts",
			mib(last.bytes), mib(lastPeer.bytes), mib(lastPeer.compactLen), harness.Count(n)),
		"kubectl's discovery cache was warmed before the clock (kubectl get baremetalhosts -A -o name with the same --cache-dir); it lists in pages of 500; mean of " + fmt.Sprint(peerRuns) + " runs per run; API requests of the dashboard, start to stop: " + last.requests,
	}
	harness.Record(b, harness.Row{
		Workload: "dashboard hosts", Size: harness.Count(n) + " BareMetalHosts",
		Ours:        fmt.Sprintf("airshipctl dashboard (the built binary, a fresh process): start, watch, GET /api/hosts with all %s", harness.Count(n)),
		Peer:        "kubectl get baremetalhosts -A -o json (a fresh process, discovery cache warm)",
		OursSeconds: ours.Seconds(), PeerSeconds: peer.Seconds(), OursPeakRSSMiB: ours.PeakRSSMiB,
		Parallelism: fmt.Sprintf("1 process each; ours polled every %s", pollEvery),
		Cluster:     fmt.Sprintf("API server only, %s BareMetalHosts with status; one server for both sides", harness.Count(n)),
		Runs:        ours.Runs, Notes: notes,
	})
}

func mib(n int) float64 { return float64(n) / (1 << 20) }

func fmtDuration(d time.Duration) string { return harness.Seconds(d.Seconds()) }

func fmtDurations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmtDuration(d)
	}
	return strings.Join(s, ", ")
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
