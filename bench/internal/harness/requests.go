package harness

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Requests are an API server's request counters (apiserver_request_total),
// summed by "VERB resource[/subresource] code", for example
// "PATCH metal3machines/status 200". They count every client's requests.
type Requests map[string]float64

// APIRequests reads the counters from the API server's /metrics.
func APIRequests(ctx context.Context, cfg *rest.Config) (Requests, error) {
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("a client of %s: %w", cfg.Host, err)
	}
	raw, err := kc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the metrics of %s: %w", cfg.Host, err)
	}
	return ParseRequests(string(raw)), nil
}

// ParseRequests reads apiserver_request_total out of a Prometheus text
// exposition; other lines are skipped.
func ParseRequests(text string) Requests {
	out := Requests{}
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
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
		res := labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			res += "/" + sub
		}
		out[labels["verb"]+" "+res+" "+labels["code"]] += v
	}
	return out
}

// Since is what was counted after before was read: the increases only.
func (r Requests) Since(before Requests) Requests {
	out := Requests{}
	for k, v := range r {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// Total is the number of requests.
func (r Requests) Total() float64 {
	t := 0.0
	for _, v := range r {
		t += v
	}
	return t
}

// Writes is the number of requests that change something (POST, PUT,
// PATCH, DELETE, APPLY), whatever their answer.
func (r Requests) Writes() float64 {
	t := 0.0
	for k, v := range r {
		switch verb, _, _ := strings.Cut(k, " "); verb {
		case "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY":
			t += v
		}
	}
	return t
}

// Conflicts is the number of requests answered 409.
func (r Requests) Conflicts() float64 {
	t := 0.0
	for k, v := range r {
		if strings.HasSuffix(k, " 409") {
			t += v
		}
	}
	return t
}

// Top says the total, then the n largest counters, largest first:
// "5,210 requests (3,100 writes): PATCH metal3machines/status 200=1,001 ...".
func (r Requests) Top(n int) string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if r[a] != r[b] {
			if r[a] > r[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s requests (%s writes):", Count(int(r.Total())), Count(int(r.Writes())))
	for i, k := range keys {
		if i == n {
			break
		}
		fmt.Fprintf(&sb, " %s=%s", k, Count(int(r[k])))
	}
	return sb.String()
}
