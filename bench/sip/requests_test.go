package sip

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// reqStat is one kind of API request ("PATCH baremetalhosts"): how many
// were served and the API server's own time on them.
type reqStat struct {
	count   float64
	seconds float64
	// failed counts the answers that were not 2xx, by code.
	failed map[string]float64
}

// apiRequests reads the API server's request counters and latency sums
// (apiserver_request_total, apiserver_request_duration_seconds), by verb
// and resource.
func apiRequests(ctx context.Context, cfg *rest.Config) (map[string]reqStat, error) {
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	raw, err := kc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]reqStat{}
	for _, line := range strings.Split(string(raw), "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || (name != "apiserver_request_total" && name != "apiserver_request_duration_seconds_sum") {
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 {
			continue
		}
		labels := map[string]string{}
		for _, kv := range strings.Split(rest[:end], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				labels[k] = strings.Trim(v, `"`)
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest[end+1:]), 64)
		if err != nil {
			continue
		}
		key := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		s := out[key]
		if name == "apiserver_request_total" {
			s.count += v
			if code := labels["code"]; !strings.HasPrefix(code, "2") {
				if s.failed == nil {
					s.failed = map[string]float64{}
				}
				s.failed[code] += v
			}
		} else {
			s.seconds += v
		}
		out[key] = s
	}
	return out, nil
}

// requestDelta lists the requests served between two readings, the most
// frequent first, each with the API server's mean time on it.
func requestDelta(before, after map[string]reqStat) string {
	type kv struct {
		k string
		s reqStat
	}
	var d []kv
	for k, a := range after {
		s := reqStat{count: a.count - before[k].count, seconds: a.seconds - before[k].seconds}
		for code, n := range a.failed {
			if n -= before[k].failed[code]; n > 0 {
				if s.failed == nil {
					s.failed = map[string]float64{}
				}
				s.failed[code] = n
			}
		}
		// WATCH requests are long-running: their time is not a latency.
		if s.count > 0 && !strings.HasPrefix(k, "WATCH ") {
			d = append(d, kv{k, s})
		}
	}
	slices.SortFunc(d, func(a, b kv) int {
		if a.s.count != b.s.count {
			return int(b.s.count - a.s.count)
		}
		return strings.Compare(a.k, b.k)
	})
	parts := make([]string, 0, len(d))
	for _, e := range d {
		mean := time.Duration(e.s.seconds / e.s.count * float64(time.Second))
		failed := ""
		for _, code := range slices.Sorted(maps.Keys(e.s.failed)) {
			failed += fmt.Sprintf(", %.0f answered %s", e.s.failed[code], code)
		}
		parts = append(parts, fmt.Sprintf("%s ×%.0f (%s each%s)", e.k, e.s.count, fmtDuration(mean), failed))
	}
	return strings.Join(parts, ", ")
}
