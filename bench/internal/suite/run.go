package suite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/airshipit/airship-go/bench/internal/harness"
)

// Commands are the project's binaries built once for every benchmark
// (handed down as $BENCH_BIN_DIR).
var Commands = []string{"airshipctl", "promenade", "armada-operator", "metal3-operator", "sip-operator", "redfish-emulator"}

// Options configure one run of the suite.
type Options struct {
	// Root is the repository root.
	Root string
	// Short selects each workload's Short run.
	Short bool
	// Match, when set, keeps the workloads whose name it matches.
	Match *regexp.Regexp
	// Workloads default to the registry.
	Workloads []Workload
	// Commands are built into $BENCH_BIN_DIR; nil means the default
	// Commands.
	Commands []string
	// WorkDir receives binaries, results.jsonl and one log per workload; a
	// new temporary directory when empty. It is kept.
	WorkDir string
	// Stdout receives the closing table; Stderr the progress and the
	// benchmarks' own output.
	Stdout, Stderr io.Writer
}

// selected is a workload with the run the mode gives it.
type selected struct {
	Workload
	p Params
}

// Run builds what the benchmarks need, runs each selected workload, and
// prints the table. A workload that fails, or ends without recording a
// row, makes Run return an error after the table of the others.
func Run(ctx context.Context, o Options) error {
	started := time.Now()
	load := loadAverage()
	runs := selectRuns(o)
	if len(runs) == 0 {
		return errors.New("no workload selected")
	}
	bin, results, err := prepareWorkDir(&o)
	if err != nil {
		return err
	}
	testBins, err := build(ctx, o, runs, bin)
	if err != nil {
		return err
	}
	failures, err := runAll(ctx, o, runs, testBins, bin, results)
	if err != nil {
		return err
	}
	if err := printTable(o, results, started, load); err != nil {
		return err
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d workload(s) failed:\n  %s", len(failures), strings.Join(failures, "\n  "))
	}
	return nil
}

// selectRuns returns the workloads the mode and the match select, with
// the run the mode gives each.
func selectRuns(o Options) []selected {
	if o.Workloads == nil {
		o.Workloads = Workloads
	}
	var runs []selected
	for _, w := range o.Workloads {
		p := w.Params(o.Short)
		if p == nil || (o.Match != nil && !o.Match.MatchString(w.Name)) {
			continue
		}
		runs = append(runs, selected{w, *p})
	}
	return runs
}

// prepareWorkDir makes the work directory (a temporary one unless o names
// it) and its bin directory, and returns that and the results file,
// emptied so that only this run's rows are read back.
func prepareWorkDir(o *Options) (bin, results string, err error) {
	if o.WorkDir == "" {
		d, err := os.MkdirTemp("", "airship-bench-")
		if err != nil {
			return "", "", err
		}
		o.WorkDir = d
	}
	bin = filepath.Join(o.WorkDir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", "", err
	}
	results = filepath.Join(o.WorkDir, "results.jsonl")
	if err := os.Remove(results); err != nil && !os.IsNotExist(err) {
		return "", "", err
	}
	fmt.Fprintf(o.Stderr, "== bench: work directory %s\n", o.WorkDir)
	return bin, results, nil
}

// build builds the commands into bin, once for every workload, and each
// selected package's test binary; it returns the test binaries by package.
func build(ctx context.Context, o Options, runs []selected, bin string) (map[string]string, error) {
	if o.Commands == nil {
		o.Commands = Commands
	}
	if len(o.Commands) > 0 {
		fmt.Fprintf(o.Stderr, "== building %s\n", strings.Join(o.Commands, ", "))
		// As make build builds them: stripped and trimmed, as users run them.
		args := []string{"build", "-trimpath", "-ldflags=-s -w", "-o", bin + string(filepath.Separator)}
		for _, c := range o.Commands {
			args = append(args, "./cmd/"+c)
		}
		if err := goCmd(ctx, o, args...); err != nil {
			return nil, err
		}
	}
	testBins := map[string]string{}
	for _, r := range runs {
		if _, ok := testBins[r.Package]; ok {
			continue
		}
		out := filepath.Join(bin, strings.ReplaceAll(r.Package, "/", "_")+".test")
		fmt.Fprintf(o.Stderr, "== building the benchmarks of ./%s\n", r.Package)
		if err := goCmd(ctx, o, "test", "-c", "-o", out, "./"+r.Package); err != nil {
			return nil, err
		}
		testBins[r.Package] = out
	}
	return testBins, nil
}

// runAll runs every workload, one after the other, and returns those that
// failed or recorded no row; the error is one reading the results file.
func runAll(ctx context.Context, o Options, runs []selected, testBins map[string]string, bin, results string) ([]string, error) {
	var failures []string
	for _, r := range runs {
		before, err := harness.ReadRows(results)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		size := "its fixed size"
		if r.p.Size > 0 {
			size = "size " + harness.Count(r.p.Size)
		}
		fmt.Fprintf(o.Stderr, "== %s: %s in ./%s, %s, %d run(s)\n", r.Name, r.Benchmark, r.Package, size, r.p.Runs)
		err = runWorkload(ctx, o, r, testBins[r.Package], bin, results)
		after, rerr := harness.ReadRows(results)
		if rerr != nil {
			return nil, rerr
		}
		switch {
		case err != nil:
			failures = append(failures, fmt.Sprintf("%s: %v (log: %s)", r.Name, err, logPath(o, r)))
		case len(after) == len(before):
			failures = append(failures, fmt.Sprintf("%s: finished without recording a row (log: %s)", r.Name, logPath(o, r)))
		}
		fmt.Fprintf(o.Stderr, "== %s done in %s\n", r.Name, time.Since(t0).Round(time.Second))
	}
	return failures, nil
}

// printTable prints the recorded rows to Stdout under a heading that says
// the mode, the machine and its load.
func printTable(o Options, results string, started time.Time, load string) error {
	rows, err := harness.ReadRows(results)
	if err != nil {
		return err
	}
	mode := "full"
	if o.Short {
		mode = "SHORT=1"
	}
	fmt.Fprintf(o.Stdout, "\n## make bench (%s), %s\n\n", mode, started.UTC().Format("2006-01-02 15:04 MST"))
	for _, l := range machine(o.Root) {
		fmt.Fprintf(o.Stdout, "- %s\n", l)
	}
	fmt.Fprintf(o.Stdout, "- load average (1 min): %s at the start, %s at the end; the run took %s\n\n",
		load, loadAverage(), time.Since(started).Round(time.Second))
	if err := harness.Markdown(o.Stdout, rows); err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "\n%s is the peer's time divided by ours. Times are wall-clock seconds per run.\n", harness.RatioHeader)
	return nil
}

func logPath(o Options, r selected) string {
	return filepath.Join(o.WorkDir, r.Name+".log")
}

// runWorkload runs one benchmark in its package's directory, its output
// to Stderr and to the workload's log.
func runWorkload(ctx context.Context, o Options, r selected, testBin, bin, results string) error {
	log, err := os.Create(logPath(o, r))
	if err != nil {
		return err
	}
	defer log.Close() //nolint:errcheck
	ctx, cancel := context.WithTimeout(ctx, r.p.Timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testBin,
		"-test.run", "^$", "-test.bench", "^"+regexp.QuoteMeta(r.Benchmark)+"$",
		"-test.benchtime", fmt.Sprintf("%dx", r.p.Runs), "-test.timeout", r.p.Timeout.String())
	cmd.Dir = filepath.Join(o.Root, r.Package)
	env := []string{harness.ResultsEnv + "=" + results, harness.BinDirEnv + "=" + bin, "AIRSHIP_REQUIRE_TESTBIN=1"}
	if r.p.Size > 0 {
		env = append(env, fmt.Sprintf("%s=%d", harness.SizeEnv, r.p.Size))
	}
	env = append(env, r.p.Env...)
	cmd.Env = append(environWithout(harness.ResultsEnv, harness.BinDirEnv, harness.SizeEnv), env...)
	cmd.Stdout = io.MultiWriter(o.Stderr, log)
	cmd.Stderr = cmd.Stdout
	return cmd.Run()
}

func environWithout(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			if k == n {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

func goCmd(ctx context.Context, o Options, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = o.Root
	cmd.Stdout, cmd.Stderr = o.Stderr, o.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

// machine describes where the run happened: CPUs, memory, kernel, Go, and
// the peers' versions.
func machine(root string) []string {
	model := firstField("/proc/cpuinfo", "model name")
	mem := firstField("/proc/meminfo", "MemTotal")
	var kib float64
	fmt.Sscanf(mem, "%f", &kib) //nolint:errcheck // an unreadable size prints as 0
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	lines := []string{
		fmt.Sprintf("machine: %d CPUs (%s), %.1f GiB memory, Linux %s, %s/%s",
			runtime.NumCPU(), model, kib/(1<<20), strings.TrimSpace(string(kernel)), runtime.GOOS, runtime.GOARCH),
	}
	var peers []string
	if out, err := versionOutput("go", "version"); err == nil {
		peers = append(peers, strings.TrimSpace(strings.TrimPrefix(string(out), "go version ")))
	}
	if k, err := exec.LookPath("kubectl"); err == nil {
		if out, err := versionOutput(k, "version", "--client"); err == nil {
			peers = append(peers, "kubectl "+strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "Client Version: "))
		}
	}
	if out, err := versionOutput("openssl", "version"); err == nil {
		peers = append(peers, strings.Join(strings.Fields(string(out))[:2], " "))
	}
	if v := goModVersion(root, "helm.sh/helm/v4"); v != "" {
		peers = append(peers, "Helm SDK "+v)
	}
	lines = append(lines, "tools: "+strings.Join(peers, ", "))
	return lines
}

// versionOutput runs a tool's version query. It takes no context on
// purpose: the query returns at once, and the table is printed after an
// interrupt too.
func versionOutput(name string, args ...string) ([]byte, error) {
	return exec.Command(name, args...).Output() //nolint:noctx // see above
}

// firstField returns the value of the first "key: value" line of a /proc file.
func firstField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close() //nolint:errcheck
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func goModVersion(root, module string) string {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == module {
			return f[1]
		}
	}
	return ""
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(data))[0]
}
