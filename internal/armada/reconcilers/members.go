package reconcilers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// TargetStateAnnotation is where an ArmadaChartGroup records the target
// state it gives its charts, and an ArmadaManifest the one it gives its
// groups. It takes precedence over the member's spec.target_state, which
// stays as the site's documents wrote it: enabling a member is the
// operator's own state, so re-applying those documents changes nothing and
// shows no drift. The operator owns the annotation. A member that leaves
// its owner's list keeps it, and so the state the owner last gave it (as
// it keeps its owner reference); an owner whose target is uninitialized
// leaves it as it is; deleting the owner deletes its members with it.
const TargetStateAnnotation = "armada.airshipit.org/target-state"

// Reasons shared by groups and manifests.
const (
	ReasonListedTwice        = "ListedTwice"
	ReasonInvalidTargetState = "InvalidTargetState"
)

// effectiveTarget is the target state of a chart or group: its owner's
// TargetStateAnnotation when set, else spec.target_state, else deployed.
// An annotation it cannot read (written by hand) needs a change: callers
// stall with ReasonInvalidTargetState.
func effectiveTarget(o metav1.Object, spec armadav1.TargetState) (armadav1.TargetState, error) {
	if a := o.GetAnnotations()[TargetStateAnnotation]; a != "" {
		switch t := armadav1.TargetState(a); t {
		case armadav1.TargetStateUninitialized, armadav1.TargetStateDeployed, armadav1.TargetStateUninstalled:
			return t, nil
		}
		return "", fmt.Errorf("metadata.annotations[%s]: %q is not one of %s, %s, %s", TargetStateAnnotation, a,
			armadav1.TargetStateUninitialized, armadav1.TargetStateDeployed, armadav1.TargetStateUninstalled)
	}
	if spec == "" {
		return armadav1.TargetStateDeployed, nil
	}
	return spec, nil
}

// ownerStatus points into the status of an ArmadaChartGroup or an
// ArmadaManifest, at the fields the shared reconcile writes.
type ownerStatus struct {
	observedGeneration *int64
	conditions         *[]metav1.Condition
	satisfied          *bool
}

// stepResult is what an owner's own step decided: the kind of outcome and
// the reason and message its conditions carry (for Succeeded, Ready's).
type stepResult struct {
	outcome operatorkit.OutcomeKind
	reason  string
	msg     string
}

// reconcileOwner is the reconcile an ArmadaChartGroup and an ArmadaManifest
// share around their own step: fetch uncached (gone is not an error), leave
// an object being deleted to the garbage collector, run the step, write
// conditions from its outcome, record a Stalled warning and a Satisfied
// event when they change, and patch status once.
func reconcileOwner[O client.Object](ctx context.Context, cl client.Client, api client.Reader, rec recorder.EventRecorder,
	key types.NamespacedName, obj O, status func(O) ownerStatus, step func(context.Context, O) (stepResult, error)) (ctrl.Result, error) {
	if err := reader(api, cl).Get(ctx, key, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	snap := operatorkit.SnapshotStatus(obj)
	res, err := step(ctx, obj)
	if err != nil {
		res = stepResult{operatorkit.Failed, ReasonFailed, err.Error()}
	}
	st, was := status(obj), status(snap.Before().(O))
	*st.observedGeneration = obj.GetGeneration()
	o := operatorkit.Outcome{Kind: res.outcome, Reason: res.reason, Message: res.msg}
	operatorkit.Conditions{List: st.conditions, Generation: obj.GetGeneration()}.SetOutcome(o, res.reason, res.msg, nil, "")
	ev := operatorkit.Events{Recorder: rec}
	ev.OnTransition(res.outcome == operatorkit.Stalled && operatorkit.ConditionChanged(*was.conditions, *st.conditions, armadav1.StalledCondition),
		obj, corev1.EventTypeWarning, res.reason, "Reconcile", res.msg)
	ev.OnTransition(*st.satisfied && !*was.satisfied, obj, corev1.EventTypeNormal, ReasonSatisfied, "Reconcile", res.msg)
	// A step error is returned as it is, so the work queue's backoff
	// retries it; the owners keep no failure count of their own.
	return operatorkit.Settle(ctrl.Result{}, err, snap.Patch(ctx, cl, obj))
}

// memberState is what a member's own controller last recorded about it.
type memberState struct {
	// target is the target state the member's controller acted on for its
	// current generation; "" when its status is older than its spec.
	target armadav1.TargetState
	// reached reports whether it reached target.
	reached bool
	// stalled is the message of a Stalled condition of the current
	// generation: the member needs a spec change.
	stalled string
	// passable reports whether its owner may move past it although it is
	// not satisfied (a failed protected chart with continue_processing).
	passable bool
}

// memberKind describes the members of one owner kind to the code groups and
// manifests share: ArmadaCharts of an ArmadaChartGroup, ArmadaChartGroups of
// an ArmadaManifest.
type memberKind[M client.Object] struct {
	kind      string // "ArmadaChart"
	field     string // the owner's list of members: "spec.chart_group"
	newMember func() M
	report    func(M) memberReport
	// passable, when set, reports whether a member Stalled with cond may be
	// passed by its owner.
	passable func(m M, cond *metav1.Condition) bool
	reasons  memberReasons
}

// memberReport is a member's status as its own controller wrote it.
type memberReport struct {
	observedGeneration int64
	target             armadav1.TargetState
	reached            bool
	conditions         []metav1.Condition
}

// memberReasons are an owner's condition reasons (a member is missing, is
// owned by another object, is stalled, is not satisfied yet) and the reason
// of the event that records an enabling.
type memberReasons struct {
	missing, owned, stalled, pending, enabled string
}

// state reads what a member's controller last recorded, for the member's
// current generation only.
func (k memberKind[M]) state(m M) memberState {
	r := k.report(m)
	if r.observedGeneration != m.GetGeneration() {
		return memberState{}
	}
	s := memberState{target: r.target, reached: r.reached}
	if cond, ok := stalledAt(r.conditions, m.GetGeneration()); ok {
		s.stalled = cond.Message
		s.passable = k.passable != nil && k.passable(m, cond)
	}
	return s
}

// enablement is one pass of an owner over its members.
type enablement struct {
	owner     client.Object
	names     []string
	target    armadav1.TargetState
	sequenced bool
	// annotations are passed down to every member; an empty value removes
	// the key.
	annotations map[string]string
}

// enabled is the summary of a pass.
type enabled[M client.Object] struct {
	stepResult
	// members are the fetched members in list order; nil when one is
	// missing or listed twice.
	members     []M
	satisfied   int32
	unsatisfied []string
	// current is the member the owner waits for or is stalled by.
	current string
}

// satisfied reports whether a member reached target as its own controller
// last recorded for its current generation.
func (s memberState) satisfied(target armadav1.TargetState) bool {
	return s.target == target && s.reached
}

// enable fetches the owner's members in order, takes ownership of them,
// passes annotations down, and enables them (sets TargetStateAnnotation):
// all at once, or when sequenced each once those before it are satisfied
// or passable. A missing, foreign-owned or stalled member stalls the owner
// before anything later is touched.
func (k memberKind[M]) enable(ctx context.Context, cl client.Client, rec recorder.EventRecorder, e enablement) (enabled[M], error) {
	id := idOf(e.owner)
	var out enabled[M]
	members, missing, res, err := k.fetch(ctx, cl, e)
	out.unsatisfied = missing
	if err != nil || res != nil {
		if res != nil {
			out.stepResult = *res
		}
		return out, err
	}
	out.members = members
	if res, err := k.adopt(ctx, cl, e, members); err != nil || res != nil {
		if res != nil {
			out.stepResult = *res
		}
		return out, err
	}
	if e.target == armadav1.TargetStateUninitialized {
		for _, m := range members {
			if s := k.state(m); s.target != "" && s.reached {
				out.satisfied++
			} else {
				out.unsatisfied = append(out.unsatisfied, m.GetName())
			}
		}
		out.stepResult = stepResult{operatorkit.Succeeded, ReasonUninitialized, fmt.Sprintf("%s: target_state is uninitialized; its %ss are left alone", id, k.kind)}
		return out, nil
	}

	var waitingOn []string
	for i, m := range members {
		if err := k.setTarget(ctx, cl, rec, e, i, m); err != nil {
			return out, err
		}
		s := k.state(m)
		if s.satisfied(e.target) {
			out.satisfied++
			continue
		}
		out.unsatisfied = append(out.unsatisfied, m.GetName())
		if s.target == e.target && s.stalled != "" && !s.passable {
			out.current = m.GetName()
			out.stepResult = stepResult{operatorkit.Stalled, k.reasons.stalled, fmt.Sprintf("%s: %s[%d]: %s %s is stalled: %s", id, k.field, i, k.kind, m.GetName(), s.stalled)}
			return out, nil
		}
		if s.target == e.target && s.passable {
			continue
		}
		waitingOn = append(waitingOn, m.GetName())
		if e.sequenced {
			// Later members are not enabled yet.
			for _, rest := range members[i+1:] {
				if k.state(rest).satisfied(e.target) {
					out.satisfied++
				} else {
					out.unsatisfied = append(out.unsatisfied, rest.GetName())
				}
			}
			break
		}
	}
	switch {
	case len(waitingOn) > 0:
		out.current = waitingOn[0]
		out.stepResult = stepResult{operatorkit.Waiting, k.reasons.pending, fmt.Sprintf("%s: waiting for %s %s", id, k.kind, strings.Join(waitingOn, ", "))}
	case len(out.unsatisfied) > 0:
		// Only passable members are left.
		out.stepResult = stepResult{operatorkit.Succeeded, ReasonSucceeded, fmt.Sprintf("%s: done; failed protected %ss left alone: %s", id, k.kind, strings.Join(out.unsatisfied, ", "))}
	default:
		out.stepResult = stepResult{operatorkit.Succeeded, ReasonSucceeded, fmt.Sprintf("%s: all %d %ss satisfied", id, len(members), k.kind)}
	}
	return out, nil
}

// fetch reads every member first, so a missing one (or a name listed
// twice) stalls the owner before any member is touched. It returns the
// names of the missing members too.
func (k memberKind[M]) fetch(ctx context.Context, cl client.Client, e enablement) ([]M, []string, *stepResult, error) {
	id := idOf(e.owner)
	ns := e.owner.GetNamespace()
	members := make([]M, len(e.names))
	seen := map[string]int{}
	var missing, problems []string
	for i, name := range e.names {
		if j, dup := seen[name]; dup {
			return nil, nil, &stepResult{operatorkit.Stalled, ReasonListedTwice, fmt.Sprintf("%s: %s[%d]: %q is listed twice (also at [%d])", id, k.field, i, name, j)}, nil
		}
		seen[name] = i
		m := k.newMember()
		if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
			if apierrors.IsNotFound(err) {
				missing = append(missing, name)
				problems = append(problems, fmt.Sprintf("%s[%d]: %s %s/%s not found", k.field, i, k.kind, ns, name))
				continue
			}
			return nil, nil, nil, fmt.Errorf("%s: %s[%d]: getting %s %s: %w", id, k.field, i, k.kind, name, err)
		}
		members[i] = m
	}
	if len(missing) > 0 {
		return nil, missing, &stepResult{operatorkit.Stalled, k.reasons.missing, id + ": " + strings.Join(problems, "; ")}, nil
	}
	return members, nil, nil, nil
}

// adopt makes the owner the controller of each member and passes its
// annotations down, patching only members that change.
func (k memberKind[M]) adopt(ctx context.Context, cl client.Client, e enablement, members []M) (*stepResult, error) {
	id := idOf(e.owner)
	for i, m := range members {
		before := m.DeepCopyObject().(M)
		if err := controllerutil.SetControllerReference(e.owner, m, cl.Scheme()); err != nil {
			var already *controllerutil.AlreadyOwnedError
			if errors.As(err, &already) {
				return &stepResult{operatorkit.Stalled, k.reasons.owned, fmt.Sprintf("%s: %s[%d]: %s %s already belongs to %s %s", id, k.field, i, k.kind, m.GetName(), already.Owner.Kind, already.Owner.Name)}, nil
			}
			return nil, fmt.Errorf("%s: %s[%d]: %w", id, k.field, i, err)
		}
		for key, v := range e.annotations {
			setAnnotation(m, key, v)
		}
		if err := patchIfChanged(ctx, cl, m, before); err != nil {
			return nil, fmt.Errorf("%s: %s[%d]: updating %s %s: %w", id, k.field, i, k.kind, m.GetName(), err)
		}
	}
	return nil, nil
}

// setTarget enables a member: it records the owner's target in the
// member's TargetStateAnnotation with a metadata-only patch.
func (k memberKind[M]) setTarget(ctx context.Context, cl client.Client, rec recorder.EventRecorder, e enablement, i int, m M) error {
	if m.GetAnnotations()[TargetStateAnnotation] == string(e.target) {
		return nil
	}
	id := idOf(e.owner)
	before := m.DeepCopyObject().(M)
	setAnnotation(m, TargetStateAnnotation, string(e.target))
	if err := patchIfChanged(ctx, cl, m, before); err != nil {
		return fmt.Errorf("%s: %s[%d]: enabling %s %s: %w", id, k.field, i, k.kind, m.GetName(), err)
	}
	operatorkit.Events{Recorder: rec}.RecordRelated(e.owner, m, corev1.EventTypeNormal, k.reasons.enabled, "Enable",
		fmt.Sprintf("%s %s enabled with target state %s (annotation %s; its spec.target_state is left as written)", k.kind, m.GetName(), e.target, TargetStateAnnotation))
	return nil
}

// patchIfChanged merge-patches obj from before, and sends nothing when they
// do not differ.
func patchIfChanged(ctx context.Context, cl client.Client, obj, before client.Object) error {
	p := client.MergeFrom(before)
	data, err := p.Data(obj)
	if err != nil {
		return err
	}
	if string(data) == "{}" {
		return nil
	}
	return cl.Patch(ctx, obj, client.RawPatch(p.Type(), data))
}

// idOf names a group or manifest in messages: "<kind> <namespace>/<name>".
func idOf(o client.Object) string {
	kind := "object"
	switch o.(type) {
	case *armadav1.ArmadaChartGroup:
		kind = "ArmadaChartGroup"
	case *armadav1.ArmadaManifest:
		kind = "ArmadaManifest"
	case *armadav1.ArmadaChart:
		kind = "ArmadaChart"
	}
	return fmt.Sprintf("%s %s/%s", kind, o.GetNamespace(), o.GetName())
}

// stalledAt returns a Stalled condition of generation gen.
func stalledAt(conds []metav1.Condition, gen int64) (*metav1.Condition, bool) {
	s := apimeta.FindStatusCondition(conds, armadav1.StalledCondition)
	return s, s != nil && s.Status == metav1.ConditionTrue && s.ObservedGeneration == gen
}

// setupOwner registers the reconciler r, named name, of an owner kind
// (ArmadaChartGroup, ArmadaManifest): an index of owners by the member
// names that members lists, so a member created after its owner still wakes
// it, and a watch of the member kind through that index.
func setupOwner(ctx context.Context, mgr ctrl.Manager, cl client.Client, r reconcile.Reconciler, name string, owner client.Object, list client.ObjectList,
	member client.Object, index string, members func(client.Object) []string) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, owner, index, members); err != nil {
		return fmt.Errorf("%s: indexing owners by member: %w", name, err)
	}
	wake := func(ctx context.Context, o client.Object) []reconcile.Request {
		l := list.DeepCopyObject().(client.ObjectList)
		if err := cl.List(ctx, l, client.InNamespace(o.GetNamespace()), client.MatchingFields{index: o.GetName()}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "listing owners of a member", "index", index)
			return nil
		}
		var out []reconcile.Request
		_ = apimeta.EachListItem(l, func(item runtime.Object) error {
			if m, ok := item.(client.Object); ok {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(m)})
			}
			return nil
		})
		return out
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(owner).
		Watches(member, handler.EnqueueRequestsFromMapFunc(wake)).
		Named(name).
		Complete(r)
}

func setAnnotation(o metav1.Object, key, value string) {
	a := o.GetAnnotations()
	if value == "" {
		if _, ok := a[key]; ok {
			delete(a, key)
			o.SetAnnotations(a)
		}
		return
	}
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	o.SetAnnotations(a)
}
