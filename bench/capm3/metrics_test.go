package capm3

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// opMetrics are the counters of the operator's own /metrics (controller-
// runtime's) a run reads: its reconciles by controller and its own API
// requests (to both clusters) by method.
type opMetrics struct {
	// reconciles by controller, every result.
	reconciles map[string]float64
	// errors are reconciles that returned an error, by controller.
	errors map[string]float64
	// requests by HTTP method, every code.
	requests map[string]float64
}

// scrapeOperator reads the operator's metrics at url (http://host:port).
func scrapeOperator(ctx context.Context, url string) (opMetrics, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/metrics", nil)
	if err != nil {
		return opMetrics{}, err
	}
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		return opMetrics{}, fmt.Errorf("reading the operator's metrics: %w", err)
	}
	defer resp.Body.Close() //nolint:errcheck
	if resp.StatusCode != http.StatusOK {
		return opMetrics{}, fmt.Errorf("reading the operator's metrics: %s", resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return opMetrics{}, fmt.Errorf("reading the operator's metrics: %w", err)
	}
	return parseOpMetrics(string(body)), nil
}

// parseOpMetrics reads the counters of a Prometheus text exposition.
func parseOpMetrics(text string) opMetrics {
	m := opMetrics{reconciles: map[string]float64{}, errors: map[string]float64{}, requests: map[string]float64{}}
	for _, line := range strings.Split(text, "\n") {
		name, labels, value, ok := sample(line)
		if !ok {
			continue
		}
		switch name {
		case "controller_runtime_reconcile_total":
			m.reconciles[labels["controller"]] += value
			if labels["result"] == "error" {
				m.errors[labels["controller"]] += value
			}
		case "rest_client_requests_total":
			m.requests[labels["method"]] += value
		}
	}
	return m
}

// sample splits `name{k="v",...} value` (labels optional).
func sample(line string) (string, map[string]string, float64, bool) {
	if line == "" || line[0] == '#' {
		return "", nil, 0, false
	}
	labels := map[string]string{}
	name, rest := line, ""
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return "", nil, 0, false
		}
		name, rest = line[:i], line[j+1:]
		for _, kv := range strings.Split(line[i+1:j], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				labels[k] = strings.Trim(v, `"`)
			}
		}
	} else if i := strings.IndexByte(line, ' '); i >= 0 {
		name, rest = line[:i], line[i:]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
	if err != nil {
		return "", nil, 0, false
	}
	return name, labels, v, true
}

// since is what was counted after before was read.
func (m opMetrics) since(before opMetrics) opMetrics {
	d := func(a, b map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for k, v := range a {
			if x := v - b[k]; x > 0 {
				out[k] = x
			}
		}
		return out
	}
	return opMetrics{reconciles: d(m.reconciles, before.reconciles), errors: d(m.errors, before.errors), requests: d(m.requests, before.requests)}
}

// describe summarizes a run's counters for n machines.
func (m opMetrics) describe(n int) string {
	var recs []string
	for _, c := range slices.Sorted(maps.Keys(m.reconciles)) {
		recs = append(recs, fmt.Sprintf("%s %s (%.1f a machine, %s errors)", c, harness.Count(int(m.reconciles[c])), m.reconciles[c]/float64(n), harness.Count(int(m.errors[c]))))
	}
	var reqs []string
	total := 0.0
	for _, verb := range slices.Sorted(maps.Keys(m.requests)) {
		reqs = append(reqs, fmt.Sprintf("%s %s", verb, harness.Count(int(m.requests[verb]))))
		total += m.requests[verb]
	}
	return fmt.Sprintf("reconciles %s; its own API requests %s (%.1f a machine: %s)",
		strings.Join(recs, ", "), harness.Count(int(total)), total/float64(n), strings.Join(reqs, ", "))
}
