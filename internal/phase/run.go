package phase

import (
	"context"
	"fmt"
	"slices"
	"sync"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/phase/executor"
)

// Run checks a phase and runs its executor; progress goes to opts.Events.
func (s *Site) Run(ctx context.Context, p *Phase, opts executor.RunOptions) error {
	if err := s.CheckPhase(ctx, p); err != nil {
		return fmt.Errorf("phase %q cannot run: %w", p.Name(), err)
	}
	ex, err := s.Executor(p)
	if err != nil {
		return err
	}
	return ex.Run(ctx, opts)
}

// SkipBefore marks, by index, the steps before resumeFrom (none when it
// is empty). By index: a plan without dependsOn may run a phase twice.
func SkipBefore(steps []v1.PhaseStep, resumeFrom, plan string) ([]bool, error) {
	skip := make([]bool, len(steps))
	if resumeFrom == "" {
		return skip, nil
	}
	i := slices.IndexFunc(steps, func(s v1.PhaseStep) bool { return s.Name == resumeFrom })
	if i < 0 {
		return nil, fmt.Errorf("--resume-from %q is not a phase of plan %q", resumeFrom, plan)
	}
	for j := range steps[:i] {
		skip[j] = true
	}
	return skip, nil
}

// RunWaves runs each wave's steps (indexes into the plan's steps, from
// OrderSteps) at once, all but the skipped ones, and runs no wave after
// one in which a step failed (run returned false).
func RunWaves(waves [][]int, skip []bool, run func(i int) bool) {
	for _, wave := range waves {
		var wg sync.WaitGroup
		var mu sync.Mutex
		failed := false
		for _, i := range wave {
			if skip[i] {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if !run(i) {
					mu.Lock()
					failed = true
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if failed {
			return
		}
	}
}
