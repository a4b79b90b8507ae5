package ironic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/redact"
)

// Prepare sets the root device hints, runs the RAID clean steps when
// spec.raid asks for hardware RAID, then provides the node (manageable →
// cleaning, as automatedCleaningMode says → available).
func (p *ironicHost) Prepare(ctx context.Context, d provisioner.PrepareData) (provisioner.Result, error) {
	if err := firmwareSettings(d.Firmware); err != nil {
		return p.failed(err.Error()), nil
	}
	raid, hasRAID, err := raidConfig(d.RAID)
	if err != nil {
		return p.failed(err.Error()), nil
	}
	n, err := p.node(ctx)
	if err != nil {
		return p.orBusy(err)
	}
	key := prepareKey(d)
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Manageable:
		if n, err = p.update(ctx, n, prepareUpdates(n, d)); err != nil {
			return p.orBusy(err)
		}
		if hasRAID && !p.f.wasPrepared(n.UUID, key) {
			return p.startRAID(ctx, n, raid, key)
		}
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetProvide})
	case nodes.Available:
		if hasRAID && !p.f.wasPrepared(n.UUID, key) {
			// RAID is configured from manageable.
			return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetManage})
		}
		if _, err := p.update(ctx, n, prepareUpdates(n, d)); err != nil {
			return p.orBusy(err)
		}
		return provisioner.Result{}, nil
	case nodes.Cleaning, nodes.CleanWait, nodes.Enroll, nodes.Verifying, nodes.Inspecting, nodes.InspectWait:
		return p.wait(ctx, n)
	case nodes.CleanFail:
		p.f.setPrepared(n.UUID, "")
		return p.retryCleanFail(ctx, n)
	default:
		return p.failed(fmt.Sprintf("Ironic cannot prepare node %s in provision state %q", nodeName(p.host), n.ProvisionState)), nil
	}
}

// prepareUpdates keeps properties.root_device and automated_clean as asked.
func prepareUpdates(n *nodes.Node, d provisioner.PrepareData) nodes.UpdateOpts {
	var hints any
	if h := rootDeviceHints(d.RootDeviceHints); h != nil {
		hints = h
	}
	ops := patchOps("/properties", n.Properties, map[string]any{"root_device": hints})
	clean := automatedClean(d.AutomatedCleaningMode)
	if n.AutomatedClean == nil || *n.AutomatedClean != clean {
		ops = append(ops, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/automated_clean", Value: clean})
	}
	return ops
}

func prepareKey(d provisioner.PrepareData) string {
	data, _ := json.Marshal(d.RAID)
	return string(data)
}

// startRAID sets the target RAID configuration and runs the redfish RAID
// interface's clean steps.
func (p *ironicHost) startRAID(ctx context.Context, n *nodes.Node, raid map[string]any, key string) (provisioner.Result, error) {
	err := nodes.SetRAIDConfig(ctx, p.f.client, n.UUID, rawRAID(raid)).ExtractErr()
	if err = p.classify(err, p.what("set the target RAID configuration (spec.raid) of")); err != nil {
		return p.orBusy(err)
	}
	res, err := p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetClean, CleanSteps: manualCleanSteps(true)})
	if err == nil && res.Dirty {
		p.f.setPrepared(n.UUID, key)
	}
	return res, err
}

// rawRAID sends a target_raid_config as it is.
type rawRAID map[string]any

func (r rawRAID) ToRAIDConfigMap() (map[string]any, error) { return r, nil }

func (f *factory) wasPrepared(uuid, key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.prepared[uuid] == key
}

func (f *factory) setPrepared(uuid, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if key == "" {
		delete(f.prepared, uuid)
		return
	}
	f.prepared[uuid] = key
}

// retryCleanFail reports a cleaning failure once; the next call clears
// the maintenance Ironic set and moves the node back to manageable.
func (p *ironicHost) retryCleanFail(ctx context.Context, n *nodes.Node) (provisioner.Result, error) {
	if p.firstReport(n) {
		return p.failed("cleaning failed: " + lastError(n, "no reason given")), nil
	}
	if n.Maintenance {
		return p.after(nodes.UnsetMaintenance(ctx, p.f.client, n.UUID).ExtractErr(), p.what("unset maintenance of"))
	}
	return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetManage})
}

// Provision writes the image with its config drive (direct deploy), boots
// the live ISO (ramdisk deploy) or runs the custom deploy step
// (custom-agent), from available to active.
func (p *ironicHost) Provision(ctx context.Context, d provisioner.ProvisionData) (provisioner.Result, error) {
	plan, err := planDeploy(d)
	if err != nil {
		return p.failed(err.Error()), nil
	}
	n, err := p.node(ctx)
	if err != nil {
		return p.orBusy(err)
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Active:
		return provisioner.Result{}, nil
	case nodes.Available:
		return p.deploy(ctx, n, plan)
	case nodes.DeployFail:
		if p.firstReport(n) {
			return p.failed(fmt.Sprintf("image provisioning failed (%s): %s", imageName(d), lastError(n, "no reason given"))), nil
		}
		return p.deploy(ctx, n, plan)
	case nodes.Manageable:
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetProvide})
	case nodes.CleanFail:
		return p.retryCleanFail(ctx, n)
	case nodes.Cleaning, nodes.CleanWait, nodes.Deploying, nodes.DeployWait, nodes.Enroll, nodes.Verifying,
		// deleting: a deploy stuck in wait call-back undeployed (wait).
		nodes.Deleting:
		return p.wait(ctx, n)
	default:
		return p.failed(fmt.Sprintf("Ironic cannot provision node %s in provision state %q", nodeName(p.host), n.ProvisionState)), nil
	}
}

func imageName(d provisioner.ProvisionData) string {
	var parts []string
	if d.Image != nil && d.Image.URL != "" {
		parts = append(parts, "image "+redact.URL(d.Image.URL))
	}
	if d.CustomDeploy != nil && d.CustomDeploy.Method != "" {
		parts = append(parts, "custom deploy "+d.CustomDeploy.Method)
	}
	return strings.Join(parts, ", ")
}

// deploy writes the plan to the node, has Ironic validate it, and asks
// for active.
func (p *ironicHost) deploy(ctx context.Context, n *nodes.Node, plan deployPlan) (provisioner.Result, error) {
	ops := patchOps("/instance_info", n.InstanceInfo, plan.InstanceInfo)
	if n.DeployInterface != plan.DeployInterface {
		ops = append(ops, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/deploy_interface", Value: plan.DeployInterface})
	}
	n, err := p.update(ctx, n, ops)
	if err != nil {
		return p.orBusy(err)
	}
	if msg, err := p.validate(ctx, n); err != nil || msg != "" {
		if err != nil {
			return p.orBusy(err)
		}
		return p.failed(msg), nil
	}
	opts := nodes.ProvisionStateOpts{Target: nodes.TargetActive, DeploySteps: plan.DeploySteps}
	if plan.ConfigDrive != nil {
		opts.ConfigDrive = plan.ConfigDrive
	}
	return p.setState(ctx, n, opts)
}

// validate asks Ironic whether the node can boot and deploy as set.
func (p *ironicHost) validate(ctx context.Context, n *nodes.Node) (string, error) {
	v, err := nodes.Validate(ctx, p.f.client, n.UUID).Extract()
	if err != nil {
		return "", p.classify(err, p.what("validate"))
	}
	var bad []string
	if !v.Boot.Result {
		bad = append(bad, "boot: "+v.Boot.Reason)
	}
	if !v.Deploy.Result {
		bad = append(bad, "deploy: "+v.Deploy.Reason)
	}
	if len(bad) == 0 {
		return "", nil
	}
	return "Ironic refused the node's settings: " + redact.Text(strings.Join(bad, "; ")), nil
}

// Adopt makes Ironic take an already deployed host as active without
// touching it: instance_info from the image, then "adopt" (manageable →
// adopting → active; no power change, nothing written).
func (p *ironicHost) Adopt(ctx context.Context, d provisioner.AdoptData) (provisioner.Result, error) {
	n, err := p.node(ctx)
	if err != nil {
		return p.orBusy(err)
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Active:
		return provisioner.Result{}, nil
	case nodes.Manageable:
		return p.adopt(ctx, n, d)
	case nodes.Available:
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetManage})
	case nodes.AdoptFail:
		if p.firstReport(n) {
			return p.failed("adoption failed: " + lastError(n, "no reason given")), nil
		}
		return p.adopt(ctx, n, d)
	case nodes.InspectFail, nodes.CleanFail, nodes.DeployFail, nodes.Error:
		return p.failed(fmt.Sprintf("Ironic cannot adopt node %s in provision state %q: %s", nodeName(p.host), n.ProvisionState, lastError(n, "no reason given"))), nil
	default:
		return p.wait(ctx, n)
	}
}

func (p *ironicHost) adopt(ctx context.Context, n *nodes.Node, d provisioner.AdoptData) (provisioner.Result, error) {
	img := d.Image
	ii, err := imageInfo(&img)
	if err != nil {
		// Adoption writes nothing: an image without checksum is fine.
		ii, _ = imageInfo(nil)
		ii["image_source"] = img.URL
	}
	if img.URL == "" {
		ii = map[string]any{}
	}
	ops := patchOps("/instance_info", n.InstanceInfo, ii)
	deploy := deployDirect
	if img.IsLiveISO() {
		deploy = deployRamdisk
	}
	if n.DeployInterface != deploy && n.DeployInterface != deployCustomAgent {
		ops = append(ops, nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/deploy_interface", Value: deploy})
	}
	if n, err = p.update(ctx, n, ops); err != nil {
		return p.orBusy(err)
	}
	return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetAdopt})
}

// Deprovision undeploys ("deleted": Ironic powers the host off, then
// cleans as automated_clean says) until the node is available.
func (p *ironicHost) Deprovision(ctx context.Context, d provisioner.DeprovisionData) (provisioner.Result, error) {
	n, err := p.node(ctx)
	if err != nil {
		return p.orBusy(err)
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Available:
		return provisioner.Result{}, nil
	case nodes.Active, nodes.DeployFail, nodes.DeployWait:
		if n, err = p.syncClean(ctx, n, d); err != nil {
			return p.orBusy(err)
		}
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetDeleted})
	case nodes.Manageable:
		if n, err = p.syncClean(ctx, n, d); err != nil {
			return p.orBusy(err)
		}
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetProvide})
	case nodes.Deleting, nodes.Cleaning, nodes.CleanWait, nodes.Deploying, nodes.Enroll, nodes.Verifying, nodes.Adopting:
		return p.wait(ctx, n)
	case nodes.CleanFail:
		return p.retryCleanFail(ctx, n)
	case nodes.Error:
		if p.firstReport(n) {
			return p.failed("deprovisioning failed: " + lastError(n, "no reason given")), nil
		}
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetDeleted})
	case nodes.InspectFail, nodes.AdoptFail:
		return p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetManage})
	default:
		return p.failed(fmt.Sprintf("Ironic cannot deprovision node %s in provision state %q", nodeName(p.host), n.ProvisionState)), nil
	}
}

// syncClean sets automated_clean as the host's cleaning mode says before
// the node is undeployed or provided.
func (p *ironicHost) syncClean(ctx context.Context, n *nodes.Node, d provisioner.DeprovisionData) (*nodes.Node, error) {
	clean := automatedClean(d.AutomatedCleaningMode)
	if n.AutomatedClean != nil && *n.AutomatedClean == clean {
		return n, nil
	}
	return p.update(ctx, n, nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/automated_clean", Value: clean}})
}
