// Package fake holds benchmarks the suite's own test runs: one that
// records a row of the size it is given, one that records none, one that
// fails.
package fake

import (
	"os"
	"testing"

	"github.com/airshipit/airship-go/bench/internal/harness"
)

func BenchmarkRow(b *testing.B) {
	n := harness.Size(b, 7)
	runs := 0
	for b.Loop() {
		runs++
	}
	peer := "them"
	if p := os.Getenv("FAKE_PEER"); p != "" {
		peer = p // a registry entry's Env
	}
	harness.Record(b, harness.Row{
		Workload: "fake", Size: harness.Count(n) + " things", Ours: "us", Peer: peer,
		OursSeconds: 1, PeerSeconds: 2, OursPeakRSSMiB: 3, Parallelism: "one each", Cluster: "none", Runs: runs,
	})
}

func BenchmarkNoRow(b *testing.B) {
	for b.Loop() {
	}
}

func BenchmarkFails(b *testing.B) {
	b.Fatal("this benchmark fails")
}
