package ironic

import (
	"context"
	"fmt"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// transit says how a node leaves one of Ironic 21.4's transitional
// provision states without the controller, and how the provisioner takes
// it out when it does not (doc.go's table, "Stuck nodes").
type transit struct {
	// callback names Ironic's [conductor] option that fails the node
	// after Options.CallbackTimeout; "" for a state the conductor works
	// through with the node locked and no timeout (only a conductor
	// restart fails it, STUCK_STATES_TREATED_AS_FAIL).
	callback string
	// recover is the verb that takes the node out; "" when Ironic's state
	// machine has none (verifying, inspecting, cleaning, deploying,
	// deleting, adopting only have the conductor's internal done and
	// fail): maintenance and DELETE, which Ironic allows in any state for
	// a node in maintenance, and Register enrolls the node again.
	recover nodes.TargetProvisionState
	// next says what the retry does, for the ErrorMessage.
	next string
}

const recreate = "Ironic has no verb out of this state: the next attempt puts the node in maintenance and deletes it, and it is enrolled again"

var transits = map[nodes.ProvisionState]transit{
	nodes.Verifying:  {next: recreate},
	nodes.Inspecting: {next: recreate},
	nodes.Cleaning:   {next: recreate},
	nodes.Deploying:  {next: recreate},
	nodes.Deleting:   {next: recreate},
	nodes.Adopting:   {next: recreate},
	// abort: clean wait → clean failed, inspect wait → inspect failed,
	// which the usual failure handling retries.
	nodes.CleanWait:   {callback: "clean_callback_timeout", recover: nodes.TargetAbort, next: "the next attempt aborts it (clean failed) and cleans again"},
	nodes.InspectWait: {callback: "inspect_wait_timeout", recover: nodes.TargetAbort, next: "the next attempt aborts it (inspect failed) and inspects again"},
	// Ironic 21.4 has no abort in wait call-back: "deleted" tears the
	// deploy down (deleting, cleaning, available) and Provision deploys
	// again.
	nodes.DeployWait: {callback: "deploy_callback_timeout", recover: nodes.TargetDeleted, next: "the next attempt undeploys it (Ironic has no abort in wait call-back) and deploys again"},
}

// overdue is where a node in a transitional state stands against its
// deadline.
type overdue struct {
	tr       transit
	since    time.Time
	elapsed  time.Duration
	deadline time.Duration // < 0: never acted on
	past     bool
}

// overdueOf measures n's time in its transitional state from Ironic's
// provision_updated_at (not this process's memory: a restarted operator
// measures the same). ok is false for a state that is not transitional
// or has no timestamp. A node locked by a conductor (reservation set) is
// being worked on and never past, as Ironic's own timeouts skip locked
// nodes; so is one Ironic holds in maintenance for a power failure (no
// state change is asked until the BMC is back).
func (p *ironicHost) overdueOf(n *nodes.Node) (o overdue, ok bool) {
	tr, ok := transits[nodes.ProvisionState(n.ProvisionState)]
	if !ok || n.ProvisionUpdatedAt.IsZero() {
		return overdue{}, false
	}
	o = overdue{tr: tr, since: n.ProvisionUpdatedAt, elapsed: p.f.now().Sub(n.ProvisionUpdatedAt).Truncate(time.Second)}
	o.deadline = p.f.deadline(tr.callback != "")
	o.past = o.deadline >= 0 && o.elapsed > o.deadline && n.Reservation == "" && !(n.Maintenance && n.Fault == faultPowerFailure)
	return o, true
}

// deadline is how long a node may sit in a transitional state: the
// conductor's states StuckTimeout, the agent's wait states Ironic's
// callback timeout and StuckTimeout beyond it (Ironic is the authority on
// those; the provisioner steps in only once it clearly did not act). < 0
// is never.
func (f *factory) deadline(callback bool) time.Duration {
	stuck, cb := f.opts.StuckTimeout, f.opts.CallbackTimeout
	switch {
	case stuck < 0, callback && cb < 0:
		return -1
	case callback:
		return cb + stuck
	default:
		return stuck
	}
}

// progress says how long the node has been in its state, and who ends
// the wait when.
func (p *ironicHost) progress(n *nodes.Node, o overdue) string {
	msg := fmt.Sprintf("node %s in provision state %q for %s", nodeName(p.host), n.ProvisionState, o.elapsed)
	switch {
	case n.Reservation != "":
		msg += " (locked by conductor " + n.Reservation + ")"
	case o.tr.callback != "" && o.deadline >= 0:
		msg += fmt.Sprintf(" (Ironic fails it after its %s; the provisioner steps in after %s)", o.tr.callback, o.deadline)
	case o.tr.callback != "":
		msg += fmt.Sprintf(" (Ironic fails it after its %s)", o.tr.callback)
	case o.deadline >= 0:
		msg += fmt.Sprintf(" (reported stuck after %s)", o.deadline)
	}
	return msg
}

// wait is the result of a node in a transitional state: Dirty, saying
// for how long, until its deadline; past it, an ErrorMessage naming the
// node, its state and for how long (the controller records it as the
// step's error), then, on the next call (the controller's retry after its
// backoff), the state's way out.
func (p *ironicHost) wait(ctx context.Context, n *nodes.Node) (provisioner.Result, error) {
	res := p.dirty()
	o, ok := p.overdueOf(n)
	if !ok {
		return res, nil
	}
	res.Progress = p.progress(n, o)
	if !o.past {
		return res, nil
	}
	if p.firstReport(n) {
		return p.failed(p.stuckMessage(n, o)), nil
	}
	if o.tr.recover != "" {
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: o.tr.recover})
	}
	res, err := p.maintenanceThenDestroy(ctx, n, fmt.Sprintf("stuck in %s for %s: deleted by metal3-operator to enroll it again", n.ProvisionState, o.elapsed))
	if err != nil || res.Dirty {
		return res, err
	}
	// Deleted: the next pass's Register enrolls the node again.
	return p.dirty(), nil
}

func (p *ironicHost) stuckMessage(n *nodes.Node, o overdue) string {
	why := fmt.Sprintf("past the %s deadline", o.deadline)
	if o.tr.callback != "" {
		why = fmt.Sprintf("past Ironic's %s and %s more", o.tr.callback, p.f.opts.StuckTimeout)
	}
	msg := fmt.Sprintf("node %s has been in provision state %q for %s (since %s), %s",
		nodeName(p.host), n.ProvisionState, o.elapsed, o.since.UTC().Format(time.RFC3339), why)
	if n.LastError != "" {
		msg += " (last error: " + n.LastError + ")"
	}
	return msg + "; " + o.tr.next
}

// powerOverdue reports a power change that has been under way
// (target_power_state set) for longer than StuckTimeout on an unlocked
// node: Ironic's power actions hold the node's lock throughout, so an
// unlocked node still showing a target lost its action (a conductor that
// died is cleared by Ironic itself; a failed write is not). The change is
// measured from updated_at, Ironic's last write of the node (setting
// target_power_state is one; provision_updated_at does not move for a
// power change); any later write only makes it later.
func (p *ironicHost) powerOverdue(n *nodes.Node) (time.Duration, bool) {
	if n.TargetPowerState == "" || n.UpdatedAt.IsZero() || n.Reservation != "" || p.f.opts.StuckTimeout < 0 ||
		(n.Maintenance && n.Fault == faultPowerFailure) {
		return 0, false
	}
	elapsed := p.f.now().Sub(n.UpdatedAt).Truncate(time.Second)
	return elapsed, elapsed > p.f.opts.StuckTimeout
}

// firstPowerReport is firstReport for a stuck power change.
func (p *ironicHost) firstPowerReport(n *nodes.Node) bool {
	return p.firstReportOf(n.UUID, "power|"+n.TargetPowerState+"|"+n.UpdatedAt.String())
}
