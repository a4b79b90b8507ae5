package ironic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// faultPowerFailure is the fault of a node whose BMC Ironic cannot reach.
const faultPowerFailure = "power failure"

// ironicHost is the Provisioner of one BareMetalHost.
type ironicHost struct {
	f    *factory
	host provisioner.Host
	// nodeID is the node's UUID once known.
	nodeID string
}

var _ provisioner.Provisioner = (*ironicHost)(nil)

// what names the host in errors: "node ns~name".
func (p *ironicHost) what(op string) string {
	return op + " node " + nodeName(p.host)
}

func (p *ironicHost) dirty() provisioner.Result {
	return provisioner.Result{Dirty: true, RequeueAfter: p.f.opts.PollInterval}
}

// busy is the result of a 409: the node is locked; look again soon.
func (p *ironicHost) busy() provisioner.Result {
	return provisioner.Result{Dirty: true, RequeueAfter: min(p.f.opts.PollInterval, 3*time.Second)}
}

// failed is an ErrorMessage result, scrubbed of the host's BMC password.
func (p *ironicHost) failed(msg string) provisioner.Result {
	return provisioner.Result{ErrorMessage: p.scrubText(msg)}
}

// classify is the factory's classify, scrubbed of the BMC password (Ironic
// masks it in its answers; this holds should a message ever quote it).
func (p *ironicHost) classify(err error, what string) error {
	err = p.f.classify(err, what)
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := p.scrubText(msg); clean != msg {
		return &scrubbed{msg: clean, err: err}
	}
	return err
}

// scrubText replaces the BMC password and Ironic's own password in s.
func (p *ironicHost) scrubText(s string) string {
	for _, secret := range []string{p.host.BMC.Credentials.Password, p.f.opts.Auth.Password} {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "REDACTED")
		}
	}
	return s
}

// scrubbed is an error whose message had a secret replaced; errors.Is and
// errors.As still see the original.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// findNode returns the host's node by ID, else by name; nil when Ironic
// has neither.
func (p *ironicHost) findNode(ctx context.Context) (*nodes.Node, error) {
	for _, id := range []string{p.nodeID, nodeName(p.host)} {
		if id == "" {
			continue
		}
		n, err := nodes.Get(ctx, p.f.client, id).Extract()
		err = p.classify(err, p.what("get"))
		switch {
		case err == nil:
			p.nodeID = n.UUID
			return n, nil
		case !errors.Is(err, errNotFound):
			return nil, err
		}
	}
	return nil, nil
}

// node returns the host's node, or errNotFound wrapped with the host's
// name when Ironic does not know it (Register enrolls it).
func (p *ironicHost) node(ctx context.Context) (*nodes.Node, error) {
	n, err := p.findNode(ctx)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, fmt.Errorf("ironic %s: node %s is not enrolled (register the host first): %w", p.f.base.Redacted(), nodeName(p.host), errNotFound)
	}
	return n, nil
}

// update PATCHes the node; nothing to change is no request.
func (p *ironicHost) update(ctx context.Context, n *nodes.Node, ops nodes.UpdateOpts) (*nodes.Node, error) {
	if len(ops) == 0 {
		return n, nil
	}
	out, err := nodes.Update(ctx, p.f.client, n.UUID, ops).Extract()
	if err != nil {
		return nil, p.classify(err, p.what("update"))
	}
	return out, nil
}

// setState asks for a provision state change; the result is Dirty (busy
// when Ironic answered 409) or an error.
//
// A node Ironic put in maintenance for a power failure (it lost the BMC)
// is waited for: Ironic takes it out once the BMC answers again.
func (p *ironicHost) setState(ctx context.Context, n *nodes.Node, opts nodes.ProvisionStateOpts) (provisioner.Result, error) {
	if n.Maintenance && n.Fault == faultPowerFailure {
		return p.dirty(), nil
	}
	err := nodes.ChangeProvisionState(ctx, p.f.client, n.UUID, opts).ExtractErr()
	return p.after(err, p.what(fmt.Sprintf("%q", opts.Target)))
}

// after maps an action's error: none is Dirty, 409 is busy, others are
// returned.
func (p *ironicHost) after(err error, what string) (provisioner.Result, error) {
	err = p.classify(err, what)
	switch {
	case err == nil:
		return p.dirty(), nil
	case errors.Is(err, errConflict):
		return p.busy(), nil
	default:
		return provisioner.Result{}, err
	}
}

// orBusy turns a 409 into a busy result.
func (p *ironicHost) orBusy(err error) (provisioner.Result, error) {
	if errors.Is(err, errConflict) {
		return p.busy(), nil
	}
	return provisioner.Result{}, err
}

// failureKey identifies one failure of a node: a new attempt changes the
// state's update time.
func failureKey(n *nodes.Node) string {
	return n.ProvisionState + "|" + n.ProvisionUpdatedAt.String() + "|" + n.LastError
}

// firstReport reports whether n's failure is seen for the first time (it
// is reported as an ErrorMessage), or again (the controller's retry after
// its backoff: start a new attempt).
func (p *ironicHost) firstReport(n *nodes.Node) bool {
	return p.firstReportOf(n.UUID, failureKey(n))
}

// firstReportOf is firstReport for any key naming one failure of a node.
func (p *ironicHost) firstReportOf(uuid, key string) bool {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	if p.f.reported[uuid] == key {
		delete(p.f.reported, uuid)
		return false
	}
	p.f.reported[uuid] = key
	return true
}

// listPorts lists the node's ports (by node_uuid: the node's ports
// subresource fails at some versions on Ironic 21.4).
func (p *ironicHost) listPorts(ctx context.Context, nodeUUID, address string) ([]ports.Port, error) {
	pages, err := ports.ListDetail(p.f.client, ports.ListOpts{NodeUUID: nodeUUID, Address: address}).AllPages(ctx)
	if err != nil {
		return nil, p.classify(err, p.what("list ports of"))
	}
	ps, err := ports.ExtractPorts(pages)
	if err != nil {
		return nil, fmt.Errorf("ironic %s: reading the ports of node %s: %w", p.f.base.Redacted(), nodeName(p.host), err)
	}
	return ps, nil
}

// lastError is the node's last_error, or what to say when it is empty.
func lastError(n *nodes.Node, otherwise string) string {
	if n.LastError != "" {
		return n.LastError
	}
	return otherwise
}
