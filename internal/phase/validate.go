package phase

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// Problems collects every problem found, each naming the document and field.
type Problems []string

func (p Problems) Error() string {
	if len(p) == 1 {
		return p[0]
	}
	return fmt.Sprintf("%d problems:\n  - %s", len(p), strings.Join(p, "\n  - "))
}

func (p *Problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p Problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return p
}

// CheckPhase checks that a phase can run: its executorRef resolves to a
// document an executor handles, its cluster is in the ClusterMap, its entry
// point builds, and its executor accepts its configuration.
func (s *Site) CheckPhase(ctx context.Context, p *Phase) error {
	var probs Problems
	s.checkPhaseRefs(p, &probs)
	if len(probs) > 0 {
		return probs.err()
	}
	ex, err := s.Executor(p)
	if err != nil {
		probs.add("%v", err)
		return probs.err()
	}
	if err := ex.Validate(ctx); err != nil {
		probs.add("phase %s: %v", p.Doc.ID(), err)
	}
	return probs.err()
}

// checkPhaseRefs checks what a phase refers to, without building anything.
func (s *Site) checkPhaseRefs(p *Phase, probs *Problems) {
	doc, err := s.ExecutorDocument(p)
	if err != nil {
		probs.add("%v", err)
	} else if !executor.IsKnown(doc.GroupVersionKind()) {
		probs.add("phase %s: config.executorRef names %s, whose kind no executor handles (known: %s)",
			p.Doc.ID(), doc.ID(), strings.Join(executor.Known(), ", "))
	}
	cm, err := s.ClusterMap()
	if err != nil {
		probs.add("%v", err)
		return
	}
	if name := p.ClusterName(); name != "" {
		switch {
		case cm == nil:
			probs.add("phase %s: metadata.clusterName %q, but the phase bundle has no ClusterMap", p.Doc.ID(), name)
		case cm.Map[name] == nil:
			probs.add("phase %s: metadata.clusterName %q is not in ClusterMap %s (clusters: %s)",
				p.Doc.ID(), name, cm.Name, strings.Join(sortedClusterNames(cm), ", "))
		}
	}
}

func sortedClusterNames(cm *v1.ClusterMap) []string {
	names := make([]string, 0, len(cm.Map))
	for n := range cm.Map {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CheckClusterMap checks that every parent exists and parents form no cycle.
func CheckClusterMap(cm *v1.ClusterMap) error {
	if cm == nil {
		return nil
	}
	var probs Problems
	for _, name := range sortedClusterNames(cm) {
		c := cm.Map[name]
		if c == nil {
			continue
		}
		if c.Parent != "" && cm.Map[c.Parent] == nil {
			probs.add("ClusterMap/%s: map.%s.parent %q is not in the map", cm.Name, name, c.Parent)
		}
		if c.DynamicKubeConfig && c.Parent == "" {
			probs.add("ClusterMap/%s: map.%s.dynamicKubeConf reads the kubeconfig Secret from the parent cluster, but map.%s has no parent", cm.Name, name, name)
		}
		for i, src := range c.Sources {
			switch src.Type {
			case v1.KubeconfigSourceTypeFilesystem, v1.KubeconfigSourceTypeBundle:
			case v1.KubeconfigSourceTypeClusterAPI:
				if c.Parent == "" {
					probs.add("ClusterMap/%s: map.%s.kubeconfigSources[%d] is clusterAPI, which needs a parent", cm.Name, name, i)
				}
				if t := src.ClusterAPI.Timeout; t != "" {
					if d, err := time.ParseDuration(t); err != nil || d <= 0 {
						probs.add("ClusterMap/%s: map.%s.kubeconfigSources[%d].clusterAPI.timeout %q is not a duration (e.g. 30s)", cm.Name, name, i, t)
					}
				}
			default:
				probs.add("ClusterMap/%s: map.%s.kubeconfigSources[%d].type %q is not one of filesystem, bundle, clusterAPI", cm.Name, name, i, src.Type)
			}
		}
		seen := map[string]bool{name: true}
		for p := c.Parent; p != ""; {
			if seen[p] {
				probs.add("ClusterMap/%s: map.%s: parents form a cycle through %q", cm.Name, name, p)
				break
			}
			seen[p] = true
			next := cm.Map[p]
			if next == nil {
				break
			}
			p = next.Parent
		}
	}
	return probs.err()
}

// maxParallelChecks bounds how many phases CheckPlan checks (and builds) at once.
const maxParallelChecks = 8

// CheckPlan checks a plan: it has phases, each exists once, each can run
// (see CheckPhase), and dependsOn names steps of the plan without a cycle.
func (s *Site) CheckPlan(ctx context.Context, plan *Plan) error {
	var probs Problems
	steps := plan.API.AllPhases()
	id := plan.Doc.ID()
	if len(steps) == 0 {
		probs.add("plan %s: phases is empty", id)
	}
	cm, err := s.ClusterMap()
	if err != nil {
		probs.add("%v", err)
	} else if err := CheckClusterMap(cm); err != nil {
		var ps Problems
		if errors.As(err, &ps) {
			probs = append(probs, ps...)
		} else {
			probs.add("%v", err)
		}
	}
	seen := map[string]int{}
	// A plan without dependsOn runs in order and may run a phase again, as
	// upstream's do (kubectl-get-pods-target after each step); with
	// dependsOn each phase is a node of the graph, named once.
	sequential := !slices.ContainsFunc(steps, func(s v1.PhaseStep) bool { return len(s.DependsOn) > 0 })
	// Phases are checked in parallel (each builds its bundles), their
	// problems reported in plan order.
	found := make([]Problems, len(steps))
	var wg sync.WaitGroup
	limit := make(chan struct{}, maxParallelChecks)
	for i, st := range steps {
		if st.Name == "" {
			probs.add("plan %s: phases[%d].name is empty", id, i)
			continue
		}
		if j, dup := seen[st.Name]; dup {
			if !sequential {
				probs.add("plan %s: phases[%d] repeats phase %q (first at phases[%d]); a plan with dependsOn names each phase once", id, i, st.Name, j)
			}
			continue
		}
		seen[st.Name] = i
		p, err := s.Phase(st.Name)
		if err != nil {
			probs.add("plan %s: phases[%d]: %v", id, i, err)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			limit <- struct{}{}
			defer func() { <-limit }()
			if err := s.CheckPhase(ctx, p); err != nil {
				var ps Problems
				if !errors.As(err, &ps) {
					ps = Problems{err.Error()}
				}
				found[i] = ps
			}
		}()
	}
	wg.Wait()
	for _, ps := range found {
		probs = append(probs, ps...)
	}
	if _, err := Order(steps); err != nil {
		probs.add("plan %s: %v", id, err)
	}
	return probs.err()
}

// Order groups a plan's steps into waves that may run in parallel: every
// step runs after the steps it depends on. Without any dependsOn the plan
// runs strictly in order, one step per wave, as upstream does (a phase
// named twice runs twice).
func Order(steps []v1.PhaseStep) ([][]string, error) {
	idx, err := OrderSteps(steps)
	if err != nil {
		return nil, err
	}
	waves := make([][]string, len(idx))
	for i, w := range idx {
		for _, j := range w {
			waves[i] = append(waves[i], steps[j].Name)
		}
	}
	return waves, nil
}

// OrderSteps is Order by index into steps.
func OrderSteps(steps []v1.PhaseStep) ([][]int, error) {
	anyDeps := slices.ContainsFunc(steps, func(s v1.PhaseStep) bool { return len(s.DependsOn) > 0 })
	if !anyDeps {
		waves := make([][]int, 0, len(steps))
		for i := range steps {
			waves = append(waves, []int{i})
		}
		return waves, nil
	}
	index := map[string]int{}
	for i, s := range steps {
		if j, dup := index[s.Name]; dup {
			return nil, fmt.Errorf("phases[%d] repeats phase %q (first at phases[%d]); a plan with dependsOn names each phase once", i, s.Name, j)
		}
		index[s.Name] = i
	}
	var probs Problems
	for i, s := range steps {
		for _, d := range s.DependsOn {
			if d == s.Name {
				probs.add("phases[%d] (%s) depends on itself", i, s.Name)
			} else if _, ok := index[d]; !ok {
				probs.add("phases[%d] (%s).dependsOn names %q, which is not a phase of this plan", i, s.Name, d)
			}
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	if cycle := findCycle(steps, index); cycle != nil {
		return nil, fmt.Errorf("dependsOn forms a cycle: %s", strings.Join(cycle, " -> "))
	}
	done := map[string]bool{}
	var waves [][]int
	for len(done) < len(steps) {
		var wave []int
		for i, s := range steps {
			if done[s.Name] {
				continue
			}
			ready := true
			for _, d := range s.DependsOn {
				if !done[d] {
					ready = false
					break
				}
			}
			if ready {
				wave = append(wave, i)
			}
		}
		for _, i := range wave {
			done[steps[i].Name] = true
		}
		waves = append(waves, wave)
	}
	return waves, nil
}

func findCycle(steps []v1.PhaseStep, index map[string]int) []string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(steps))
	var stack []string
	var cycle []string
	var visit func(i int) bool
	visit = func(i int) bool {
		color[i] = grey
		stack = append(stack, steps[i].Name)
		for _, d := range steps[i].DependsOn {
			j := index[d]
			switch color[j] {
			case grey:
				start := slices.Index(stack, d)
				cycle = append(slices.Clone(stack[start:]), d)
				return true
			case white:
				if visit(j) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return false
	}
	for i := range steps {
		if color[i] == white && visit(i) {
			return cycle
		}
	}
	return nil
}
