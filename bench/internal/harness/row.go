package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// ResultsEnv names the file benchmarks append their rows to.
const ResultsEnv = "BENCH_RESULTS"

// Row is one comparison: the same work done by ours and by a peer, at a
// stated parallelism, on a cluster in a stated state.
type Row struct {
	// Workload names the work, e.g. "render".
	Workload string `json:"workload"`
	// Size says how much work, e.g. "5,000 documents".
	Size string `json:"size"`
	// Ours and Peer name what ran on each side.
	Ours string `json:"ours"`
	Peer string `json:"peer"`
	// OursSeconds and PeerSeconds are wall-clock seconds per run, averaged
	// over Runs.
	OursSeconds float64 `json:"oursSeconds"`
	PeerSeconds float64 `json:"peerSeconds"`
	// OursPeakRSSMiB is the largest resident set of our process over the runs.
	OursPeakRSSMiB float64 `json:"oursPeakRSSMiB"`
	// Parallelism says how many workers or processes each side used.
	Parallelism string `json:"parallelism"`
	// Cluster says the state of the cluster each side ran on ("none" when
	// the work needs no cluster).
	Cluster string `json:"cluster"`
	// Runs is how many runs the seconds are averaged over.
	Runs int `json:"runs"`
	// Notes are anything else worth reading beside the figures.
	Notes []string `json:"notes,omitempty"`
}

// Ratio is peer seconds over ours: above 1, ours is faster.
func (r Row) Ratio() float64 {
	if r.OursSeconds <= 0 {
		return 0
	}
	return r.PeerSeconds / r.OursSeconds
}

// Validate reports a row that cannot be printed meaningfully.
func (r Row) Validate() error {
	switch {
	case r.Workload == "" || r.Size == "":
		return fmt.Errorf("row %q/%q: workload and size are required", r.Workload, r.Size)
	case r.Ours == "" || r.Peer == "":
		return fmt.Errorf("row %s %s: ours and peer must be named", r.Workload, r.Size)
	case r.Parallelism == "" || r.Cluster == "":
		return fmt.Errorf("row %s %s: parallelism and cluster state must be stated", r.Workload, r.Size)
	case r.OursSeconds <= 0 || r.PeerSeconds <= 0:
		return fmt.Errorf("row %s %s: both sides need a time (ours %v s, peer %v s)", r.Workload, r.Size, r.OursSeconds, r.PeerSeconds)
	case r.Runs < 1:
		return fmt.Errorf("row %s %s: runs must be at least 1", r.Workload, r.Size)
	}
	return nil
}

// Record logs the row, reports its figures as benchmark metrics, and
// appends it to $BENCH_RESULTS when that is set. An invalid row fails the
// benchmark.
func Record(b *testing.B, r Row) {
	b.Helper()
	if err := r.Validate(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.OursSeconds, "ours-s")
	b.ReportMetric(r.PeerSeconds, "peer-s")
	b.ReportMetric(r.Ratio(), "peer/ours")
	b.ReportMetric(r.OursPeakRSSMiB, "ours-peak-RSS-MiB")
	b.Logf("%s, %s: ours (%s) %.2f s, peer (%s) %.2f s, peer/ours %.2f, our peak RSS %.0f MiB; %s; cluster: %s",
		r.Workload, r.Size, r.Ours, r.OursSeconds, r.Peer, r.PeerSeconds, r.Ratio(), r.OursPeakRSSMiB, r.Parallelism, r.Cluster)
	for _, n := range r.Notes {
		b.Logf("  note: %s", n)
	}
	path := os.Getenv(ResultsEnv)
	if path == "" {
		return
	}
	if err := AppendRow(path, r); err != nil {
		b.Fatal(err)
	}
}

// AppendRow appends one row to a results file as a JSON line.
func AppendRow(path string, r Row) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("bench results: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		_ = f.Close()
		return fmt.Errorf("bench results %s: %w", path, err)
	}
	return f.Close()
}

// ReadRows reads a results file; a missing file holds no rows.
func ReadRows(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rows []Row
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; s.Scan(); line++ {
		if len(bytes.TrimSpace(s.Bytes())) == 0 {
			continue
		}
		var r Row
		if err := json.Unmarshal(s.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, line, err)
		}
		rows = append(rows, r)
	}
	return rows, s.Err()
}
