package sip

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/bench/internal/harness"
)

// BenchmarkReconcile times one full reconcile of a 3 + 100 host SIPCluster
// over $BENCH_SIZE BareMetalHosts (default 10,000) in 500 racks:
// sip-operator as its own process, from creating the SIPCluster to its
// Ready=True with the hosts labelled, against kubectl listing the
// candidates and labelling a one-per-rack pick, on the same API server in
// the same state.
func BenchmarkReconcile(b *testing.B) {
	n := harness.Size(b, defaultSize)
	bin := harness.Binary(b, "sip-operator")
	kubectl := harness.Kubectl(b)

	// The pure function first, before the API server takes the cores.
	sizes := []int{1000, 10000}
	if n != 1000 && n != 10000 {
		sizes = append(sizes, n)
	}
	costs := map[int]scheduleCost{}
	for _, s := range sizes {
		costs[s] = measureSchedule(b, s)
		b.Logf("schedule.Schedule, %s hosts: %s", harness.Count(s), costs[s])
	}

	env := startAPI(b)
	defer func() {
		if err := env.Stop(); err != nil {
			b.Error(err)
		}
	}()
	c := fastClient(b, env)
	ctx := context.Background()
	setup := time.Now()
	if err := createSite(ctx, c, n); err != nil {
		b.Fatal(err)
	}
	created := time.Since(setup)
	b.Logf("%s BareMetalHosts created in %s (%d at once, untimed)", harness.Count(n), harness.Seconds(created.Seconds()), createWorkers)

	var ours, peer harness.Tally
	var last operatorRun
	var lastPeer peerRun
	same := true
	for run := 0; b.Loop(); run++ {
		oursSide := func() {
			r := runOperator(b, env, c, bin)
			ours.Add(r.wall, r.peakRSSMiB)
			last = r
			b.Logf("operator: %s to Ready (first reconcile %s, started %s after the create; next %s; %d reconciles started by Ready, %d until idle, %d requeued at once), synced in %s before the clock, peak RSS %.0f MiB, CPU %.2f s; API requests, create to the end of the next reconcile: %s",
				fmtDuration(r.wall), fmtDuration(r.first.duration()), fmtDuration(r.queued), fmtDuration(r.next.duration()),
				r.untilReady, r.reconciles, r.requeued, fmtDuration(r.startup), r.peakRSSMiB, r.cpuSeconds, r.requests)
			for _, e := range r.errors {
				b.Logf("  operator logged: %s", e)
			}
		}
		peerSide := func() {
			r := runKubectl(b, env, kubectl)
			hosts, err := labelled(ctx, c)
			if err == nil {
				err = checkLabelled(hosts)
			}
			if err != nil {
				b.Fatalf("kubectl side: %v", err)
			}
			r.hosts = hosts
			peer.Add(r.wall, r.largestKubectlMiB)
			lastPeer = r
			b.Logf("kubectl: %s (get %s of %d hosts, %.1f MiB of JSON; pick %s; label %s), largest kubectl peak RSS %.0f MiB; API requests: %s",
				fmtDuration(r.wall), fmtDuration(r.get), r.listed, r.listedMiB, fmtDuration(r.pick), fmtDuration(r.label), r.largestKubectlMiB, r.requests)
		}
		sides := []func(){oursSide, peerSide}
		if run%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			side()
			if err := resetSite(ctx, c); err != nil {
				b.Fatalf("resetting the site: %v", err)
			}
		}
		same = same && maps.EqualFunc(last.hosts, lastPeer.hosts, maps.Equal)
	}

	cost := costs[n]
	growth := float64(costs[10000].perCall) / float64(costs[1000].perCall)
	b.ReportMetric(float64(cost.perCall.Nanoseconds()), "schedule-ns/op")
	b.ReportMetric(cost.allocs, "schedule-allocs/op")
	b.ReportMetric(last.first.duration().Seconds(), "operator-reconcile-s")
	sameNote := "both sides labelled the same 103 hosts with the same 3 labels each (cluster namespace, name, role)"
	if !same {
		sameNote = "the two sides labelled different hosts (each checked: 3 control-plane hosts and 100 workers, one per rack)"
	}
	notes := []string{
		fmt.Sprintf("%s BareMetalHosts in one namespace over %d racks, one in %d control-plane-flavoured; the SIPCluster asks for %d control-plane hosts and %d workers, topologyKey rack for both (one host per rack across the roles), and no services, so no Secret is read and it is Ready once its hosts are labelled",
			harness.Count(n), racks, controlPlaneEvery, controlPlanes, workers),
		fmt.Sprintf("one API server (etcd + kube-apiserver, nothing else) for both sides; the hosts were created before either clock, %d requests at once (%s); after each side the SIP labels are removed and the SIPCluster deleted; the side that goes first alternates per run",
			createWorkers, harness.Seconds(created.Seconds())),
		fmt.Sprintf("ours is timed from creating the SIPCluster to Ready=True (ReconciliationSucceeded) as seen by a watch opened before; the operator was started and had synced its caches before the clock (%s, untimed)", fmtDuration(last.startup)),
		fmt.Sprintf("the operator's own log (controller-runtime, V(5)): the first reconcile, which labels the hosts and sets Ready, took %s and started %s after the create (finalizer patch, list of every host from the cache, schedule, 103 label patches one at a time, 5 uncached lists of service objects, status update); the next one, with the hosts labelled, took %s; %d reconciles ran until the operator was idle, %d of them requeued at once; operator CPU %.2f s per run",
			fmtDuration(last.first.duration()), fmtDuration(last.queued), fmtDuration(last.next.duration()), last.reconciles, last.requeued, last.cpuSeconds),
		"API requests from the create to the end of the reconcile after Ready (every reconcile until then, all clients), with the API server's mean time on each: " + last.requests,
		fmt.Sprintf("schedule.Schedule alone (no API server): %s at 1,000 hosts, %s at 10,000 (%.1f× the time for 10× the hosts)", costs[1000], costs[10000], growth),
		fmt.Sprintf("kubectl: get %s (%s hosts, %.1f MiB of JSON, read in pages of 500), the pick in Go %s, 2 × kubectl label %s; discovery cache warmed before the clock; largest kubectl peak RSS %.0f MiB",
			fmtDuration(lastPeer.get), harness.Count(lastPeer.listed), lastPeer.listedMiB, fmtDuration(lastPeer.pick), fmtDuration(lastPeer.label), lastPeer.largestKubectlMiB),
		"kubectl label GETs each host it names before patching it, and those GETs are held by kubectl's own client-side rate limit (5 requests/s after a burst of 10: -v=6 shows \"Waited for 195ms due to client-side throttling\" before each), so most of the peer's time is that limit, not the API server; API requests: " + lastPeer.requests,
		sameNote,
	}
	harness.Record(b, harness.Row{
		Workload: "SIP scheduling", Size: harness.Count(n) + " hosts, 3 + 100 picked",
		Ours:        "sip-operator (its own process; " + strings.Join(operatorArgs, " ") + "), SIPCluster created, timed until Ready with its hosts labelled",
		Peer:        "kubectl get bmh -A -l SELECTOR -o json, a one-per-rack pick in Go, one kubectl label per role (3 processes)",
		OursSeconds: ours.Seconds(), PeerSeconds: peer.Seconds(), OursPeakRSSMiB: ours.PeakRSSMiB,
		Parallelism: "ours 1 reconcile worker; peer 1 process at a time",
		Cluster:     fmt.Sprintf("API server only, %s hosts unlabelled; one server, reset between sides", harness.Count(n)),
		Runs:        ours.Runs, Notes: notes,
	})
}
