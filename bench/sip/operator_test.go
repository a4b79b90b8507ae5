package sip

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/bench/internal/harness"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// operatorTimeout bounds the operator's start-up and its run to Ready.
const operatorTimeout = 10 * time.Minute

// operatorArgs are the operator's flags. --zap-log-level=5 makes
// controller-runtime log when each reconcile starts and ends (a few lines
// per reconcile); the resync is longer than a run, so no reconcile comes
// from it.
var operatorArgs = []string{
	"--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
	"--resync=10m", "--zap-log-level=5", "--zap-time-encoding=rfc3339nano",
}

// span is one reconcile as the operator logged it; requeued is set when
// it asked to run again at once (Requeue: true, as after a conflict).
type span struct {
	start, end time.Time
	requeued   bool
}

func (s span) duration() time.Duration { return s.end.Sub(s.start) }

// opLog follows the operator's JSON log: when its controller's workers
// started (its caches synced) and each reconcile's start and end.
type opLog struct {
	mu      sync.Mutex
	workers chan struct{}
	open    map[string]time.Time // reconcileID → start
	done    []span
	errs    []string
	tail    []string
}

func followLog(r io.Reader) *opLog {
	l := &opLog{workers: make(chan struct{}), open: map[string]time.Time{}}
	go func() {
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for s.Scan() {
			l.line(s.Text())
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return l
}

func (l *opLog) line(text string) {
	var e struct {
		Level, TS, Msg, Controller, ReconcileID string
		Error                                   string `json:"error"`
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tail = append(l.tail, text)
	if len(l.tail) > 40 {
		l.tail = l.tail[1:]
	}
	if json.Unmarshal([]byte(text), &e) != nil {
		return
	}
	ts, _ := time.Parse(time.RFC3339Nano, e.TS)
	switch {
	case e.Msg == "Starting workers" && e.Controller == "sipcluster":
		select {
		case <-l.workers:
		default:
			close(l.workers)
		}
	case e.Msg == "Reconciling":
		l.open[e.ReconcileID] = ts
	case strings.HasPrefix(e.Msg, "Reconcile done") || e.Msg == "Reconcile successful":
		if start, ok := l.open[e.ReconcileID]; ok {
			l.done = append(l.done, span{start: start, end: ts, requeued: e.Msg == "Reconcile done, requeueing"})
			delete(l.open, e.ReconcileID)
		}
	case e.Level == "error":
		l.errs = append(l.errs, e.Msg+": "+e.Error)
	}
}

// reconciles returns the finished reconciles and how many are under way.
func (l *opLog) reconciles() ([]span, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]span(nil), l.done...), len(l.open)
}

// errors returns the error lines logged so far.
func (l *opLog) errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errs...)
}

func (l *opLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.tail, "\n")
}

// operatorRun is what one run of ours measured.
type operatorRun struct {
	// wall is from creating the SIPCluster to seeing it Ready.
	wall time.Duration
	// startup is from starting the process to its workers starting
	// (caches synced), before the clock.
	startup time.Duration
	// first is the first reconcile after the create (the one that labels
	// the hosts and sets Ready), queued is how long after the create it
	// started, and next is the one after it, which finds the hosts
	// labelled (zero when none came within 15 s).
	first, next span
	queued      time.Duration
	// untilReady is how many reconciles had started when Ready was seen,
	// reconciles how many ran in all until the operator was idle, and
	// requeued how many of those asked to run again at once.
	untilReady, reconciles, requeued int
	peakRSSMiB                       float64
	cpuSeconds                       float64
	errors                           []string
	hosts                            map[string]map[string]string
	// requests are what the API server served from the create to the end
	// of the reconcile after Ready.
	requests string
}

// runOperator starts sip-operator on env and waits for its caches to sync,
// then creates the SIPCluster and times it until Ready, seen by a watch
// opened before the create. Its peak RSS is VmHWM, read before it is
// stopped.
func runOperator(b *testing.B, env *testenv.Env, c client.WithWatch, bin string) operatorRun {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), operatorTimeout)
	defer cancel()
	op := exec.CommandContext(b.Context(), bin, append([]string{"--kubeconfig", env.Kubeconfig}, operatorArgs...)...)
	// Through an io.Pipe, Wait returns once the log is all copied; closing
	// the pipe then ends the reader.
	stderr, logw := io.Pipe()
	op.Stderr = logw
	defer logw.Close() //nolint:errcheck
	log := followLog(stderr)
	launched := time.Now()
	if err := op.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if op.ProcessState == nil {
			_ = op.Process.Kill()
			_ = op.Wait()
		}
	}()
	select {
	case <-log.workers:
	case <-ctx.Done():
		b.Fatalf("sip-operator's workers did not start in %s:\n%s", operatorTimeout, log)
	}
	run := operatorRun{startup: time.Since(launched)}

	w, err := c.Watch(ctx, &sipv1.SIPClusterList{}, client.InNamespace(namespace))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	reqBefore, err := apiRequests(ctx, env.Config)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := c.Create(ctx, cluster()); err != nil {
		b.Fatal(err)
	}
	if err := waitReady(ctx, w); err != nil {
		b.Fatalf("SIPCluster %s/%s: %v\noperator log:\n%s", namespace, clusterName, err, log)
	}
	run.wall = time.Since(start)
	ready := time.Now()

	// The label patches and the finalizer woke the cluster again: wait for
	// that reconcile, which finds the hosts labelled, before the bench
	// reads anything from the API server.
	var spans []span
	_ = waitFor(ctx, 15*time.Second, func() bool {
		var running int
		spans, running = log.reconciles()
		return running == 0 && len(spans) >= 2 && !spans[len(spans)-1].requeued
	})
	if reqAfter, err := apiRequests(ctx, env.Config); err == nil {
		run.requests = requestDelta(reqBefore, reqAfter)
	}
	if run.hosts, err = labelled(ctx, c); err == nil {
		err = checkLabelled(run.hosts)
	}
	if err != nil {
		b.Fatalf("Ready, but: %v", err)
	}
	if len(spans) == 0 {
		b.Fatalf("Ready, but the operator logged no reconcile:\n%s", log)
	}
	// The first reconcile after the create is the one that labels the
	// hosts and sets Ready (the finalizer patch comes first in it).
	run.first = spans[0]
	if len(spans) > 1 {
		run.next = spans[1]
	}
	for _, s := range spans {
		if s.start.Before(ready) {
			run.untilReady++
		}
		if s.requeued {
			run.requeued++
		}
	}
	run.reconciles = len(spans)
	run.queued = run.first.start.Sub(start)
	run.errors = log.errors()

	if run.peakRSSMiB, err = harness.VmHWMMiB(op.Process.Pid); err != nil {
		b.Fatal(err)
	}
	_ = op.Process.Signal(syscall.SIGTERM)
	_ = op.Wait()
	run.cpuSeconds = (op.ProcessState.UserTime() + op.ProcessState.SystemTime()).Seconds()
	return run
}

// waitReady reads the watch until the SIPCluster is Ready=True, and fails
// on any other final reason.
func waitReady(ctx context.Context, w watch.Interface) error {
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not Ready: %w", ctx.Err())
		case ev, ok := <-w.ResultChan():
			if !ok {
				return errors.New("the watch ended before it was Ready")
			}
			sc, ok := ev.Object.(*sipv1.SIPCluster)
			if !ok || sc.Name != clusterName {
				continue
			}
			cond := apimeta.FindStatusCondition(sc.Status.Conditions, sipv1.ConditionTypeReady)
			switch {
			case cond == nil:
			case cond.Status == metav1.ConditionTrue && cond.Reason == sipv1.ReasonTypeReconciliationSucceeded:
				return nil
			case cond.Reason != sipv1.ReasonTypeProgressing:
				return fmt.Errorf("Ready %s, %s: %s", cond.Status, cond.Reason, cond.Message)
			}
		}
	}
}

// waitFor polls cond every 20 ms for up to d.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
