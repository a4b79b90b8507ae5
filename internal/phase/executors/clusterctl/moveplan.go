package clusterctl

import (
	"errors"
	"fmt"

	"github.com/airshipit/airship-go/internal/apply"
)

// sourceNamespace is one namespace of a move as the source cluster holds it.
type sourceNamespace struct {
	name   string
	exists bool
	// movedTo, movingTo and movingPhase are its annotations
	// apply.MovedToAnnotation, apply.MovingToAnnotation and
	// apply.MovingPhaseAnnotation.
	movedTo, movingTo, movingPhase string
}

// moveAction is what a move does with one namespace.
type moveAction int

const (
	// moveSkip: the namespace was moved to the phase's cluster already.
	moveSkip moveAction = iota
	// moveStart: the namespace is the source's own; it is marked being
	// moved with the others, then moved and marked moved.
	moveStart
	// moveResume: a run that stopped marked it being moved to the phase's
	// cluster; what is left of it is moved, then it is marked moved.
	moveResume
)

func (a moveAction) String() string {
	return [...]string{"skip", "start", "resume"}[a]
}

// moveStep is one namespace of a move and what the move does with it.
type moveStep struct {
	ns     string
	action moveAction
}

// planMove decides what the move of phase from cluster from to cluster to
// does with each namespace, in order. A namespace missing from the source,
// or moved or being moved to another cluster, is an error: every one is
// named, and the move does nothing.
func planMove(phase, from, to string, nss []sourceNamespace) ([]moveStep, error) {
	var steps []moveStep
	var errs []error
	for _, n := range nss {
		switch {
		case !n.exists:
			errs = append(errs, fmt.Errorf("phase %q: namespace %q is not on cluster %q: nothing to move from there to %q", phase, n.name, from, to))
		case n.movedTo != "" && n.movedTo != to:
			errs = append(errs, fmt.Errorf("phase %q: namespace %q of cluster %q was moved to cluster %q, not %q (annotation %s on the namespace)",
				phase, n.name, from, n.movedTo, to, apply.MovedToAnnotation))
		case n.movingTo != "" && n.movingTo != to:
			errs = append(errs, fmt.Errorf("phase %q: namespace %q of cluster %q is being moved to cluster %q, not %q (annotation %s on the namespace, set by phase %q): finish that move first",
				phase, n.name, from, n.movingTo, to, apply.MovingToAnnotation, n.movingPhase))
		case n.movedTo == to:
			steps = append(steps, moveStep{ns: n.name, action: moveSkip})
		case n.movingTo == to:
			steps = append(steps, moveStep{ns: n.name, action: moveResume})
		default:
			steps = append(steps, moveStep{ns: n.name, action: moveStart})
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return steps, nil
}
