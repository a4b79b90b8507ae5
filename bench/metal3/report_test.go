package metal3

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/airshipit/airship-go/bench/internal/harness"
)

var quoted = regexp.MustCompile(`"[^"]*"`)

// logSummary counts the operator's log lines (it runs with
// --zap-log-level=error): its errors, with the commonest messages, and
// client-go's notes on waiting for the client-side rate limiter.
func logSummary(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close() //nolint:errcheck
	lines, errs, throttled := 0, 0, 0
	byMsg := map[string]int{}
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		lines++
		line := s.Text()
		if strings.Contains(line, "client-side throttling") {
			throttled++
		}
		var entry struct {
			Level, Msg, Error string
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Level == "error" {
			errs++
			msg := entry.Msg
			if entry.Error != "" {
				msg += ": " + entry.Error
			}
			// One line per kind of error, not per host.
			msg = quoted.ReplaceAllString(msg, `"…"`)
			if len(msg) > 160 {
				msg = msg[:160] + "..."
			}
			byMsg[msg]++
		}
	}
	out := fmt.Sprintf("%d lines, %d errors, %d throttling notes", lines, errs, throttled)
	type kv struct {
		msg string
		n   int
	}
	var top []kv
	for m, n := range byMsg {
		top = append(top, kv{m, n})
	}
	slices.SortFunc(top, func(a, b kv) int { return b.n - a.n })
	for i, e := range top {
		if i == 3 {
			break
		}
		out += fmt.Sprintf("; %dx %q", e.n, e.msg)
	}
	return out
}

// apiRequests reads the API server's apiserver_request_total counters,
// summed by "verb resource[/subresource] code".
func apiRequests(ctx context.Context, cfg *rest.Config) (map[string]float64, error) {
	r, err := harness.APIRequests(ctx, cfg)
	return map[string]float64(r), err
}

// requestDelta lists the largest increases between two apiRequests.
func requestDelta(before, after map[string]float64, top int) string {
	type kv struct {
		k string
		v float64
	}
	var d []kv
	total := 0.0
	for k, v := range after {
		if x := v - before[k]; x > 0 {
			d = append(d, kv{k, x})
			total += x
		}
	}
	slices.SortFunc(d, func(a, b kv) int { return int(b.v - a.v) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "%.0f requests:", total)
	for i, e := range d {
		if i == top {
			break
		}
		fmt.Fprintf(&sb, " %s=%.0f", e.k, e.v)
	}
	return sb.String()
}
