package harness

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airshipit/airship-go/internal/test/testtool"
)

var update = flag.Bool("update", false, "rewrite the golden files from the actual output")

// childEnv makes this test binary a child that holds the given number of
// MiB resident, then exits (see TestMain).
const childEnv = "HARNESS_TEST_HOLD_MIB"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		var mib int
		if _, err := fmt.Sscan(v, &mib); err != nil {
			os.Exit(2)
		}
		hold(mib)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var sink []byte

// hold touches mib MiB so they are resident.
func hold(mib int) {
	sink = make([]byte, mib<<20)
	for i := 0; i < len(sink); i += 4096 {
		sink[i] = 1
	}
}

func row() Row {
	return Row{
		Workload: "render", Size: "5,000 documents", Ours: "airshipctl", Peer: "kubectl kustomize",
		OursSeconds: 2, PeerSeconds: 3, OursPeakRSSMiB: 150.4, Parallelism: "1 process each", Cluster: "none", Runs: 1,
	}
}

func TestRowValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Row)
		wantErr string
	}{
		{"complete", func(*Row) {}, ""},
		{"no size", func(r *Row) { r.Size = "" }, "workload and size are required"},
		{"peer not named", func(r *Row) { r.Peer = "" }, "ours and peer must be named"},
		{"no cluster state", func(r *Row) { r.Cluster = "" }, "parallelism and cluster state must be stated"},
		{"no peer time", func(r *Row) { r.PeerSeconds = 0 }, "both sides need a time"},
		{"no runs", func(r *Row) { r.Runs = 0 }, "runs must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := row()
			tt.change(&r)
			err := r.Validate()
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestRatioIsPeerOverOurs(t *testing.T) {
	r := row()
	if got := r.Ratio(); got != 1.5 {
		t.Fatalf("ratio %v, want 1.5 (peer 3 s / ours 2 s)", got)
	}
	r.OursSeconds = 0
	if got := r.Ratio(); got != 0 {
		t.Fatalf("ratio with no time of ours %v, want 0", got)
	}
}

func TestMarkdownGolden(t *testing.T) {
	slow := row()
	slow.Workload, slow.Size, slow.OursSeconds, slow.PeerSeconds, slow.Runs = "apply + wait", "1,000 objects", 120.4, 30.2, 3
	slow.Parallelism, slow.Cluster = "ours 16 requests at once; peer 16 processes", "a fresh local control plane per side"
	slow.Notes = []string{"kubectl waits on the same objects"}
	fast := row()
	fast.OursSeconds, fast.PeerSeconds = 0.0123, 0.5
	again := fast
	again.Size = "1,000 documents"
	var b strings.Builder
	if err := Markdown(&b, []Row{row(), slow, fast, again}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "table.md")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("table differs from %s (go test -update rewrites it):\n%s", golden, b.String())
	}
}

func TestRowsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	if rows, err := ReadRows(path); err != nil || len(rows) != 0 {
		t.Fatalf("a missing file: %v, %v; want no rows and no error", rows, err)
	}
	a, b := row(), row()
	b.Notes = []string{"a note"}
	for _, r := range []Row{a, b} {
		if err := AppendRow(path, r); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := ReadRows(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Workload != a.Workload || rows[1].Notes[0] != "a note" || rows[1].OursPeakRSSMiB != b.OursPeakRSSMiB {
		t.Fatalf("read back %+v", rows)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{not json\n"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if _, err := ReadRows(path); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("a malformed line: %v, want an error naming line 3", err)
	}
}

// TestRunPeakRSSIsTheChildsOwn starts, from a parent holding 256 MiB, a
// child that holds nothing extra and one that holds 64 MiB more: the first
// peak is the child's own (below the parent's; cmd.ProcessState's
// ru_maxrss would report the parent's), the second is 64 MiB above it.
func TestRunPeakRSSIsTheChildsOwn(t *testing.T) {
	if _, err := os.Stat(TimePath); err != nil {
		testtool.Missing(t, "GNU time: %v; %s", err, testtool.SetupHint)
	}
	hold(256)
	peak := func(mib int) float64 {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", childEnv, mib))
		p, err := Run(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if p.Wall <= 0 || p.State == nil || !p.State.Success() {
			t.Fatalf("wall %v, state %v", p.Wall, p.State)
		}
		return p.PeakRSSMiB
	}
	base := peak(0)
	if base <= 0 || base >= 200 {
		t.Fatalf("a child holding nothing extra peaked at %.1f MiB: want its own size, under the parent's 256 MiB", base)
	}
	if got := peak(64); got < base+60 || got > base+90 {
		t.Fatalf("a child holding 64 MiB peaked at %.1f MiB, want about %.1f + 64", got, base)
	}
}

func TestRunFailureSaysWhy(t *testing.T) {
	if _, err := os.Stat(TimePath); err != nil {
		testtool.Missing(t, "GNU time: %v; %s", err, testtool.SetupHint)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run", "^TestNoSuchTest$", "-test.bogus-flag")
	_, err := Run(cmd)
	if err == nil || !strings.Contains(err.Error(), "bogus-flag") || !strings.Contains(err.Error(), "exit status") {
		t.Fatalf("err = %v, want the exit status and the command's output", err)
	}
	if cmd.Path != os.Args[0] || cmd.Args[0] != os.Args[0] {
		t.Errorf("Run left the command changed: %s %v", cmd.Path, cmd.Args)
	}
}

func TestVmHWMMiB(t *testing.T) {
	hold(32)
	got, err := VmHWMMiB(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got < 32 {
		t.Fatalf("VmHWM %.1f MiB, want at least the 32 MiB held", got)
	}
	if _, err := VmHWMMiB(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

func TestSize(t *testing.T) {
	t.Setenv(SizeEnv, "")
	if got := Size(t, 42); got != 42 {
		t.Fatalf("unset: %d, want the default 42", got)
	}
	t.Setenv(SizeEnv, "1000")
	if got := Size(t, 42); got != 1000 {
		t.Fatalf("%s=1000: %d", SizeEnv, got)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 5000: "5,000", 1234567: "1,234,567", -1200: "-1,200"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestNodes(t *testing.T) {
	for pods, want := range map[int]int{0: 3, 400: 3, 600: 3, 601: 4, 1000: 5, 2000: 10} {
		if got := Nodes(pods); got != want {
			t.Errorf("Nodes(%d) = %d, want %d", pods, got, want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for s, want := range map[float64]string{0.0123: "12.3 ms", 0.5: "0.50 s", 12.34: "12.3 s", 288.8: "289 s"} {
		if got := Seconds(s); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", s, got, want)
		}
	}
}

func TestTally(t *testing.T) {
	var tl Tally
	if tl.Seconds() != 0 {
		t.Fatal("an empty tally has a time")
	}
	tl.Add(2e9, 10)
	tl.Add(4e9, 30)
	tl.Add(3e9, 20)
	if tl.Seconds() != 3 || tl.PeakRSSMiB != 30 || tl.Runs != 3 {
		t.Fatalf("tally %+v: want mean 3 s, peak 30 MiB, 3 runs", tl)
	}
}
