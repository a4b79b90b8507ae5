package sip

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/sip/schedule"
)

// The site: hosts over racks, and the cluster asked of it.
const (
	racks = 500
	// controlPlaneEvery: one host in this many is control-plane-flavoured.
	controlPlaneEvery = 10
	controlPlanes     = 3
	workers           = 100

	namespace   = "bench"
	clusterName = "tenant"

	rackLabel   = "rack"
	flavorLabel = "flavor"
	cpFlavor    = "control-plane"
	wFlavor     = "worker"
)

// defaultSize is the number of hosts when $BENCH_SIZE is unset.
const defaultSize = 10000

// picked is how many hosts the cluster gets.
const picked = controlPlanes + workers

func hostName(i int) string { return fmt.Sprintf("h%05d", i) }

// hostLabels puts host i in rack i mod 500, every tenth host
// control-plane-flavoured (so those sit in the racks that are multiples
// of 10).
func hostLabels(i int) map[string]string {
	flavor := wFlavor
	if i%controlPlaneEvery == 0 {
		flavor = cpFlavor
	}
	return map[string]string{rackLabel: fmt.Sprintf("rack%03d", i%racks), flavorLabel: flavor}
}

// bareMetalHost is host i as created on the API server: labels, a BMC, a
// boot MAC and a networkData reference (its Secret is not created: with
// no services the operator reads no addresses).
func bareMetalHost(i int) *metal3v1alpha1.BareMetalHost {
	name := hostName(i)
	return &metal3v1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: hostLabels(i)},
		Spec: metal3v1alpha1.BareMetalHostSpec{
			Online:         true,
			BootMACAddress: fmt.Sprintf("52:54:00:%02x:%02x:%02x", i>>16&0xff, i>>8&0xff, i&0xff),
			BMC: metal3v1alpha1.BMCDetails{
				Address:         "redfish+http://10.0.0.1:8000/redfish/v1/Systems/" + name,
				CredentialsName: name + "-bmc",
			},
			NetworkData: &corev1.SecretReference{Namespace: namespace, Name: name + "-network-data"},
		},
	}
}

// cluster is the SIPCluster: 3 control-plane hosts and 100 workers, one
// host per rack across both roles, no services.
func cluster() *sipv1.SIPCluster {
	role := func(flavor string, n int) sipv1.NodeSet {
		return sipv1.NodeSet{
			LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{flavorLabel: flavor}},
			TopologyKey:   rackLabel,
			Count:         &sipv1.NodeCount{Active: n},
		}
	}
	return &sipv1.SIPCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: clusterName},
		Spec: sipv1.SIPClusterSpec{Nodes: map[sipv1.BMHRole]sipv1.NodeSet{
			sipv1.RoleControlPlane: role(cpFlavor, controlPlanes),
			sipv1.RoleWorker:       role(wFlavor, workers),
		}},
	}
}

// scheduleInput is what the controller hands schedule.Schedule for n
// hosts: the request from the SIPCluster and every host, none claimed, in
// no particular order (a list from the informer cache comes in the order
// of its map; sorted input would spare the function's sort its work).
func scheduleInput(tb testing.TB, n int) (schedule.Request, []schedule.Host) {
	tb.Helper()
	req, err := schedule.NewRequest(cluster())
	if err != nil {
		tb.Fatal(err)
	}
	hosts := make([]schedule.Host, n)
	for i := range hosts {
		hosts[i] = schedule.Host{Namespace: namespace, Name: hostName(i), Labels: hostLabels(i)}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
	return req, hosts
}

// scheduleOnce runs the function and checks it gave the cluster its hosts.
func scheduleOnce(tb testing.TB, req schedule.Request, hosts []schedule.Host) schedule.Plan {
	plan, err := schedule.Schedule(req, hosts)
	if err != nil {
		tb.Fatal(err)
	}
	if len(plan.Picks) != picked {
		tb.Fatalf("%d hosts picked, want %d", len(plan.Picks), picked)
	}
	return plan
}

// BenchmarkSchedule times schedule.Schedule alone for $BENCH_SIZE hosts
// (default 10,000): the pure function the reconcile runs after listing the
// hosts from its cache. It has no peer and records no row;
// BenchmarkReconcile gives its figures in its notes.
func BenchmarkSchedule(b *testing.B) {
	req, hosts := scheduleInput(b, harness.Size(b, defaultSize))
	b.ReportAllocs()
	for b.Loop() {
		scheduleOnce(b, req, hosts)
	}
}

// scheduleCost is schedule.Schedule's time and allocations per call.
type scheduleCost struct {
	hosts       int
	perCall     time.Duration
	allocs, mib float64
}

func (c scheduleCost) String() string {
	return fmt.Sprintf("%s per call, %s allocations (%.1f MiB)", fmtDuration(c.perCall), harness.Count(int(c.allocs+0.5)), c.mib)
}

// measureSchedule times schedule.Schedule on n hosts for at least a
// second, as testing.B would (testing.Benchmark cannot be used: it takes
// -benchtime, which is 1x for BenchmarkReconcile).
func measureSchedule(tb testing.TB, n int) scheduleCost {
	tb.Helper()
	req, hosts := scheduleInput(tb, n)
	scheduleOnce(tb, req, hosts) // warm up
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	calls := 0
	start := time.Now()
	for calls < 3 || time.Since(start) < time.Second {
		scheduleOnce(tb, req, hosts)
		calls++
	}
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	return scheduleCost{
		hosts:   n,
		perCall: d / time.Duration(calls),
		allocs:  float64(after.Mallocs-before.Mallocs) / float64(calls),
		mib:     float64(after.TotalAlloc-before.TotalAlloc) / float64(calls) / (1 << 20),
	}
}

// fmtDuration prints a duration to three significant figures.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3g s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3g ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.3g µs", float64(d)/float64(time.Microsecond))
	}
}
