package dashboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/phase"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// statusEvery is how often every phase's status is read again; a run's
// end and a cluster's change of reachability read it at once too.
const statusEvery = 30 * time.Second

// statusTimeout bounds reading one phase's status.
const statusTimeout = 20 * time.Second

// phaseStates keeps the last status read of every phase of the site.
type phaseStates struct {
	site *phase.Site
	runs *runs
	hub  *hub

	kick chan struct{}

	mu     sync.RWMutex
	status map[string]phaseStatus
	moves  []move
}

type phaseStatus struct {
	st  *executor.Status
	err error
	at  time.Time
}

// move is a clusterctl move phase: the namespaces it moves into its
// cluster from that cluster's parent.
type move struct {
	phase, to, from string
	namespaces      []string
}

func newPhaseStates(site *phase.Site, r *runs, h *hub) *phaseStates {
	p := &phaseStates{site: site, runs: r, hub: h, kick: make(chan struct{}, 1), status: map[string]phaseStatus{}}
	p.moves = findMoves(site)
	return p
}

// findMoves reads the site's clusterctl move phases.
func findMoves(site *phase.Site) []move {
	phases, _ := site.Phases()
	cm, _ := site.ClusterMap()
	var out []move
	for _, p := range phases {
		if p.API.Config.ExecutorRef == nil || p.API.Config.ExecutorRef.Kind != "Clusterctl" {
			continue
		}
		d, err := site.ExecutorDocument(p)
		if err != nil {
			continue
		}
		var c v1.Clusterctl
		if d.Decode(&c) != nil || c.Action != v1.ActionMove {
			continue
		}
		m := move{phase: p.Name(), to: p.ClusterName()}
		if cm != nil && cm.Map[m.to] != nil {
			m.from = cm.Map[m.to].Parent
		}
		if c.MoveOptions != nil {
			if c.MoveOptions.Namespace != "" {
				m.namespaces = append(m.namespaces, c.MoveOptions.Namespace)
			}
			m.namespaces = append(m.namespaces, c.MoveOptions.Namespaces...)
		}
		out = append(out, m)
	}
	return out
}

// refresh asks for every status to be read again soon.
func (p *phaseStates) refresh() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// start reads every phase's status now, every statusEvery, and when
// refresh asks, until ctx ends.
func (p *phaseStates) start(ctx context.Context) {
	go func() {
		t := time.NewTicker(statusEvery)
		defer t.Stop()
		for {
			p.readAll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-p.kick:
			}
		}
	}()
}

// readAll reads the status of every phase, four at a time.
func (p *phaseStates) readAll(ctx context.Context) {
	phases, err := p.site.Phases()
	if err != nil {
		return
	}
	if found, _ := p.runs.reload(); found {
		p.hub.notify(TopicRuns, TopicPlans, TopicPhases, TopicOverview)
	}
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	changed := false
	var mu sync.Mutex
	for _, ph := range phases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			st, err := p.read(ctx, ph)
			if ctx.Err() != nil {
				return
			}
			p.mu.Lock()
			old := p.status[ph.Name()]
			p.status[ph.Name()] = phaseStatus{st: st, err: err, at: time.Now()}
			p.mu.Unlock()
			if !sameStatus(old, st, err) {
				mu.Lock()
				changed = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if changed {
		p.hub.notify(TopicPlans, TopicPhases, TopicOverview, TopicClusters)
	}
}

func (p *phaseStates) read(ctx context.Context, ph *phase.Phase) (*executor.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	ex, err := p.site.Executor(ph)
	if err != nil {
		return nil, err
	}
	return ex.Status(ctx)
}

func sameStatus(old phaseStatus, st *executor.Status, err error) bool {
	if (old.err == nil) != (err == nil) || (err != nil && old.err.Error() != err.Error()) {
		return false
	}
	if (old.st == nil) != (st == nil) {
		return false
	}
	if st == nil {
		return true
	}
	if old.st.Message != st.Message || len(old.st.Objects) != len(st.Objects) {
		return false
	}
	return reflect.DeepEqual(old.st.Objects, st.Objects)
}

// moved is, per cluster, the namespaces move phases move into it.
func (p *phaseStates) moved() map[string][]MovedNamespace {
	out := map[string][]MovedNamespace{}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, m := range p.moves {
		st := p.status[m.phase].st
		for _, ns := range m.namespaces {
			done := false
			if st != nil {
				for _, o := range st.Objects {
					if o.ID == "Namespace "+ns && o.Ready {
						done = true
					}
				}
			}
			out[m.to] = append(out[m.to], MovedNamespace{Namespace: ns, Phase: m.phase, From: m.from, Done: done})
		}
	}
	return out
}

// movedAway reports whether a move phase has moved a namespace out of a
// cluster: its phases' objects are then elsewhere.
func (p *phaseStates) movedAway(cluster string) bool {
	for _, nss := range p.moved() {
		for _, ns := range nss {
			if ns.From == cluster && ns.Done {
				return true
			}
		}
	}
	return false
}

// planPhase is a phase of the site with its state.
func (p *phaseStates) planPhase(name string, dependsOn []string) PlanPhase {
	pp := PlanPhase{Name: name, DependsOn: dependsOn, State: StateUnknown}
	ph, err := p.site.Phase(name)
	if err != nil {
		pp.State, pp.Message = StateFailed, err.Error()
		return pp
	}
	pp.Cluster = ph.ClusterName()
	pp.Executor = phase.ExecutorRefString(ph.API.Config.ExecutorRef)
	pp.LastRun = p.runs.last(name)
	p.mu.RLock()
	ps, read := p.status[name]
	p.mu.RUnlock()
	if ps.st != nil {
		pp.Message = ps.st.Message
		for _, o := range ps.st.Objects {
			pp.Objects++
			if o.Applied {
				pp.Applied++
			}
			if o.Ready {
				pp.Ready++
			}
			if o.Drifted {
				pp.Drifted++
			}
		}
	}
	pp.State = stateOf(pp, ps, read, p.movedAway(pp.Cluster))
	if ps.err != nil && pp.Message == "" {
		pp.Message = ps.err.Error()
	}
	return pp
}

// stateOf is a phase's state: a run going on or failed last says so
// first; then what its status counts.
func stateOf(pp PlanPhase, ps phaseStatus, read, movedAway bool) string {
	last := pp.LastRun
	switch {
	case last != nil && last.Result == RunRunning:
		return StateRunning
	case last != nil && last.Result == RunFailed:
		return StateFailed
	case !read:
		return StateUnknown
	case ps.err != nil:
		return StateUnknown
	case pp.Objects == 0:
		if last != nil && last.Result == RunSucceeded {
			return StateReady
		}
		return StateNotRun
	case pp.Applied == 0:
		if movedAway {
			return StateMoved
		}
		return StateNotRun
	case pp.Drifted > 0:
		return StateDrifted
	case pp.Ready == pp.Objects:
		return StateReady
	case pp.Applied < pp.Objects && movedAway:
		return StateMoved
	}
	return StateApplied
}

// all is every phase of the site with its state.
func (p *phaseStates) all() []PlanPhase {
	phases, _ := p.site.Phases()
	out := make([]PlanPhase, 0, len(phases))
	for _, ph := range phases {
		out = append(out, p.planPhase(ph.Name(), nil))
	}
	return out
}

func (p *phaseStates) plan(name string) (Plan, error) {
	pl, err := p.site.Plan(name)
	if err != nil {
		return Plan{}, err
	}
	steps := pl.API.AllPhases()
	out := Plan{Name: pl.API.Name, Description: pl.API.Description, Phases: make([]PlanPhase, 0, len(steps))}
	for _, s := range steps {
		out.Phases = append(out.Phases, p.planPhase(s.Name, s.DependsOn))
	}
	if out.Waves, err = phase.OrderSteps(steps); err != nil {
		return out, err
	}
	return out, nil
}

func (s *Server) plans(w http.ResponseWriter, r *http.Request) {
	pls, err := s.opts.Site.Plans()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	out := make([]Plan, 0, len(pls))
	for _, pl := range pls {
		p, err := s.phases.plan(pl.API.Name)
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		out = append(out, p)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	p, err := s.phases.plan(r.PathValue("name"))
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// phase is GET /api/phases/{name}: the phase, its executor document, its
// bundle's files, what it renders (Secrets redacted) and each object
// against live.
func (s *Server) phase(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	ph, err := s.opts.Site.Phase(name)
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	d := PhaseDetail{PlanPhase: s.phases.planPhase(name, nil), ObjectList: []PhaseObject{}}
	if doc, err := s.opts.Site.ExecutorDocument(ph); err == nil {
		if b, err := doc.YAML(); err == nil {
			d.ExecutorDocument = string(b)
		}
	}
	base, _ := s.opts.Site.Site.TargetPath()
	if path, err := s.opts.Site.ExecutorBundlePath(ph); err == nil && path != "" {
		d.BundlePath = relTo(base, path)
		if t, err := phase.Tree(path, base); err == nil {
			d.Sources = readSources(base, flattenTree(t, nil))
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), statusTimeout)
	defer cancel()
	if ex, err := s.opts.Site.Executor(ph); err != nil {
		d.RenderError = err.Error()
	} else {
		var buf bytes.Buffer
		if err := ex.Render(ctx, &buf, executor.RenderOptions{}); err != nil {
			d.RenderError = err.Error()
		} else if red, err := redactSecrets(buf.Bytes()); err != nil {
			d.RenderError = err.Error()
		} else {
			d.Rendered = string(red)
		}
	}
	s.phases.mu.RLock()
	ps := s.phases.status[name]
	s.phases.mu.RUnlock()
	if ps.st != nil {
		for _, o := range ps.st.Objects {
			d.ObjectList = append(d.ObjectList, PhaseObject(o))
		}
	}
	writeJSON(w, http.StatusOK, d)
}

func relTo(base, p string) string {
	if base == "" {
		return p
	}
	if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func flattenTree(n *phase.TreeNode, out []SourceFile) []SourceFile {
	out = append(out, SourceFile{Kind: n.Kind, Path: n.Path})
	for _, c := range n.Children {
		out = flattenTree(c, out)
	}
	return out
}

// Bounds of the sources shown.
const (
	maxSourceBytes = 256 << 10
	maxSources     = 200
)

// readSources adds the text of each file: a kustomization's file for a
// directory, YAML only, only below the site's target path (its real path:
// a symbolic link out of it is not followed), every Secret redacted.
func readSources(base string, files []SourceFile) []SourceFile {
	root, err := filepath.EvalSymlinks(base)
	if err != nil {
		return files
	}
	if len(files) > maxSources {
		files = files[:maxSources]
	}
	for i := range files {
		f := &files[i]
		p := filepath.Join(base, f.Path)
		if filepath.IsAbs(f.Path) {
			p = f.Path
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // missing, remote: the tree says so
		}
		if st, err := os.Stat(real); err == nil && st.IsDir() {
			real = filepath.Join(real, "kustomization.yaml")
		}
		if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, "../") {
			f.Note = "outside the site: not shown"
			continue
		}
		st, err := os.Stat(real)
		switch {
		case err != nil:
			continue
		case st.Size() > maxSourceBytes:
			f.Note = fmt.Sprintf("%d bytes: larger than %d, not shown", st.Size(), maxSourceBytes)
			continue
		}
		b, err := os.ReadFile(real)
		if err != nil {
			f.Note = err.Error()
			continue
		}
		red, err := redactSecrets(b)
		if err != nil {
			f.Note = "not YAML: not shown"
			continue
		}
		f.Text = string(red)
	}
	return files
}

// redactSecrets replaces the values of every Secret's data and
// stringData in a YAML stream with REDACTED, keeping the keys.
func redactSecrets(stream []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(stream))
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("rendered documents: %w", err)
		}
		if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
			m := doc.Content[0]
			if mapValue(m, "kind") == "Secret" {
				for _, field := range []string{"data", "stringData"} {
					if v := mapNode(m, field); v != nil && v.Kind == yaml.MappingNode {
						for i := 1; i < len(v.Content); i += 2 {
							v.Content[i] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "REDACTED"}
						}
					}
				}
			}
		}
		if err := enc.Encode(&doc); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func mapNode(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func mapValue(m *yaml.Node, key string) string {
	if n := mapNode(m, key); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}
