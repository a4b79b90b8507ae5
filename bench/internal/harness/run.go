package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airshipit/airship-go/internal/cluster/local"
	"github.com/airshipit/airship-go/internal/test/testenv"
	"github.com/airshipit/airship-go/internal/test/testtool"
)

// Environment `make bench` hands to each benchmark.
const (
	// SizeEnv is the workload size the registry chose (documents, objects,
	// charts); a benchmark run by hand uses its full size.
	SizeEnv = "BENCH_SIZE"
	// BinDirEnv holds airshipctl, promenade and armada-operator built once
	// for the whole run; without it a benchmark builds what it needs.
	BinDirEnv = "BENCH_BIN_DIR"
)

// Size returns $BENCH_SIZE, or def when it is unset. A malformed value
// fails the benchmark rather than silently measuring another size.
func Size(tb testing.TB, def int) int {
	tb.Helper()
	v := os.Getenv(SizeEnv)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive number", SizeEnv, v)
	}
	return n
}

// Binary returns the path of one of the project's commands (a directory
// under cmd/): from $BENCH_BIN_DIR when it is there, else built now into a
// temporary directory.
func Binary(tb testing.TB, name string) string {
	tb.Helper()
	if dir := os.Getenv(BinDirEnv); dir != "" {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			Uncache(tb, p)
			return p
		}
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	out := filepath.Join(tb.TempDir(), name)
	cmd := exec.CommandContext(tb.Context(), "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building %s: %v\n%s", name, err, b)
	}
	Uncache(tb, out)
	return out
}

// Kubectl finds kubectl on PATH or in the testbin directory
// (hack/testbin/build.sh puts one there on machines without it).
func Kubectl(tb testing.TB) string {
	tb.Helper()
	p := testtool.Path(tb, "kubectl", local.DefaultBinDir())
	Uncache(tb, p)
	return p
}

// Uncache drops a binary's pages from the page cache (after writing any
// that are dirty), so its first run reads it from disk as a user's
// first run would, whichever side it is on. It matters to the peak RSS
// and not only to the first run's time: the pages of a file just written
// sit in the page cache in large blocks, and a process maps whole blocks
// where it touches one page, so a binary run right after it was built
// shows most of its size as resident (airshipctl version: 106 MiB, against
// 67 MiB once read back from disk). A file the kernel will not drop is
// left as it is.
func Uncache(tb testing.TB, path string) {
	tb.Helper()
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	_ = unix.Fdatasync(int(f.Fd()))
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// Nodes is how many kwok Nodes a cluster needs to run pods pods: the local
// control plane's Nodes hold 250 pods each (internal/cluster/local/
// stages.yaml); a fifth is left spare, and there are at least 3.
func Nodes(pods int) int {
	return max(3, (pods+199)/200)
}

// Proc is a finished process: its wall-clock time from start to exit, its
// peak resident set, and what the kernel accounted to it.
type Proc struct {
	Wall time.Duration
	// PeakRSSMiB is the process's own largest resident set (see Run).
	PeakRSSMiB float64
	State      *os.ProcessState
}

// CPUSeconds is the user plus system time the process used.
func (p Proc) CPUSeconds() float64 {
	if p.State == nil {
		return 0
	}
	return (p.State.UserTime() + p.State.SystemTime()).Seconds()
}

// TimePath is GNU time, which Run starts every command under.
const TimePath = "/usr/bin/time"

// Run runs cmd to completion under GNU time and times it. Its stderr (and
// stdout, unless the caller set cmd.Stdout) is kept for the error of a
// failed run.
//
// The peak RSS comes from GNU time (its %M, ru_maxrss of the process it
// forked), not from cmd.ProcessState: Go starts children with
// clone(CLONE_VM|CLONE_VFORK), so the child's mm before exec is this
// process's, and Linux carries that mm's high-water mark into the child's
// ru_maxrss at exec. A child of a 300 MiB benchmark would report at least
// 300 MiB. GNU time is a small C program that forks, so what it reports is
// the command's own peak (with a floor of about 1 MiB, GNU time's size).
func Run(cmd *exec.Cmd) (Proc, error) {
	if _, err := os.Stat(TimePath); err != nil {
		return Proc{}, fmt.Errorf("GNU time (%s, Debian package time) reads the peak RSS of each process: run hack/setup.sh: %w", TimePath, err)
	}
	rss, err := os.CreateTemp("", "bench-rss-")
	if err != nil {
		return Proc{}, err
	}
	_ = rss.Close()
	defer os.Remove(rss.Name()) //nolint:errcheck
	args := cmd.Args
	cmd.Args = append([]string{TimePath, "-f", "%M", "-o", rss.Name(), "--", cmd.Path}, args[1:]...)
	cmd.Path = TimePath
	defer func() { cmd.Path, cmd.Args = args[0], args }()

	var out bytes.Buffer
	if cmd.Stdout == nil {
		cmd.Stdout = &out
	}
	if cmd.Stderr == nil {
		cmd.Stderr = &out
	}
	start := time.Now()
	err = cmd.Run()
	p := Proc{Wall: time.Since(start), State: cmd.ProcessState}
	if err != nil {
		return p, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, tail(out.String(), 4000))
	}
	kib, err := lastNumber(rss.Name())
	if err != nil {
		return p, fmt.Errorf("%s: reading its peak RSS: %w", strings.Join(args, " "), err)
	}
	p.PeakRSSMiB = kib / 1024
	return p, nil
}

// lastNumber reads the number on the last line of GNU time's output file
// (a failed command's status line comes before it).
func lastNumber(path string) (float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strconv.ParseFloat(strings.TrimSpace(lines[len(lines)-1]), 64)
}

// VmHWMMiB reads the peak resident set of a running process from
// /proc/PID/status. It belongs to the process's current image only (the
// high-water mark of the mm it got at exec), so unlike ru_maxrss it is not
// raised by the parent that started it. Read it just before stopping a
// long-running process.
func VmHWMMiB(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// Tally adds up one side's runs.
type Tally struct {
	Total time.Duration
	Runs  int
	// PeakRSSMiB is the largest peak over the runs.
	PeakRSSMiB float64
}

// Add records one run.
func (t *Tally) Add(d time.Duration, rssMiB float64) {
	t.Total += d
	t.Runs++
	t.PeakRSSMiB = max(t.PeakRSSMiB, rssMiB)
}

// AddProc records one finished process.
func (t *Tally) AddProc(p Proc) { t.Add(p.Wall, p.PeakRSSMiB) }

// Seconds is the mean wall time of a run.
func (t *Tally) Seconds() float64 {
	if t.Runs == 0 {
		return 0
	}
	return t.Total.Seconds() / float64(t.Runs)
}

// Count formats n with thousands separators: 5000 is "5,000".
func Count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + Count(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
