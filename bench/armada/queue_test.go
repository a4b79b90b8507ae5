package armada

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// freeMetricsAddr is a loopback address for the operator's metrics
// endpoint, so the bench can read its work queue before stopping it.
func freeMetricsAddr(ctx context.Context) (string, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// histogram is one Prometheus histogram: cumulative counts by upper bound.
type histogram struct {
	bounds []float64
	counts []float64
	sum    float64
	count  float64
}

// quantile estimates the q-quantile as the upper bound of the bucket that
// holds it (the resolution of the histogram's buckets).
func (h histogram) quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	rank := q * h.count
	for i, c := range h.counts {
		if c >= rank {
			return h.bounds[i]
		}
	}
	return h.bounds[len(h.bounds)-1]
}

func (h histogram) String() string {
	if h.count == 0 {
		return "none"
	}
	return fmt.Sprintf("n=%.0f mean=%.3fs p50<=%gs p90<=%gs", h.count, h.sum/h.count, h.quantile(0.5), h.quantile(0.9))
}

// parseHistogram reads histogram name of the armadachart controller (label
// name=armadachart for work queues, controller=armadachart for reconciles)
// from Prometheus text exposition.
func parseHistogram(r io.Reader, name string) histogram {
	var h histogram
	type bucket struct{ le, n float64 }
	var bs []bucket
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || (!strings.Contains(line, `name="armadachart"`) && !strings.Contains(line, `controller="armadachart"`)) {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		switch rest := line[len(name):sp]; {
		case strings.HasPrefix(rest, "_bucket"):
			i := strings.Index(rest, `le="`)
			if i < 0 {
				continue
			}
			le := rest[i+4:]
			le = le[:strings.IndexByte(le, '"')]
			if le == "+Inf" {
				continue
			}
			f, err := strconv.ParseFloat(le, 64)
			if err == nil {
				bs = append(bs, bucket{f, v})
			}
		case strings.HasPrefix(rest, "_sum"):
			h.sum = v
		case strings.HasPrefix(rest, "_count"):
			h.count = v
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	for _, b := range bs {
		h.bounds = append(h.bounds, b.le)
		h.counts = append(h.counts, b.n)
	}
	return h
}

// operatorQueue reads, from the operator's metrics endpoint at addr, how
// long ArmadaCharts waited in its work queue and how long their reconciles
// took: where the time between a watch event and a chart's status goes.
func operatorQueue(ctx context.Context, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	get := func() (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		if err != nil {
			return "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(resp.Body)
		return string(b), errors.Join(err, resp.Body.Close())
	}
	text, err := get()
	if err != nil {
		return "", err
	}
	wait := parseHistogram(strings.NewReader(text), "workqueue_queue_duration_seconds")
	work := parseHistogram(strings.NewReader(text), "controller_runtime_reconcile_time_seconds")
	return fmt.Sprintf("queue wait %s | reconcile %s", wait, work), nil
}
