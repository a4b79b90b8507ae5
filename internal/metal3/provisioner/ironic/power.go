package ironic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// Ironic's power states.
const (
	powerOn  = "power on"
	powerOff = "power off"
)

// Delete makes Ironic forget the node: at once in enroll, manageable and
// available; aborting an inspection or cleaning that waits on the agent;
// through maintenance in the other stable states (an active node is not
// undeployed: the controller deprovisions first when it means to).
func (p *ironicHost) Delete(ctx context.Context) (provisioner.Result, error) {
	n, err := p.findNode(ctx)
	if err != nil || n == nil {
		return p.orBusy(err)
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Enroll, nodes.Manageable, nodes.Available:
		return p.destroy(ctx, n)
	case nodes.Verifying, nodes.Deploying, nodes.Cleaning, nodes.Inspecting, nodes.Deleting, nodes.Adopting:
		// Forgetting the node is what was asked: one stuck past its
		// deadline goes at once, without a report first.
		if o, ok := p.overdueOf(n); ok && o.past {
			return p.maintenanceThenDestroy(ctx, n, fmt.Sprintf("stuck in %s for %s: deleted by metal3-operator", n.ProvisionState, o.elapsed))
		}
		return p.wait(ctx, n)
	case nodes.InspectWait, nodes.CleanWait:
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetAbort})
	default:
		return p.maintenanceThenDestroy(ctx, n, "deleted by metal3-operator")
	}
}

// Detach makes Ironic forget the node without touching the host: the
// node goes to maintenance (no power sync, no state change), then is
// deleted.
func (p *ironicHost) Detach(ctx context.Context) (provisioner.Result, error) {
	n, err := p.findNode(ctx)
	if err != nil || n == nil {
		return p.orBusy(err)
	}
	return p.maintenanceThenDestroy(ctx, n, "deleted by metal3-operator")
}

// maintenanceThenDestroy deletes the node through maintenance (Ironic
// deletes a node in maintenance in any state), with reason as the
// maintenance reason.
func (p *ironicHost) maintenanceThenDestroy(ctx context.Context, n *nodes.Node, reason string) (provisioner.Result, error) {
	if !n.Maintenance {
		err := nodes.SetMaintenance(ctx, p.f.client, n.UUID, nodes.MaintenanceOpts{Reason: reason}).ExtractErr()
		if err = p.classify(err, p.what("set maintenance of")); err != nil {
			return p.orBusy(err)
		}
	}
	return p.destroy(ctx, n)
}

func (p *ironicHost) destroy(ctx context.Context, n *nodes.Node) (provisioner.Result, error) {
	err := p.classify(nodes.Delete(ctx, p.f.client, n.UUID).ExtractErr(), p.what("delete"))
	if err != nil && !errors.Is(err, errNotFound) {
		return p.orBusy(err)
	}
	p.f.forget(n.UUID)
	p.nodeID = ""
	return provisioner.Result{}, nil
}

// forget drops what the factory remembers of a deleted node.
func (f *factory) forget(uuid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.reported, uuid)
	delete(f.inspected, uuid)
	delete(f.creds, uuid)
	delete(f.prepared, uuid)
	delete(f.power, uuid)
}

// PowerState reads the node's power_state.
func (p *ironicHost) PowerState(ctx context.Context) (provisioner.PowerState, error) {
	n, err := p.node(ctx)
	if err != nil {
		return "", err
	}
	switch n.PowerState {
	case powerOn:
		return provisioner.PowerOn, nil
	case powerOff:
		return provisioner.PowerOff, nil
	default:
		return "", fmt.Errorf("ironic %s: node %s: power state %q is unknown (Ironic could not read it from the BMC: %s)",
			p.f.base.Redacted(), nodeName(p.host), n.PowerState, lastError(n, "no reason given"))
	}
}

// PowerOn turns the host on through Ironic.
func (p *ironicHost) PowerOn(ctx context.Context) (provisioner.Result, error) {
	return p.power(ctx, nodes.PowerOn, powerOn)
}

// PowerOff turns the host off, softly unless force.
func (p *ironicHost) PowerOff(ctx context.Context, force bool) (provisioner.Result, error) {
	if force {
		return p.power(ctx, nodes.PowerOff, powerOff)
	}
	return p.power(ctx, nodes.SoftPowerOff, powerOff)
}

// Reboot restarts the host, softly unless force; a host that is off is
// turned on.
func (p *ironicHost) Reboot(ctx context.Context, force bool) (provisioner.Result, error) {
	n, err := p.node(ctx)
	if err != nil {
		return p.orBusy(err)
	}
	sent := p.f.powerSent(n.UUID)
	if sent == string(nodes.PowerOn) || (n.PowerState == powerOff && n.TargetPowerState == "" && sent == "") {
		return p.power(ctx, nodes.PowerOn, powerOn)
	}
	if force {
		return p.power(ctx, nodes.Rebooting, powerOn)
	}
	return p.power(ctx, nodes.SoftRebooting, powerOn)
}

// powerStep is what a power method does for a node, given the request
// this process sent it last (sent, "" for none).
type powerStep int

const (
	powerDone powerStep = iota
	powerWait
	powerSend
	powerFailed
)

// decidePower: a request in flight (target_power_state set, or a
// provision state change holding the node) is waited for, never sent
// again; once it ended, the host in the end state is done and otherwise
// failed when last_error says why; with nothing sent, a host already in the
// end state is done unless a reboot is asked.
func decidePower(n *nodes.Node, want nodes.TargetPowerState, end, sent string) powerStep {
	if n.TargetPowerState != "" {
		return powerWait
	}
	if sent == string(want) {
		switch {
		case n.PowerState == end:
			return powerDone
		case n.LastError != "":
			return powerFailed
		}
		// Not in the end state without an error: a new transition.
	}
	reboot := want == nodes.Rebooting || want == nodes.SoftRebooting
	if !reboot && n.PowerState == end {
		return powerDone
	}
	if n.TargetProvisionState != "" {
		return powerWait
	}
	return powerSend
}

func (p *ironicHost) power(ctx context.Context, want nodes.TargetPowerState, end string) (provisioner.Result, error) {
	n, err := p.node(ctx)
	if err != nil {
		return p.orBusy(err)
	}
	if elapsed, stuck := p.powerOverdue(n); stuck {
		if p.firstPowerReport(n) {
			return p.failed(fmt.Sprintf("node %s: the power change to %q has been under way for %s (since %s) with no conductor working on it, past the %s deadline; the next attempt sends %q again",
				nodeName(p.host), n.TargetPowerState, elapsed, n.UpdatedAt.UTC().Format(time.RFC3339), p.f.opts.StuckTimeout, want)), nil
		}
		return p.sendPower(ctx, n, want)
	}
	sent := p.f.powerSent(n.UUID)
	switch decidePower(n, want, end, sent) {
	case powerWait:
		res := p.dirty()
		if n.TargetPowerState != "" && !n.UpdatedAt.IsZero() {
			res.Progress = fmt.Sprintf("node %s: power change to %q under way for %s", nodeName(p.host), n.TargetPowerState, p.f.now().Sub(n.UpdatedAt).Truncate(time.Second))
		}
		return res, nil
	case powerDone:
		p.f.setPowerSent(n.UUID, "")
		return provisioner.Result{}, nil
	case powerFailed:
		p.f.setPowerSent(n.UUID, "")
		return p.failed(fmt.Sprintf("%s failed: %s", want, lastError(n, "the host is still "+n.PowerState))), nil
	}
	return p.sendPower(ctx, n, want)
}

// sendPower asks for a power change and remembers it; a soft one the BMC
// does not support (400) falls back to the hard one.
func (p *ironicHost) sendPower(ctx context.Context, n *nodes.Node, want nodes.TargetPowerState) (provisioner.Result, error) {
	opts := nodes.PowerStateOpts{Target: want}
	if want == nodes.SoftPowerOff || want == nodes.SoftRebooting {
		opts.Timeout = softPowerOffTimeout
	}
	err := nodes.ChangePowerState(ctx, p.f.client, n.UUID, opts).ExtractErr()
	if gophercloud.ResponseCodeIs(err, http.StatusBadRequest) && hardOf[want] != "" {
		return p.sendPower(ctx, n, hardOf[want])
	}
	if err = p.classify(err, p.what(fmt.Sprintf("%q", want))); err != nil {
		return p.orBusy(err)
	}
	p.f.setPowerSent(n.UUID, string(want))
	// Power changes take seconds: look again soon.
	return p.busy(), nil
}

// hardOf is the hard power change of a soft one.
var hardOf = map[nodes.TargetPowerState]nodes.TargetPowerState{
	nodes.SoftPowerOff:  nodes.PowerOff,
	nodes.SoftRebooting: nodes.Rebooting,
}

func (f *factory) powerSent(uuid string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.power[uuid]
}

func (f *factory) setPowerSent(uuid, target string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if target == "" {
		delete(f.power, uuid)
		return
	}
	f.power[uuid] = target
}
