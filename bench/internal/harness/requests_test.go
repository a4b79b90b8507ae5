package harness

import (
	"fmt"
	"math"
	"testing"
)

// TestRequests reads the request counters of a /metrics text, tells the
// increases between two readings apart, and sums writes and conflicts.
func TestRequests(t *testing.T) {
	before := ParseRequests(`# HELP apiserver_request_total Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="GET",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="metal3.io",resource="baremetalhosts",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 4
apiserver_request_duration_seconds_sum{verb="GET"} 3.5
`)
	after := ParseRequests(`apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="secrets",scope="resource",subresource="",verb="GET",version="v1"} 12
apiserver_request_total{code="200",component="apiserver",dry_run="",group="metal3.io",resource="baremetalhosts",scope="resource",subresource="status",verb="PUT",version="v1alpha1"} 9
apiserver_request_total{code="409",component="apiserver",dry_run="",group="metal3.io",resource="baremetalhosts",scope="resource",subresource="",verb="PUT",version="v1alpha1"} 1
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="events",scope="namespace",subresource="",verb="POST",version="v1"} 1000
`)
	d := after.Since(before)
	want := Requests{"GET secrets 200": 2, "PUT baremetalhosts/status 200": 5, "PUT baremetalhosts 409": 1, "POST events 201": 1000}
	if len(d) != len(want) {
		t.Fatalf("Since = %v, want %v", d, want)
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("Since[%q] = %v, want %v", k, d[k], v)
		}
	}
	if d.Total() != 1008 || d.Writes() != 1006 || d.Conflicts() != 1 {
		t.Errorf("total %v, writes %v, conflicts %v; want 1008, 1006, 1", d.Total(), d.Writes(), d.Conflicts())
	}
	if got, want := d.Top(2), "1,008 requests (1,006 writes): POST events 201=1,000 PUT baremetalhosts/status 200=5"; got != want {
		t.Errorf("Top(2) = %q, want %q", got, want)
	}
}

// TestRequestsByKind sums the counters of each kind over its codes, keeps
// the failures apart, takes the time from the latencies and leaves WATCHes
// out.
func TestRequestsByKind(t *testing.T) {
	metrics := func(patches, conflicts, seconds float64) string {
		return fmt.Sprintf(`apiserver_request_total{code="200",resource="baremetalhosts",subresource="",verb="PATCH"} %g
apiserver_request_total{code="409",resource="baremetalhosts",subresource="",verb="PATCH"} %g
apiserver_request_total{code="200",resource="secrets",subresource="",verb="WATCH"} 3
apiserver_request_total{code="200",resource="sipclusters",subresource="status",verb="PUT"} 1
apiserver_request_duration_seconds_sum{resource="baremetalhosts",subresource="",verb="PATCH"} %g
apiserver_request_duration_seconds_sum{resource="sipclusters",subresource="status",verb="PUT"} 0.5
`, patches, conflicts, seconds)
	}
	before, after := metrics(10, 1, 2), metrics(16, 3, 3.6)
	reqs := ParseRequests(after).Since(ParseRequests(before))
	lat := ParseLatencies(after).Since(ParseLatencies(before))
	got := ParseRequests(after).ByKind(ParseLatencies(after))
	if len(got) != 2 || got[0].Kind != "PATCH baremetalhosts" || got[0].Count != 19 || got[1].Kind != "PUT sipclusters/status" || got[1].Seconds != 0.5 {
		t.Fatalf("ByKind of one reading = %+v", got)
	}
	got = reqs.ByKind(lat)
	want := KindStat{Kind: "PATCH baremetalhosts", Count: 8, Seconds: 1.6, Failed: map[string]float64{"409": 2}}
	if len(got) != 1 || got[0].Kind != want.Kind || got[0].Count != want.Count || math.Abs(got[0].Seconds-want.Seconds) > 1e-9 || got[0].Failed["409"] != 2 || len(got[0].Failed) != 1 {
		t.Fatalf("ByKind of the increases = %+v, want [%+v]", got, want)
	}
}
