package suite

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/test/testenv"
)

// benchmarks lists the Benchmark functions declared in a package's test files.
func benchmarks(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Benchmark") {
				out[fn.Name.Name] = true
			}
		}
	}
	return out
}

// TestRegistry checks every workload names a benchmark that exists, runs
// in one mode at least, and that a short run is no bigger than the full
// one of the same workload.
func TestRegistry(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, w := range Workloads {
		t.Run(w.Name, func(t *testing.T) {
			if names[w.Name] {
				t.Errorf("name %q used twice", w.Name)
			}
			names[w.Name] = true
			if !benchmarks(t, filepath.Join(root, w.Package))[w.Benchmark] {
				t.Errorf("%s does not declare %s", w.Package, w.Benchmark)
			}
			if w.Full == nil && w.Short == nil {
				t.Fatal("neither a short nor a full run")
			}
			for mode, p := range map[string]*Params{"short": w.Short, "full": w.Full} {
				if p != nil && (p.Runs < 1 || p.Timeout <= 0 || p.Size < 0) {
					t.Errorf("%s run %+v: runs and timeout must be positive", mode, *p)
				}
			}
			if w.Short != nil && w.Full != nil && (w.Short.Size > w.Full.Size || w.Short.Runs > w.Full.Runs) {
				t.Errorf("short run %+v is bigger than the full one %+v", *w.Short, *w.Full)
			}
		})
	}
}

// TestRun runs the suite on the fake benchmarks of testdata/fake: the
// table holds the rows recorded at the mode's size, the short mode leaves
// out a workload without a short run, and a workload that fails or records
// no row is reported after the table.
func TestRun(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "bench/internal/suite/testdata/fake"
	p := func(size int) *Params { return &Params{Size: size, Runs: 2, Timeout: time.Minute} }
	workloads := []Workload{
		{Name: "row", Package: pkg, Benchmark: "BenchmarkRow", Short: p(5), Full: p(5000)},
		{Name: "full-only", Package: pkg, Benchmark: "BenchmarkRow", Full: &Params{Runs: 2, Timeout: time.Minute, Env: []string{"FAKE_PEER=others"}}},
		{Name: "no-row", Package: pkg, Benchmark: "BenchmarkNoRow", Short: p(1), Full: p(1)},
		{Name: "fails", Package: pkg, Benchmark: "BenchmarkFails", Short: p(1), Full: p(1)},
	}
	tests := []struct {
		name      string
		short     bool
		match     string
		wantRows  []string
		wantNot   []string
		wantError []string
	}{
		{name: "full", wantRows: []string{"| 5,000 things |", "| 7 things ", "mean of 2 runs", "peer: others"},
			wantError: []string{"2 workload(s) failed", "no-row: finished without recording a row", "fails: exit status 1"}},
		{name: "short", short: true, wantRows: []string{"| 5 things |"}, wantNot: []string{"7 things", "5,000 things", "others"},
			wantError: []string{"2 workload(s) failed"}},
		{name: "selected", match: "^row$", wantRows: []string{"| 5,000 things |", " 2.00 |"}, wantNot: []string{"7 things"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			o := Options{Root: root, Short: tt.short, Workloads: workloads, Commands: []string{}, WorkDir: t.TempDir(), Stdout: &stdout, Stderr: &stderr}
			if tt.match != "" {
				o.Match = regexp.MustCompile(tt.match)
			}
			err := Run(context.Background(), o)
			if len(tt.wantError) == 0 && err != nil {
				t.Fatalf("Run: %v\n%s", err, stderr.String())
			}
			for _, w := range tt.wantError {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v does not say %q", err, w)
				}
			}
			out := stdout.String()
			for _, w := range append([]string{"- machine: ", "| workload ", "peer/ours (>1: ours faster)"}, tt.wantRows...) {
				if !strings.Contains(out, w) {
					t.Errorf("the table does not contain %q:\n%s", w, out)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(out, w) {
					t.Errorf("the table contains %q:\n%s", w, out)
				}
			}
			if _, err := os.Stat(filepath.Join(o.WorkDir, "row.log")); err != nil {
				t.Errorf("no log kept for the workload: %v", err)
			}
		})
	}
}
