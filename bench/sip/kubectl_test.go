package sip

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"testing"
	"time"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// candidates is the label selector the peer lists with: either flavor,
// not yet given to a cluster (upstream SIP's "unscheduled" selector).
var candidates = fmt.Sprintf("%s in (%s,%s),!%s", flavorLabel, cpFlavor, wFlavor, sipv1.ClusterNameLabel)

// peerRun is what one run of the peer measured.
type peerRun struct {
	wall              time.Duration
	get, pick, label  time.Duration
	listed            int
	listedMiB         float64
	largestKubectlMiB float64
	hosts             map[string]map[string]string
	// requests are what the API server served during the run.
	requests string
}

// role is one role as the peer picks it.
type role struct {
	role   sipv1.BMHRole
	flavor string
	count  int
}

var roles = []role{{sipv1.RoleControlPlane, cpFlavor, controlPlanes}, {sipv1.RoleWorker, wFlavor, workers}}

// runKubectl does what a user without SIP does, timed from the first
// kubectl's start to the last one's end: list the candidate hosts, pick
// one per rack in Go (in this process), and label the picks with one
// `kubectl label` per role. kubectl's discovery cache is warmed before the
// clock, as the operator's discovery happens before its clock.
func runKubectl(b *testing.B, env *testenv.Env, kubectl string) peerRun {
	b.Helper()
	base := []string{"--kubeconfig", env.Kubeconfig, "--cache-dir", b.TempDir()}
	var run peerRun
	kc := func(stdout *bytes.Buffer, args ...string) {
		b.Helper()
		cmd := exec.CommandContext(b.Context(), kubectl, append(append([]string(nil), base...), args...)...)
		if stdout != nil {
			cmd.Stdout = stdout
		}
		p, err := harness.Run(cmd)
		if err != nil {
			b.Fatal(err)
		}
		run.largestKubectlMiB = max(run.largestKubectlMiB, p.PeakRSSMiB)
	}
	kc(nil, "api-resources", "--api-group", "metal3.io")
	run.largestKubectlMiB = 0

	var out bytes.Buffer
	reqBefore, err := apiRequests(context.Background(), env.Config)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	kc(&out, "get", "bmh", "-A", "-l", candidates, "-o", "json")
	run.get = time.Since(start)
	picks, listed, err := pickPerRack(out.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	run.pick = time.Since(start) - run.get
	for i, r := range roles {
		args := append([]string{"label", "bmh", "-n", namespace}, picks[i]...)
		args = append(args,
			sipv1.ClusterNamespaceLabel+"="+namespace,
			sipv1.ClusterNameLabel+"="+clusterName,
			sipv1.NodeTypeLabel+"="+string(r.role))
		kc(nil, args...)
	}
	run.wall = time.Since(start)
	run.label = run.wall - run.get - run.pick
	if reqAfter, err := apiRequests(context.Background(), env.Config); err == nil {
		run.requests = requestDelta(reqBefore, reqAfter)
	}
	run.listed, run.listedMiB = listed, float64(out.Len())/(1<<20)
	return run
}

// pickPerRack reads `kubectl get -o json` and picks, role by role, the
// first hosts in name order whose flavor matches and whose rack has no
// pick yet: the same choice schedule.Schedule makes. All hosts are in one
// namespace, so one `kubectl label -n` per role labels them.
func pickPerRack(list []byte) ([][]string, int, error) {
	var l struct {
		Items []struct {
			Metadata struct {
				Namespace, Name string
				Labels          map[string]string
			}
		}
	}
	if err := json.Unmarshal(list, &l); err != nil {
		return nil, 0, fmt.Errorf("kubectl get: %w", err)
	}
	sort.Slice(l.Items, func(i, j int) bool {
		a, b := l.Items[i].Metadata, l.Items[j].Metadata
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	used := map[string]bool{}
	picks := make([][]string, len(roles))
	for i, r := range roles {
		for _, it := range l.Items {
			if len(picks[i]) == r.count {
				break
			}
			m := it.Metadata
			rack, ok := m.Labels[rackLabel]
			if m.Labels[flavorLabel] != r.flavor || !ok || used[rack] {
				continue
			}
			if m.Namespace != namespace {
				return nil, 0, fmt.Errorf("host %s/%s is outside namespace %s", m.Namespace, m.Name, namespace)
			}
			used[rack] = true
			picks[i] = append(picks[i], m.Name)
		}
		if len(picks[i]) != r.count {
			return nil, 0, fmt.Errorf("%s: %d hosts found in distinct racks, want %d", r.role, len(picks[i]), r.count)
		}
	}
	return picks, len(l.Items), nil
}
