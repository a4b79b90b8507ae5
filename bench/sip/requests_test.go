package sip

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/airshipit/airship-go/bench/internal/harness"
)

// apiReading is one reading of the API server's request counters and its
// time on them.
type apiReading struct {
	requests  harness.Requests
	latencies harness.Latencies
}

// apiRequests reads the API server's request counters and latency sums.
func apiRequests(ctx context.Context, cfg *rest.Config) (apiReading, error) {
	r, l, err := harness.APIRequestsAndLatencies(ctx, cfg)
	return apiReading{requests: r, latencies: l}, err
}

// requestDelta lists the requests served between two readings, the most
// frequent first, each with the API server's mean time on it.
func requestDelta(before, after apiReading) string {
	stats := after.requests.Since(before.requests).ByKind(after.latencies.Since(before.latencies))
	parts := make([]string, 0, len(stats))
	for _, e := range stats {
		mean := time.Duration(e.Seconds / e.Count * float64(time.Second))
		failed := ""
		for _, code := range slices.Sorted(maps.Keys(e.Failed)) {
			failed += fmt.Sprintf(", %.0f answered %s", e.Failed[code], code)
		}
		parts = append(parts, fmt.Sprintf("%s ×%.0f (%s each%s)", e.Kind, e.Count, fmtDuration(mean), failed))
	}
	return strings.Join(parts, ", ")
}
