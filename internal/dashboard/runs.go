package dashboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/airshipit/airship-go/internal/phase"
	"github.com/airshipit/airship-go/internal/phase/executor"
	"github.com/airshipit/airship-go/internal/phase/runlog"
	"github.com/airshipit/airship-go/internal/redact"
)

// Run results.
const (
	RunRunning   = "running"
	RunSucceeded = "succeeded"
	RunFailed    = "failed"
)

// maxRunEvents bounds the progress lines kept per run.
const maxRunEvents = 500

// maxRuns bounds the runs kept in memory (the oldest go first).
const maxRuns = 200

// runs keeps the runs started here, and the last run of each phase read
// back from the run log, which every run is appended to when it ends.
type runs struct {
	path string
	hub  *hub
	now  func() time.Time

	mu   sync.Mutex
	list []*Run // oldest first
	// lastOf is the last run of each phase.
	lastOf map[string]*Run
	// active is a run going on, by the phases it runs: one run at a time
	// per phase.
	active map[string]string
	// known are the IDs of the runs in list or written by this dashboard;
	// offset is how far the run log has been read.
	known  map[string]bool
	offset int64
}

func newRuns(path string, h *hub, now func() time.Time) (*runs, error) {
	r := &runs{path: path, hub: h, now: now, lastOf: map[string]*Run{}, active: map[string]string{}, known: map[string]bool{}}
	if _, err := r.reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// reload reads the runs appended to the run log since it last read it:
// those of `airshipctl phase run` and `plan run` (and of another
// dashboard). A run already known (this dashboard's own) is skipped, and
// so is a line cut short by a writer still writing it. It reports whether
// it found any.
func (r *runs) reload() (bool, error) {
	if r.path == "" {
		return false, nil
	}
	f, err := os.Open(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("run log: %w", err)
	}
	defer func() { _ = f.Close() }() // read only
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := f.Seek(r.offset, io.SeekStart); err != nil {
		return false, fmt.Errorf("run log: %w", err)
	}
	rd := bufio.NewReaderSize(f, 64<<10)
	found := false
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			// io.EOF: a line without its newline is read again next time.
			break
		}
		r.offset += int64(len(line))
		var run Run
		if err := json.Unmarshal(line, &run); err != nil {
			return found, fmt.Errorf("run log %s at byte %d: %w", r.path, r.offset-int64(len(line)), err)
		}
		if r.known[run.ID] {
			continue
		}
		r.known[run.ID] = true
		found = true
		if run.Kind == "phase" && r.active[run.Name] == "" {
			r.lastOf[run.Name] = &run
		}
		r.list = append(r.list, &run)
	}
	if len(r.list) > maxRuns {
		r.list = r.list[len(r.list)-maxRuns:]
	}
	return found, nil
}

// last is a copy of the last run of a phase, without its events.
func (r *runs) last(phaseName string) *Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	run := r.lastOf[phaseName]
	if run == nil {
		return nil
	}
	c := r.summary(run)
	return &c
}

func (r *runs) summary(run *Run) Run {
	c := *run
	c.Events = nil
	if c.End.IsZero() {
		c.Seconds = r.now().Sub(c.Start).Seconds()
	}
	return c
}

func (r *runs) get(id string) (Run, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, run := range r.list {
		if run.ID == id {
			c := r.summary(run)
			c.Events = slices.Clone(run.Events)
			return c, true
		}
	}
	return Run{}, false
}

// all is every run kept, newest first, without events.
func (r *runs) all() []Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Run, 0, len(r.list))
	for i := len(r.list) - 1; i >= 0; i-- {
		out = append(out, r.summary(r.list[i]))
	}
	return out
}

func (r *runs) activity() []Activity {
	var out []Activity
	for _, run := range r.all() {
		a := Activity{Time: run.Start, Type: "Run", Object: run.Kind + "/" + run.Name, Reason: run.Result, Message: run.Message}
		if !run.End.IsZero() {
			a.Time = run.End
		}
		out = append(out, a)
	}
	return out
}

// begin records a new run of the named phases; it fails when one of them
// is running already.
func (r *runs) begin(kind, name, by string, phases []string) (*Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range phases {
		if id, busy := r.active[p]; busy {
			return nil, fmt.Errorf("phase %q is running already (run %s)", p, id)
		}
	}
	run := &Run{Record: runlog.Record{ID: newID(), Kind: kind, Name: name, Start: r.now(), Result: RunRunning, By: by}}
	r.known[run.ID] = true
	for _, p := range phases {
		r.active[p] = run.ID
	}
	r.list = append(r.list, run)
	if len(r.list) > maxRuns {
		r.list = r.list[1:]
	}
	if kind == "phase" {
		r.lastOf[name] = run
	}
	r.hub.notify(TopicRuns, TopicPlans, TopicPhases, TopicOverview)
	return run, nil
}

// phaseStarted marks a phase of a plan run as running.
func (r *runs) phaseStarted(run *Run, name string) *Run {
	pr := &Run{Record: runlog.Record{ID: run.ID + "-" + name, Kind: "phase", Name: name, Start: r.now(), Result: RunRunning, By: run.By}}
	r.mu.Lock()
	r.known[pr.ID] = true
	r.lastOf[name] = pr
	r.mu.Unlock()
	r.hub.notify(TopicRuns, TopicPlans, TopicPhases, TopicOverview)
	return pr
}

// event appends a progress line to a run and sends it to the browsers.
func (r *runs) event(run *Run, ev RunEvent) {
	ev.Message = redact.Text(ev.Message)
	r.mu.Lock()
	run.Events = append(run.Events, ev)
	if len(run.Events) > maxRunEvents {
		run.Events = run.Events[len(run.Events)-maxRunEvents:]
	}
	r.mu.Unlock()
	r.hub.runEvent(run.ID, ev)
}

// end records a run's result and appends it to the run log.
func (r *runs) end(run *Run, err error, phases []string) {
	r.mu.Lock()
	run.End = r.now()
	run.Seconds = run.End.Sub(run.Start).Seconds()
	run.Result, run.Message = RunSucceeded, ""
	if err != nil {
		run.Result, run.Message = RunFailed, redact.Text(err.Error())
	}
	for _, p := range phases {
		if r.active[p] == run.ID {
			delete(r.active, p)
		}
	}
	rec := run.Record
	r.mu.Unlock()
	if r.path != "" {
		if err := runlog.Append(r.path, rec); err != nil {
			r.event(run, RunEvent{Time: r.now(), Type: "Warning", Message: "run log: " + err.Error()})
		}
	}
	r.hub.notify(TopicRuns, TopicPlans, TopicPhases, TopicOverview)
}

// runPhaseSteps runs one phase as part of run, its events into run.
func (s *Server) runOnePhase(ctx context.Context, run *Run, name string) error {
	p, err := s.opts.Site.Phase(name)
	if err != nil {
		return err
	}
	events := make(chan executor.Event, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events {
			s.runs.event(run, RunEvent{Time: s.opts.Now(), Phase: name, Type: ev.Type, Object: ev.Object, Message: ev.Message})
		}
	}()
	err = s.opts.Site.Run(ctx, p, executor.RunOptions{Events: events})
	close(events)
	<-done
	return err
}

type runRequest struct {
	ResumeFrom string `json:"resumeFrom,omitempty"`
}

// runPhase is POST /api/phases/{name}/run: 202 with the run's ID; the run
// goes on after the request, until it ends or the dashboard stops.
func (s *Server) runPhase(w http.ResponseWriter, r *http.Request, body []byte) {
	name := r.PathValue("name")
	if err := decodeStrict(body, &struct{}{}); err != nil {
		s.refuse(w, r, http.StatusBadRequest, err)
		return
	}
	if _, err := s.opts.Site.Phase(name); err != nil {
		s.refuse(w, r, http.StatusNotFound, err)
		return
	}
	run, err := s.runs.begin("phase", name, s.user(r), []string{name})
	if err != nil {
		s.refuse(w, r, http.StatusConflict, err)
		return
	}
	s.record(r, "run-phase", name, "accepted", "run "+run.ID)
	go func() {
		err := s.runOnePhase(s.ctx, run, name)
		s.runs.end(run, err, []string{name})
		s.phases.refresh()
		s.recordResult(r, "run-phase", name, run, err)
	}()
	writeJSON(w, http.StatusAccepted, ActionAccepted{RunID: run.ID, Message: "phase " + name + " started"})
}

// runPlan is POST /api/plans/{name}/run {"resumeFrom": PHASE}: the plan's
// phases wave by wave, as `airshipctl plan run` runs them.
func (s *Server) runPlan(w http.ResponseWriter, r *http.Request, body []byte) {
	name := r.PathValue("name")
	var req runRequest
	if err := decodeStrict(body, &req); err != nil {
		s.refuse(w, r, http.StatusBadRequest, err)
		return
	}
	pl, err := s.opts.Site.Plan(name)
	if err != nil {
		s.refuse(w, r, http.StatusNotFound, err)
		return
	}
	steps := pl.API.AllPhases()
	waves, err := phase.OrderSteps(steps)
	if err == nil {
		err = s.opts.Site.CheckPlan(r.Context(), pl)
	}
	if err != nil {
		s.refuse(w, r, http.StatusUnprocessableEntity, fmt.Errorf("plan %q is invalid, nothing run: %w", name, err))
		return
	}
	skip, err := phase.SkipBefore(steps, req.ResumeFrom, name)
	if err != nil {
		s.refuse(w, r, http.StatusBadRequest, err)
		return
	}
	var names []string
	for i, st := range steps {
		if !skip[i] {
			names = append(names, st.Name)
		}
	}
	run, err := s.runs.begin("plan", name, s.user(r), names)
	if err != nil {
		s.refuse(w, r, http.StatusConflict, err)
		return
	}
	s.record(r, "run-plan", name, "accepted", "run "+run.ID)
	go func() {
		var mu sync.Mutex
		var failed error
		phase.RunWaves(waves, skip, func(i int) bool {
			pn := steps[i].Name
			pr := s.runs.phaseStarted(run, pn)
			err := s.runOnePhase(s.ctx, run, pn)
			s.runs.end(pr, err, nil)
			if err != nil {
				mu.Lock()
				if failed == nil {
					failed = fmt.Errorf("phase %q failed: %w", pn, err)
				}
				mu.Unlock()
			}
			return err == nil
		})
		s.runs.end(run, failed, names)
		s.phases.refresh()
		s.recordResult(r, "run-plan", name, run, failed)
	}()
	writeJSON(w, http.StatusAccepted, ActionAccepted{RunID: run.ID, Message: "plan " + name + " started"})
}

func (s *Server) runList(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.runs.all())
}

func (s *Server) runGet(w http.ResponseWriter, r *http.Request) {
	run, ok := s.runs.get(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Errorf("run %q not found", r.PathValue("id")))
		return
	}
	writeJSON(w, http.StatusOK, run)
}
