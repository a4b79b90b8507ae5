package ironic

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// Register enrolls the host's node (or finds it by ID or name), keeps its
// driver_info, automated_clean and boot mode as the host says, creates
// the boot MAC's port, and moves the node from enroll to manageable
// (Ironic verifies the BMC: it reads the power state, never changes it).
func (p *ironicHost) Register(ctx context.Context, d provisioner.RegisterData) (provisioner.Result, string, error) {
	n, err := p.findNode(ctx)
	if err != nil {
		return p.registerErr(err)
	}
	credsNew := false
	if n == nil {
		created, err := nodes.Create(ctx, p.f.client, createOpts(p.host, d, p.f.opts)).Extract()
		if err != nil {
			return p.registerErr(p.classify(err, p.what("create")))
		}
		n = created
		p.nodeID = n.UUID
		p.f.rememberCredentials(n.UUID, p.host.BMC.Credentials)
	} else {
		var ops nodes.UpdateOpts
		ops, credsNew = p.registerUpdates(n, d)
		if n, err = p.update(ctx, n, ops); err != nil {
			return p.registerErr(err)
		}
		if credsNew {
			p.f.rememberCredentials(n.UUID, p.host.BMC.Credentials)
		}
	}
	if msg, err := p.ensurePorts(ctx, n); err != nil || msg != "" {
		res, _, err := p.registerErr(err)
		if msg != "" {
			res = p.failed(msg)
		}
		return res, n.UUID, err
	}
	res, err := p.registerState(ctx, n, credsNew)
	return res, n.UUID, err
}

func (p *ironicHost) registerErr(err error) (provisioner.Result, string, error) {
	res, err := p.orBusy(err)
	return res, p.nodeID, err
}

// registerUpdates is the patch keeping an existing node as the host says:
// the name, driver_info when the BMC, the credentials (new since they
// were last sent) or the deploy ISO changed, automated_clean and the boot
// mode capability. driver_info comes first. Nodes in transient states are
// left alone.
func (p *ironicHost) registerUpdates(n *nodes.Node, d provisioner.RegisterData) (ops nodes.UpdateOpts, driverInfoChanged bool) {
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Enroll, nodes.Manageable, nodes.Available, nodes.Active, nodes.InspectFail, nodes.CleanFail,
		nodes.DeployFail, nodes.AdoptFail, nodes.Error:
	default:
		return nil, false
	}
	want := driverInfo(p.host.BMC, p.f.opts)
	if !driverInfoMatches(n.DriverInfo, want) || (d.CredentialsChanged && !p.f.credentialsSent(n.UUID, p.host.BMC.Credentials)) {
		ops = append(ops, nodes.UpdateOperation{Op: nodes.AddOp, Path: "/driver_info", Value: want})
		driverInfoChanged = true
	}
	if n.Name != nodeName(p.host) {
		ops = append(ops, nodes.UpdateOperation{Op: nodes.AddOp, Path: "/name", Value: nodeName(p.host)})
	}
	clean := automatedClean(d.AutomatedCleaningMode)
	if n.AutomatedClean == nil || *n.AutomatedClean != clean {
		ops = append(ops, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/automated_clean", Value: clean})
	}
	if n.ProvisionState != string(nodes.Active) {
		caps := capabilities(n.Properties["capabilities"], p.host.BootMode)
		if caps != n.Properties["capabilities"] {
			ops = append(ops, nodes.UpdateOperation{Op: nodes.AddOp, Path: "/properties/capabilities", Value: caps})
		}
	}
	return ops, driverInfoChanged
}

// ensurePorts creates the ports the node lacks: spec.bootMACAddress's
// (pxe_enabled) and those of status.hardware's NICs (a node enrolled again
// after a pivot knows its host's MACs without inspecting it, so that the
// deploy agent of a later cleaning finds its node). msg names a boot MAC
// that is another node's; another NIC's MAC owned elsewhere is skipped.
func (p *ironicHost) ensurePorts(ctx context.Context, n *nodes.Node) (msg string, err error) {
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Enroll, nodes.Manageable, nodes.Available, nodes.Active, nodes.InspectFail, nodes.CleanFail,
		nodes.DeployFail, nodes.AdoptFail, nodes.Error:
	default:
		return "", nil
	}
	want := wantedPorts(p.host)
	if len(want) == 0 {
		return "", nil
	}
	have, err := p.listPorts(ctx, n.UUID, "")
	if err != nil {
		return "", err
	}
	for _, port := range have {
		delete(want, strings.ToLower(port.Address))
	}
	boot := strings.ToLower(p.host.BootMACAddress)
	for _, mac := range sortedKeys(want) {
		elsewhere, err := p.listPorts(ctx, "", mac)
		if err != nil {
			return "", err
		}
		if len(elsewhere) > 0 {
			if mac == boot {
				return fmt.Sprintf("spec.bootMACAddress %s is already the port of another Ironic node (%s)", mac, elsewhere[0].NodeUUID), nil
			}
			continue
		}
		pxe := want[mac]
		_, err = ports.Create(ctx, p.f.client, ports.CreateOpts{NodeUUID: n.UUID, Address: mac, PXEEnabled: &pxe}).Extract()
		if err = p.classify(err, p.what("create the port "+mac+" of")); err != nil {
			return "", err
		}
	}
	return "", nil
}

// wantedPorts are the MACs a host's node should have, with pxe_enabled:
// the boot MAC's true.
func wantedPorts(h provisioner.Host) map[string]bool {
	want := map[string]bool{}
	if h.Hardware != nil {
		for _, nic := range h.Hardware.NIC {
			if nic.MAC != "" {
				want[strings.ToLower(nic.MAC)] = nic.PXE
			}
		}
	}
	if h.BootMACAddress != "" {
		want[strings.ToLower(h.BootMACAddress)] = true
	}
	return want
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// registerState moves an enrolled node to manageable. A verification
// failure is reported once as an ErrorMessage naming the BMC (Ironic's
// last_error names the request that failed, never the password); the
// next call, after the controller's backoff, verifies again.
func (p *ironicHost) registerState(ctx context.Context, n *nodes.Node, credsNew bool) (provisioner.Result, error) {
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Enroll:
		if n.TargetProvisionState == string(nodes.TargetManage) || n.TargetProvisionState == string(nodes.Manageable) {
			return p.dirty(), nil
		}
		if n.LastError != "" && !credsNew && p.firstReport(n) {
			return p.failed(fmt.Sprintf("BMC %s: Ironic could not verify it: %s", bmcName(p.host.BMC.Access), n.LastError)), nil
		}
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetManage})
	case nodes.Verifying:
		return p.wait(ctx, n)
	default:
		return provisioner.Result{}, nil
	}
}

// bmcName is the BMC's URL for messages (it never has credentials).
func bmcName(a bmc.Access) string { return a.Endpoint + a.SystemPath }

// credentialsHash fingerprints credentials in memory, to send changed
// ones once; it is never written anywhere.
func credentialsHash(c provisioner.Credentials) [32]byte {
	return sha256.Sum256([]byte(c.Username + "\x00" + c.Password))
}

func (f *factory) rememberCredentials(uuid string, c provisioner.Credentials) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creds[uuid] = credentialsHash(c)
}

func (f *factory) credentialsSent(uuid string, c provisioner.Credentials) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	h, ok := f.creds[uuid]
	return ok && h == credentialsHash(c)
}
