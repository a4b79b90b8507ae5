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

// Latencies are the API server's time on requests
// (apiserver_request_duration_seconds_sum), summed by "VERB
// resource[/subresource]", in seconds.
type Latencies map[string]float64

// APIRequests reads the counters from the API server's /metrics.
func APIRequests(ctx context.Context, cfg *rest.Config) (Requests, error) {
	text, err := apiMetrics(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return ParseRequests(text), nil
}

// APIRequestsAndLatencies reads the counters and the time spent on them
// from one reading of the API server's /metrics.
func APIRequestsAndLatencies(ctx context.Context, cfg *rest.Config) (Requests, Latencies, error) {
	text, err := apiMetrics(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return ParseRequests(text), ParseLatencies(text), nil
}

func apiMetrics(ctx context.Context, cfg *rest.Config) (string, error) {
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("a client of %s: %w", cfg.Host, err)
	}
	raw, err := kc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the metrics of %s: %w", cfg.Host, err)
	}
	return string(raw), nil
}

// ParseRequests reads apiserver_request_total out of a Prometheus text
// exposition; other lines are skipped.
func ParseRequests(text string) Requests {
	out := Requests{}
	eachSample(text, "apiserver_request_total", func(labels map[string]string, v float64) {
		out[requestKind(labels)+" "+labels["code"]] += v
	})
	return out
}

// ParseLatencies reads apiserver_request_duration_seconds_sum out of a
// Prometheus text exposition; other lines are skipped.
func ParseLatencies(text string) Latencies {
	out := Latencies{}
	eachSample(text, "apiserver_request_duration_seconds_sum", func(labels map[string]string, v float64) {
		out[requestKind(labels)] += v
	})
	return out
}

// requestKind is "VERB resource[/subresource]" of a sample's labels.
func requestKind(labels map[string]string) string {
	res := labels["resource"]
	if sub := labels["subresource"]; sub != "" {
		res += "/" + sub
	}
	return labels["verb"] + " " + res
}

// eachSample calls fn with the labels and value of every sample of metric
// in text; a malformed line is skipped.
func eachSample(text, metric string, fn func(labels map[string]string, v float64)) {
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, metric+"{")
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
		fn(labels, v)
	}
}

// Since is what was counted after before was read: the increases only.
func (r Requests) Since(before Requests) Requests { return since(r, before) }

// since is the increases of counters from before to after; a counter that
// did not grow is left out.
func since[M ~map[string]float64](after, before M) M {
	out := M{}
	for k, v := range after {
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

// Since is the time spent after before was read.
func (l Latencies) Since(before Latencies) Latencies { return since(l, before) }

// KindStat is how many requests of one kind ("PATCH baremetalhosts") were
// served and the API server's time on them.
type KindStat struct {
	Kind    string
	Count   float64
	Seconds float64
	// Failed counts the answers that were not 2xx, by code.
	Failed map[string]float64
}

// ByKind sums the counters by kind, every code, with the time lat says
// was spent on each: the most frequent first, then by kind. WATCH
// requests are left out: they are long-running, so their time is no
// latency. r and lat are usually increases (Since).
func (r Requests) ByKind(lat Latencies) []KindStat {
	byKind := map[string]*KindStat{}
	for k, v := range r {
		i := strings.LastIndexByte(k, ' ')
		if i < 0 {
			continue
		}
		kind, code := k[:i], k[i+1:]
		if strings.HasPrefix(kind, "WATCH ") || v <= 0 {
			continue
		}
		s := byKind[kind]
		if s == nil {
			s = &KindStat{Kind: kind, Seconds: lat[kind]}
			byKind[kind] = s
		}
		s.Count += v
		if !strings.HasPrefix(code, "2") {
			if s.Failed == nil {
				s.Failed = map[string]float64{}
			}
			s.Failed[code] += v
		}
	}
	out := make([]KindStat, 0, len(byKind))
	for _, s := range byKind {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b KindStat) int {
		if a.Count != b.Count {
			if a.Count > b.Count {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return out
}
