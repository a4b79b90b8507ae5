package harness

import "testing"

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
